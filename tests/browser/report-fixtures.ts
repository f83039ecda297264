/**
 * Runs the offline report's browser tests open (tests/browser/report.test.ts in Chromium,
 * report-firefox.test.ts in Firefox): a run whose every string a reader sees is hostile, and what
 * the page must look like after showing it.
 */
import { toRunFile } from '../../src/core/runfile/export.ts';
import type { RunFile, SampleRecord } from '../../src/core/run/types.ts';
import { writeFileSync } from 'node:fs';
import { expect } from 'vitest';
import { runCli } from '../helpers/cli.ts';
import { MINIDEV_ARGS } from '../helpers/series-dumps.ts';
import { sharedData } from '../helpers/shared-data.ts';
import { syntheticRunFile, syntheticSamples } from '../robustness/synthetic-run.ts';

export const GPT4O = sharedData('bird', 'predictions', 'TA_output', 'predict_mini_dev_gpt-4-o_cot_SQLite.json');

/** Runs the CLI; a failure fails the test with its stderr. Resolves with its stdout. */
export async function cli(args: string[]): Promise<string> {
  const run = await runCli(args);
  expect(run.code, `${args.join(' ')}\n${run.stderr}`).toBe(0);
  return run.stdout;
}

/**
 * The reports both browsers open, made by the CLI into `at(...)`: the BIRD mini-dev gpt-4o CoT
 * replay run (`gpt4o.run.json`, its `stats` in `gpt4o.stats.json`, its report `gpt4o.html`) and
 * the hostile run (`hostile.run.json`, `hostile.html`).
 */
export async function makeReportFiles(at: (file: string) => string): Promise<void> {
  await cli(['eval', '--predictions', GPT4O, ...MINIDEV_ARGS, '--run-out', at('gpt4o.run.json')]);
  await cli(['stats', '--run', at('gpt4o.run.json'), '--out', at('gpt4o.stats.json')]);
  await cli(['report', '--run', at('gpt4o.run.json'), '--out', at('gpt4o.html')]);
  writeFileSync(at('hostile.run.json'), JSON.stringify(hostileRunFile()));
  await cli(['report', '--run', at('hostile.run.json'), '--out', at('hostile.html')]);
}

export const HOSTILE_NAME = 'run </script><script>window.pwned = 1</script> <!-- \u202Egnp.exe';
export const HOSTILE_SQL =
  "SELECT '</script><script>window.pwned = 2</script>', '<!--', '<img src=x onerror=window.pwned=3>'";
export const HOSTILE_QUESTION =
  'Which <b>hero</b>? <a href="javascript:window.pwned=4">click</a> </script> \u202Eevil\u202C <!--';
export const HOSTILE_DB = 'db"><img src=x onerror="window.pwned=5">';

/** A small run whose every string a reader sees is hostile (run name, SQL, question, error, database, completion). */
export function hostileRunFile(): RunFile {
  const samples: SampleRecord[] = syntheticSamples({ questions: 6, samples: 2, seed: 3 }).map((s) =>
    s.index === 2
      ? {
          ...s,
          ex: 0,
          status: 'error',
          error: `prediction: near "</script>": syntax error <!-- javascript:alert(1)`,
          dbId: HOSTILE_DB,
          sql: HOSTILE_SQL,
          goldSql: 'SELECT 1 -- </script><!--',
          completion: `<think>${HOSTILE_QUESTION}</think>\n\`\`\`sql\n${HOSTILE_SQL}\n\`\`\``,
          reward: 0,
        }
      : s,
  );
  const file = syntheticRunFile(samples, 'hostile');
  return toRunFile({ ...file.run, name: HOSTILE_NAME }, samples, [
    { index: 2, questionId: 2, dbId: HOSTILE_DB, question: HOSTILE_QUESTION, evidence: 'javascript:alert(1) <!--' },
  ]);
}

/**
 * The control of the no-request checks: tries an image and a fetch (run in the page). The report's
 * policy blocks both and reports them as `expectLeaksBlocked` lists; an image also reaches the
 * browser's request layer, where the tests' watch counts it.
 */
export function tryLeaks(): Promise<unknown> {
  new Image().src = 'http://127.0.0.1:9/leak.png';
  return fetch('http://127.0.0.1:9/leak').catch(() => null);
}

/** Until the page's CSP violations are exactly those of `tryLeaks`. */
export async function expectLeaksBlocked(violations: () => Promise<string[]>): Promise<void> {
  await expect
    .poll(async () => (await violations()).sort())
    .toEqual(['connect-src http://127.0.0.1:9/leak', 'img-src http://127.0.0.1:9/leak.png']);
}

/**
 * What the page holds after showing the hostile run (run in the page): no injected script ran
 * (`pwned`), the template's two scripts only, no element made from run content, no markup
 * (`<b>hero</b>`) rendered as such. Expected: `{ pwned: null, scripts: 2, injected: 0, bold: 0 }`.
 */
export function hostileDomCensus(): { pwned: unknown; scripts: number; injected: number; bold: number } {
  return {
    pwned: (window as { pwned?: unknown }).pwned ?? null,
    scripts: document.querySelectorAll('script').length,
    injected: document.querySelectorAll('img, [onerror], a[href^="javascript:"]').length,
    bold: [...document.querySelectorAll('b')].filter((b) => b.textContent === 'hero').length,
  };
}
