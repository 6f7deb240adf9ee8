// Prints the README settings table from the settings' declarations:
// `npx tsx scripts/settings-table.ts` and paste it under "### Settings" in README.md.
import { SETTINGS } from '../src/config.ts';
import { settingsTable } from '../src/platform/config/setting.ts';

process.stdout.write(`${settingsTable(SETTINGS)}\n`);
