import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';

/** axe-core's browser build, read once from the package. */
let source: string | undefined;

/** One rule an audited page broke, with where (CSS selectors of the first offending elements). */
export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  targets: string[];
}

/**
 * Runs axe-core (WCAG 2 A and AA rules, and best practices) on the page as it is now, and answers
 * the violations of impact `serious` or `critical`. The engine is evaluated through the DevTools
 * protocol rather than added as a script tag, so a page's Content-Security-Policy cannot block it.
 */
export async function seriousAxeViolations(page: Page): Promise<AxeViolation[]> {
  source ??= readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
  await page.evaluate(source);
  return page.evaluate(async () => {
    const axe = (window as unknown as { axe: any }).axe;
    const result = await axe.run(document, {
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] },
    });
    return (result.violations as any[])
      .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
      .map((violation) => ({
        id: violation.id as string,
        impact: violation.impact as string | null,
        help: violation.help as string,
        targets: (violation.nodes as any[]).slice(0, 5).map((node) => String(node.target)),
      }));
  });
}
