/**
 * RL scale in the app: a run file of 100,032 samples (1,563 questions x 64, made in
 * the test) imported through the Runs page, its item explorer opened, scrolled and filtered, its
 * RL view and its comparison with a second run checked against the core's functions on the same
 * samples in Node (the straightforward implementation), and the run exported back from parts.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { compareRuns } from '../../src/core/rl/compare.ts';
import { compareJson } from '../../src/core/rl/compare-report.ts';
import { mulberry32 } from '../../src/core/util/rng.ts';
import { computeRunStats } from '../../src/core/rl/run-stats.ts';
import { statsJson } from '../../src/core/rl/stats-report.ts';
import { runFileJson } from '../../src/core/runfile/export.ts';
import { parseRunFile } from '../../src/core/runfile/run-file.ts';
import type { RunFile } from '../../src/core/run/types.ts';
import { scoreOf } from '../../src/core/run/score-run.ts';
import { syntheticRunFile, syntheticSamples, writeRunFile } from '../robustness/synthetic-run.ts';
import { browserSkipReason, suiteTitle } from './harness.ts';
import { type AppSession, downloadFrom, screenshot, useApp } from './workbench-helpers.ts';

const QUESTIONS = 1563;
const N = 64;
const TOTAL = QUESTIONS * N;

/**
 * Equal JSON, numbers to 1e-12 relative: Chromium's V8 and Node's may differ in the last bit of
 * Math.exp, log and pow (maj@k's expected curve, McNemar's tail), nothing else may differ.
 */
function expectSameNumbers(got: unknown, want: unknown, at = '$'): void {
  if (typeof want === 'number' && typeof got === 'number') {
    expect(Math.abs(got - want), `${at}: ${got} vs ${want}`).toBeLessThanOrEqual(1e-12 * Math.max(1, Math.abs(want)));
  } else if (want !== null && typeof want === 'object') {
    expect(got !== null && typeof got === 'object', at).toBe(true);
    expect(Object.keys(got as object).sort(), at).toEqual(Object.keys(want).sort());
    for (const [k, v] of Object.entries(want)) expectSameNumbers((got as Record<string, unknown>)[k], v, `${at}.${k}`);
  } else {
    expect(got, at).toEqual(want);
  }
}

function named(file: RunFile, id: string, name: string): RunFile {
  return { ...file, run: { ...file.run, id, name } };
}

async function importRun(page: Page, file: string, name: string): Promise<void> {
  await page.getByTestId('import-run').setInputFiles(file);
  const message = page.getByTestId('import-run-message');
  await message
    .filter({ hasText: `Imported run "${name}"` })
    .waitFor({ timeout: 60_000 })
    .catch(async (err: unknown) => {
      throw new Error(
        `${path.basename(file)} was not imported: ${await message.textContent().catch(() => '(no message)')} (${String(err)})`,
      );
    });
}

describe.skipIf(browserSkipReason())(
  suiteTitle('the app at 100,000 samples: import, explorer, RL view, comparison, export'),
  () => {
    let { server, page, watch } = {} as AppSession;
    useApp((s) => ({ server, page, watch } = s));
    const a = named(
      syntheticRunFile(syntheticSamples({ questions: QUESTIONS, samples: N, seed: 11 })),
      'scale-a',
      'checkpoint A 100k',
    );
    // B: the same questions with 4 samples each (a second checkpoint; different n is allowed and warned about).
    const b = named(
      syntheticRunFile(syntheticSamples({ questions: QUESTIONS, samples: 4, seed: 12 })),
      'scale-b',
      'checkpoint B',
    );

    beforeAll(async () => {
      const dir = mkdtempSync(path.join(tmpdir(), 'wb-scale-'));
      writeRunFile(path.join(dir, 'a.run.json'), a);
      writeRunFile(path.join(dir, 'b.run.json'), b);
      // 100,000 samples on a loaded 2-core machine: every wait gets a minute (nothing here is timed).
      page.setDefaultTimeout(60_000);
      await page.goto(server.url + '#/runs');
      await importRun(page, path.join(dir, 'a.run.json'), a.run.name);
      await importRun(page, path.join(dir, 'b.run.json'), b.run.name);
    }, 120_000);

    it('opens the explorer on the first page, then lists, scrolls to and filters all 100,032 samples', async () => {
      const options = page.locator('[data-testid="item-list"] [role="option"]');
      await page.goto(`${server.url}#/run/${a.run.id}/items`);
      await options.first().waitFor();
      expect(await options.first().getAttribute('aria-setsize')).toBe(String(TOTAL));
      await page.locator('[data-testid="explorer"][data-complete="true"]').waitFor({ timeout: 60_000 });
      expect(await page.getByTestId('filter-count').textContent()).toContain(
        `${TOTAL.toLocaleString('en')} of ${TOTAL.toLocaleString('en')} items`,
      );
      expect(await options.count()).toBeLessThan(60);
      await page.getByTestId('item-list').focus();
      await page.keyboard.press('End');
      await page.keyboard.press('Enter');
      await page.locator(`[data-testid="item-detail"][data-index="${QUESTIONS - 1}"]`).waitFor();
      const count = async () =>
        Number((await page.getByTestId('filter-count').textContent())!.split(' of ')[0]!.replace(/,/g, ''));
      await page.getByTestId('filter-outcome').selectOption('error');
      await expect.poll(count).toBe(a.samples.filter((s) => s.status === 'error').length);
      await page.getByTestId('filter-db').selectOption('db3');
      await expect.poll(count).toBe(a.samples.filter((s) => s.status === 'error' && s.dbId === 'db3').length);
      await page.getByRole('button', { name: 'clear filters' }).click();
      await expect.poll(count).toBe(TOTAL);
    }, 90_000);

    it('shows the RL statistics that computeRunStats gives on the same samples (computed in the analysis worker)', async () => {
      const workers: string[] = [];
      page.on('worker', (w) => void workers.push(w.url()));
      await page.goto(`${server.url}#/run/${a.run.id}/rl`);
      await page.locator('[data-testid="rl-page"][data-loaded="true"]').waitFor({ timeout: 60_000 });
      expect(await page.getByTestId('rl-n').textContent()).toBe(`n = ${N}`);
      expect(
        workers.some((u) => /analysis\.worker/.test(u)),
        workers.join(', '),
      ).toBe(true);
      const ref = computeRunStats(a.samples, { rng: mulberry32(0) });
      expect(await page.getByTestId('prompt-count').textContent()).toContain(
        `${QUESTIONS} of ${QUESTIONS} prompts, the first 300 listed`,
      );
      const shown = JSON.parse((await downloadFrom(page, '[data-testid="rl-export-stats"]')).text) as Record<
        string,
        unknown
      >;
      const want = statsJson(ref, {
        runName: a.run.name,
        runId: a.run.id,
        rewardFormula: a.run.config.rewardFormula,
        seed: 0,
      });
      expectSameNumbers(shown, JSON.parse(JSON.stringify(want)));
      const prompts = JSON.parse((await downloadFrom(page, '[data-testid="rl-export-json"]')).text) as {
        question_id: number;
        pass_at_64: number;
        maj_at_8: number;
      }[];
      expect(prompts).toHaveLength(QUESTIONS);
      expectSameNumbers(
        prompts.map((p) => [p.question_id, p.pass_at_64, p.maj_at_8]),
        ref.prompts.map((p) => [p.questionId, p.passAtK[64], p.majAtK[8]]),
      );
      await page.locator('[data-testid="prompt-table"] tbody tr').nth(299).waitFor();
      await screenshot(page, 'rl-view-100k.png', true);
    }, 90_000);

    it('compares the two runs as compareRuns does on the same samples (bootstrap in the worker)', async () => {
      await page.goto(`${server.url}#/compare/${a.run.id}/${b.run.id}`);
      await page
        .locator('[data-testid="compare-page"][data-ready="true"] [data-testid="compare-result"][data-drawn="true"]')
        .waitFor({ timeout: 60_000 });
      const want = compareRuns(a, b, { resamples: 10_000, makeRng: () => mulberry32(0) });
      const shown = JSON.parse((await downloadFrom(page, '[data-testid="compare-export"]')).text) as Record<
        string,
        unknown
      >;
      expectSameNumbers(
        shown,
        JSON.parse(
          JSON.stringify(compareJson(want, { runA: a.run.name, runB: b.run.name, seed: 0, resamples: 10_000 })),
        ),
      );
      await screenshot(page, 'rl-compare-100k.png', true);
    }, 90_000);

    it('exports the 100,032-sample run file from parts, byte for byte the one-string export', async () => {
      await page.goto(server.url + '#/runs');
      const got = await downloadFrom(page, `[data-run-id="${a.run.id}"] [data-testid="export-run"]`);
      expect(got.name).toBe('checkpoint_A_100k.run.json');
      // What the app stored is the validated file (parseRunFile: its own key order per sample), with
      // the score the run lists show, computed from its samples at import (the file had none).
      const parsed = parseRunFile(JSON.stringify(a), 'a.run.json');
      expect(parsed.run.score).toBeUndefined();
      const stored = runFileJson({
        ...parsed,
        run: { ...parsed.run, score: scoreOf(parsed.samples, parsed.run.config.metrics) },
      });
      expect(got.text.length).toBe(stored.length);
      expect(got.text === stored).toBe(true);
      expect(watch.problems).toEqual([]);
    }, 90_000);
  },
);
