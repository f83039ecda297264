import { beforeAll, describe, expect, it } from 'vitest';
import { reusable, reuseKey } from '../../src/core/run/reuse.ts';
import type { RunFile, SampleRecord } from '../../src/core/run/types.ts';
import { cacheableResult } from '../../src/core/run/verdict-cache.ts';
import { sharedData } from '../helpers/shared-data.ts';
import { browserSkipReason, suiteTitle } from './harness.ts';
import { type AppSession, downloadFrom, importBirdMiniDev, screenshot, startRun, useApp } from './workbench-helpers.ts';

const PREDICTIONS = sharedData('bird', 'predictions', 'TA_output', 'predict_mini_dev_gpt-35-turbo_cot_SQLite.json');

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

  async function replay(name: string): Promise<{ runId: string; file: RunFile; header: string }> {
    const run = await startRun(page, {
      datasetName: 'BIRD mini-dev',
      predictions: PREDICTIONS,
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
    expect(results(second.file.samples)).toEqual(results(first.samples));
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
});
