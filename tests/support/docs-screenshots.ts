import { copyFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Where the docs site keeps the dashboard's pictures (content/getting-started/dashboard.md). */
const DOCS_IMAGES = fileURLToPath(new URL('../../apps/docs/public/images/dashboard', import.meta.url));

/** The screenshots the dashboard's docs page shows, by file name. */
const SHOWN = new Set([
  'overview-1280-light.png',
  'executions-1280-dark.png',
  'execution-390-light.png',
  'workflow-1280-light.png',
  'weights-1280-light.png',
]);

/**
 * Copies a browser test's screenshot into the docs site's images when the page shows it and the
 * run asks for it (SWITCHYARD_DOCS_SCREENSHOTS=1), so the page shows what a test drove. Other runs
 * leave the committed pictures alone.
 */
export function keepForDocs(screenshot: string): void {
  const name = path.basename(screenshot);
  if (process.env.SWITCHYARD_DOCS_SCREENSHOTS === '1' && SHOWN.has(name)) {
    copyFileSync(screenshot, path.join(DOCS_IMAGES, name));
  }
}
