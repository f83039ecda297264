/** axe-core run inside the page: the serious and critical violations of the screen shown now. */
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';

const require = createRequire(import.meta.url);
const AXE_SOURCE = (require('axe-core') as { source: string }).source;

export interface AxeFinding {
  id: string;
  impact: string;
  help: string;
  /** Up to three offending elements (their selectors and HTML). */
  nodes: string[];
}

/** Injects axe once per document and returns the violations whose impact is serious or critical. */
export async function seriousViolations(page: Page): Promise<AxeFinding[]> {
  // Evaluated through the DevTools protocol: the app's CSP (script-src 'self') forbids an inline script tag.
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(`${AXE_SOURCE}\n;void 0`);
  return page.evaluate(async () => {
    const axe = (
      window as unknown as {
        axe: {
          run: (
            ctx: Document,
            opts: object,
          ) => Promise<{
            violations: {
              id: string;
              impact: string | null;
              help: string;
              nodes: { target: unknown[]; html: string }[];
            }[];
          }>;
        };
      }
    ).axe;
    const { violations } = await axe.run(document, { resultTypes: ['violations'] });
    return violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => ({
        id: v.id,
        impact: v.impact!,
        help: v.help,
        nodes: v.nodes.slice(0, 3).map((n) => `${n.target.join(' ')}: ${n.html.slice(0, 160)}`),
      }));
  });
}
