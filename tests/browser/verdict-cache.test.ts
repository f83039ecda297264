import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import initSqlJs from 'sql.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { reusable, reuseKey } from '../../src/core/run/reuse.ts';
import type { RunFile, SampleRecord } from '../../src/core/run/types.ts';
import { cacheableResult } from '../../src/core/run/verdict-cache.ts';
import { minidevFiles, minidevQuestions, sharedData } from '../helpers/shared-data.ts';
import { browserSkipReason, suiteTitle } from './harness.ts';
import { type AppSession, downloadFrom, importBirdMiniDev, screenshot, startRun, useApp } from './workbench-helpers.ts';

const PREDICTIONS = sharedData('bird', 'predictions', 'TA_output', 'predict_mini_dev_gpt-35-turbo_cot_SQLite.json');

/** Mini-dev question 719 (superhero) and its gold. */
const QUESTION = 719;
const GOLD = readFileSync(minidevFiles().gold, 'utf8')
  .split('\n')
  [minidevQuestions().findIndex((q) => q.question_id === QUESTION)]!.split('\t')[0]!;

/** A JSON Lines predictions file: `sqls` as samples of question 719. */
function samplesFile(sqls: readonly string[]): string {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'wb-vcache-browser-')), 'samples.jsonl');
  writeFileSync(file, sqls.map((sql) => JSON.stringify({ question_id: QUESTION, sql })).join('\n') + '\n');
  return file;
}

/** SQLite's own error for `sql` on the superhero database (sql.js in Node, outside the app), or null. */
async function sqliteError(sql: string): Promise<string | null> {
  const SQL = await initSqlJs();
  const db = new SQL.Database(readFileSync(sharedData('bird', 'databases', 'superhero', 'superhero.sqlite')));
  try {
    db.exec(sql);
    return null;
  } catch (err) {
    return (err as Error).message;
  } finally {
    db.close();
  }
}

/**
 * Per-item results without what says how the verdict was obtained: `goldReused` (a verdict from
 * the cache ran no gold) is the one field allowed to differ; the time is the first execution's.
 */
const results = (samples: readonly SampleRecord[]) =>
  samples.map(({ goldReused: _g, ...rest }) => rest).sort((a, b) => a.index - b.index || a.sample - b.sample);

/**
 * The app's verdict cache (IndexedDB, the run recipe's `verdictCache`): the same predictions file
 * replayed twice on real BIRD mini-dev gives identical per-item results, and the second run's
 * verdicts come from the cache, as its header on the dashboard says.
 */
describe.skipIf(browserSkipReason())(suiteTitle('the verdict cache in the app (BIRD mini-dev)'), () => {
  let { server, page } = {} as AppSession;
  useApp((s) => ({ server, page } = s), { hash: '#/datasets' });
  let first: RunFile;

  beforeAll(async () => {
    await importBirdMiniDev(page);
  }, 180_000);

  async function replay(
    name: string,
    predictions = PREDICTIONS,
  ): Promise<{ runId: string; file: RunFile; header: string }> {
    const run = await startRun(page, {
      datasetName: 'BIRD mini-dev',
      predictions,
      name,
      onlyStored: true,
    });
    expect(run.error).toBeNull();
    const header = (await page.locator('[data-testid="dashboard"] p.muted').first().innerText()).replace(/\s+/g, ' ');
    await page.getByTestId('nav-runs').click();
    const exported = await downloadFrom(page, `[data-run-id="${run.runId}"] [data-testid="export-run"]`);
    return { runId: run.runId!, file: JSON.parse(exported.text) as RunFile, header };
  }

  it('a file replayed twice: identical per-item results, the second run from the cache, as its header says', async () => {
    const one = await replay('first');
    first = one.file;
    expect(first.samples).toHaveLength(140);
    expect(one.header).not.toContain('from the cache');
    expect(first.run.executions).toMatchObject({ fromCache: 0 });

    const second = await replay('second');
    // What the cache may answer: one verdict per distinct item (reuse copies the others) whose
    // texts are deterministic and read-only and whose result is SQLite's own (never a write).
    const cacheable = new Set(
      first.samples
        .filter((s) => cacheableResult(s) && reusable({ ...s, predSql: s.sql, goldSql: s.goldSql }))
        .map((s) => reuseKey({ ...s, predSql: s.sql, goldSql: s.goldSql })),
    ).size;
    expect(cacheable).toBeGreaterThan(100);
    expect(second.file.run.executions).toMatchObject({
      fromCache: cacheable,
      executed: 140 - cacheable - second.file.run.executions!.reused,
    });
    expect(second.header).toContain(`${cacheable} verdicts from the cache`);
    // The same verdicts; a verdict from the cache keeps the time of the execution it came from
    // (the items the cache may not hold, whose texts call a date or time function, ran again).
    const cached = (s: SampleRecord) => cacheableResult(s) && reusable({ ...s, predSql: s.sql, goldSql: s.goldSql });
    const timeless = (samples: readonly SampleRecord[]) => results(samples).map(({ elapsedMs: _e, ...rest }) => rest);
    expect(timeless(second.file.samples)).toEqual(timeless(first.samples));
    expect(results(second.file.samples.filter(cached))).toEqual(results(first.samples.filter(cached)));
    expect(second.file.samples.filter((s) => s.goldReused).length).toBeGreaterThanOrEqual(cacheable);

    await page.goto(`${server.url}#/run/${second.runId}`);
    await page.locator('[data-testid="dashboard"][data-loaded="true"]').waitFor();
    expect(await page.getByTestId('from-cache').textContent()).toBe(`${cacheable} verdicts from the cache`);
    await page.setViewportSize({ width: 1400, height: 1000 });
    await screenshot(page, 'verdict-cache-dashboard-1400.png');
    await page.setViewportSize({ width: 390, height: 844 });
    await screenshot(page, 'verdict-cache-dashboard-390.png');
    await page.setViewportSize({ width: 1366, height: 768 });
  });

  it('unticked, a third run executes every item again and gives the same results', async () => {
    await page.getByTestId('nav-runs').click();
    await page.getByTestId('run-verdict-cache').uncheck();
    const form = page.getByTestId('run-verdict-cache').locator('xpath=ancestor::fieldset');
    for (const [width, height] of [
      [1400, 1000],
      [390, 844],
    ] as const) {
      await page.setViewportSize({ width, height });
      await form.scrollIntoViewIfNeeded();
      await screenshot(page, `verdict-cache-run-form-${width}.png`);
    }
    await page.setViewportSize({ width: 1366, height: 768 });
    const third = await replay('third, without the cache');
    expect(third.header).not.toContain('from the cache');
    expect(third.file.run.config.verdictCache).toBe(false);
    expect(third.file.run.executions).toMatchObject({ fromCache: 0 });
    const timeless = (samples: readonly SampleRecord[]) => results(samples).map(({ elapsedMs: _e, ...rest }) => rest);
    expect(timeless(third.file.samples)).toEqual(timeless(first.samples));
  });

  it("a trailing U+00A0 / U+3000 gets SQLite's error, never the clean text's verdict (by reuse or from the cache), and strftime('%S') is never taken from the cache", async () => {
    await page.getByTestId('nav-runs').click();
    await page.getByTestId('run-verdict-cache').check();
    expect(await sqliteError(GOLD)).toBeNull();
    const nbsp = await sqliteError(`${GOLD}\u00a0`);
    const ideographic = await sqliteError(`${GOLD}\u3000`);
    expect(nbsp).not.toBeNull();
    expect(ideographic).not.toBeNull();
    const clock = "SELECT strftime('%S')";
    const samples = (file: RunFile) =>
      file.samples.filter((s) => s.questionId === QUESTION).sort((a, b) => a.sample - b.sample);

    // One run: the clean gold and the same text with a trailing U+00A0 (reuse would join them), and the clock.
    const one = await replay('trailing spaces, first', samplesFile([GOLD, `${GOLD}\u00a0`, clock]));
    expect(samples(one.file).map((s) => [s.sample, s.ex, s.status, s.error ?? null])).toEqual([
      [0, 1, 'ok', null],
      [1, 0, 'error', `prediction: ${nbsp}`],
      [2, 0, 'ok', null],
    ]);
    expect(one.file.run.executions!.reused).toBe(0);

    // Again, with the cache: the clean text comes from it; a trailing U+3000 (whose old key was
    // the clean text's) and the clock are executed.
    const two = await replay('trailing spaces, second', samplesFile([`${GOLD}\u3000`, GOLD, clock]));
    expect(samples(two.file).map((s) => [s.sample, s.ex, s.status, s.error ?? null])).toEqual([
      [0, 0, 'error', `prediction: ${ideographic}`],
      [1, 1, 'ok', null],
      [2, 0, 'ok', null],
    ]);
    expect(two.file.run.executions).toMatchObject({ fromCache: 1, executed: 2, reused: 0 });
  });
});
