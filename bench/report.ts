/**
 * The offline report at RL scale (docs/report.md), part of the browser keys:
 *
 * - `report_bytes_per_sample`: the report of a 100,000-sample RL-shaped run (500 BIRD mini-dev
 *   questions x 200 samples of real SQL, each with a completion of its own:
 *   tests/helpers/large-run.ts), built by the builder the CLI and the app share, its HTML bytes
 *   over its samples (target: 40 MiB per 100,000 samples);
 * - `report_open_ms_100k`: that file opened from disk in headless Chromium with the network
 *   blocked, from navigation to its dashboard showing the whole run (`data-loaded`), on the
 *   page's clock (a MutationObserver installed before the page loads); the median of the rounds.
 *
 * The page's own marks (payload decoded, unzipped, parsed) go to the details. `--quick`: 500
 * questions x 16 samples (8,000), under the same keys.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { productName, zlibGzip } from '../src/adapters/node/report-files.ts';
import { reportPayload } from '../src/core/report/payload.ts';
import { buildReportHtml } from '../src/core/report/report-file.ts';
import { ensureReportTemplate } from '../scripts/build-report.mjs';
import { largeRunFile } from '../tests/helpers/large-run.ts';
import { openReport, otherRequests } from '../tests/browser/report-helpers.ts';
import { readFileSync } from 'node:fs';

declare global {
  interface Window {
    __reportShownAt?: number;
  }
}

/** Samples per question of `--quick`'s run (8,000 samples). */
const QUICK_PER_QUESTION = 16;

/** Plain JavaScript, installed before the page's scripts: when the dashboard shows the whole run. */
const SHOWN = `(() => {
  const mo = new MutationObserver(() => {
    if (window.__reportShownAt !== undefined) return;
    if (document.querySelector('[data-testid="dashboard"][data-loaded="true"]')) {
      window.__reportShownAt = performance.now();
      mo.disconnect();
    }
  });
  mo.observe(document, { subtree: true, childList: true, attributes: true, attributeFilter: ['data-loaded'] });
})();`;

export async function measureReport(
  browser: Browser,
  tmp: string,
  rounds: number,
  log: (m: string) => void,
  quick = false,
): Promise<{ keys: Record<string, number>; meta: Record<string, unknown> }> {
  const dir = mkdtempSync(path.join(tmp, 'report-'));
  try {
    const file = largeRunFile(quick ? QUICK_PER_QUESTION : undefined);
    log(`report: the ${file.samples.length}-sample run and its report (the builder of the CLI and the app)...`);
    const template = readFileSync(await ensureReportTemplate(), 'utf8');
    const runJsonBytes = Buffer.byteLength(JSON.stringify(file));
    const t0 = performance.now();
    const html = await buildReportHtml(
      template,
      reportPayload({
        runs: [file],
        compare: false,
        product: `${productName()} (bench)`,
        createdAt: new Date().toISOString(),
      }),
      zlibGzip,
    );
    const buildMs = performance.now() - t0;
    const out = path.join(dir, 'large.report.html');
    writeFileSync(out, html);
    const bytes = Buffer.byteLength(html);
    const opens: { shownMs: number; marks: Record<string, number> }[] = [];
    for (let r = 0; r < rounds; r++) {
      log(`report: opening it from disk (${r + 1}/${rounds})...`);
      const opened = await openReport(browser, out, { initScript: SHOWN });
      try {
        await opened.page.locator('[data-testid="dashboard"][data-loaded="true"]').waitFor({ timeout: 300_000 });
        const times = await opened.page.evaluate(() => ({
          shown: window.__reportShownAt ?? null,
          marks: Object.fromEntries(performance.getEntriesByType('mark').map((m) => [m.name, m.startTime])),
        }));
        if (times.shown === null) throw new Error('the dashboard was not seen by the page observer');
        if (otherRequests(opened).length > 0 || (await opened.violations()).length > 0)
          throw new Error(`the report made requests: ${otherRequests(opened).join(', ')}`);
        opens.push({ shownMs: times.shown, marks: times.marks });
      } finally {
        await opened.context.close();
      }
    }
    const sorted = opens.map((o) => o.shownMs).sort((a, b) => a - b);
    return {
      keys: {
        report_bytes_per_sample: bytes / file.samples.length,
        report_open_ms_100k: sorted[Math.floor(sorted.length / 2)]!,
        report_bytes_100k: bytes,
        report_build_ms_100k: buildMs,
      },
      meta: {
        report_samples: file.samples.length,
        report_run_file_json_bytes: runJsonBytes,
        report_opens: opens.map((o) => ({
          shown_ms: Math.round(o.shownMs),
          ...Object.fromEntries(Object.entries(o.marks).map(([k, v]) => [k, Math.round(v)])),
        })),
      },
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
