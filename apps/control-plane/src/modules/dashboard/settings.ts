import { optionalTextSetting } from '@switchyard/shared/settings';
import { setting } from '../../platform/config/setting.ts';

/** Where the web dashboard's built files are (config `dashboard:`). */
export const dashboardSettings = {
  dir: setting({
    key: 'dashboard.dir',
    env: 'SWITCHYARD_DASHBOARD_DIR',
    schema: optionalTextSetting(),
    default: undefined,
    fromDatabase: false,
    meaning:
      'Directory of the built dashboard served at /ui/; unset means apps/dashboard/dist of the checkout or image the control plane runs from.',
  }),
};
