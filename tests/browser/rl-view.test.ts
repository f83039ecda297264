import { writeFileSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { compareRuns } from '../../src/core/rl/compare.ts';
import { pct } from '../../src/core/rl/explanations.ts';
import { mulberry32 } from '../../src/core/util/rng.ts';
import { computeRunStats, type RunStats } from '../../src/core/rl/run-stats.ts';
import type { RunFile } from '../../src/core/run/types.ts';
import { readJson, runCli, tempFile } from '../helpers/cli.ts';
import { type BirdQuestionRow, minidevQuestions } from '../helpers/shared-data.ts';
import { browserSkipReason, suiteTitle } from './harness.ts';
import { type AppSession, downloadFrom, screenshot, startRun, importBirdMiniDev, useApp } from './workbench-helpers.ts';

const N = 4;
const QUESTIONS = 20;
const STORED = new Set(['superhero', 'student_club', 'toxicology']);

/** Wrong answers of three kinds: two that execute with different results (they vote) and one that fails (it does not). */
const WRONG = ["SELECT 'not the answer'", 'SELECT -1, -2', 'SELEC broken FROM nowhere'];

/**
 * A JSONL predictions file: N samples per question for QUESTIONS questions whose databases are
 * stored (mini-dev's question_id 137/138 left out: the questions file repeats them). Question q
 * gets `correct(q)` copies of its gold SQL, spread over the samples, and wrong SQL elsewhere.
 */
function writePredictions(name: string, correct: (q: number) => number): { file: string; ids: number[] } {
  const all = minidevQuestions();
  const chosen: BirdQuestionRow[] = [];
  for (const db of STORED)
    chosen.push(...all.filter((x) => x.db_id === db && x.question_id !== 137 && x.question_id !== 138).slice(0, 7));
  const qs = chosen.slice(0, QUESTIONS);
  const lines: string[] = [];
  qs.forEach((x, q) => {
    const c = correct(q);
    for (let s = 0; s < N; s++) {
      const right = (s + q) % N < c;
      lines.push(JSON.stringify({ question_id: x.question_id, sql: right ? x.SQL : WRONG[(s + q) % WRONG.length] }));
    }
  });
  const file = tempFile(name);
  writeFileSync(file, lines.join('\n') + '\n');
  return { file, ids: qs.map((x) => x.question_id) };
}

/** Percentage points as the comparison shows them. */
const sign = (v: number) => `${v > 0 ? '+' : ''}${v.toFixed(2)}`;

async function shownStat(page: Page, id: string): Promise<string> {
  return ((await page.locator(`[data-stat="${id}"] [data-testid="stat-value"]`).textContent()) ?? '').trim();
}

async function exportedRun(page: Page, runId: string): Promise<RunFile> {
  await page.getByTestId('nav-runs').click();
  return JSON.parse((await downloadFrom(page, `[data-run-id="${runId}"] [data-testid="export-run"]`)).text) as RunFile;
}

/**
 * The RL lens in the browser: a replay run with n = 4 samples per question on BIRD mini-dev,
 * its RL view checked against statistics computed here in Node from the samples the app stored
 * (read back through the run export), its exports, and the comparison with a second run.
 */
describe.skipIf(browserSkipReason())(suiteTitle('the RL view and run comparison'), () => {
  let { server, page } = {} as AppSession;
  useApp((s) => ({ server, page } = s), { hash: '#/datasets' });
  let runA: string;
  let fileA: RunFile;
  let stats: RunStats;

  beforeAll(async () => {
    await importBirdMiniDev(page);
  });

  it('shows pass@1, pass@4, maj@4 and the GRPO shares of a 4-sample run as computed from its stored samples', async () => {
    const { file, ids } = writePredictions('rollouts-a.jsonl', (q) => q % (N + 1));
    const run = await startRun(page, { datasetName: 'BIRD mini-dev', predictions: file, name: 'checkpoint A' });
    expect(run.error).toBeNull();
    runA = run.runId!;
    await page.getByTestId('open-rl').click();
    await page.locator('[data-testid="rl-page"][data-loaded="true"]').waitFor();
    expect(page.url()).toMatch(/#\/run\/[^/]+\/rl$/);

    fileA = await exportedRun(page, runA);
    expect(fileA.samples).toHaveLength(QUESTIONS * N);
    expect(new Set(fileA.samples.map((s) => s.questionId))).toEqual(new Set(ids));
    stats = computeRunStats(fileA.samples, { rng: mulberry32(0) });
    const o = stats.overall;
    expect(stats.ks).toEqual([1, 2, 3, 4]);
    // The design of the file, checked by hand (q % 5 correct samples: 0..4, four questions each).
    const correct = new Map<number, number>();
    for (const s of fileA.samples) correct.set(s.questionId, (correct.get(s.questionId) ?? 0) + s.ex);
    const per = [...correct.values()];
    expect(o.passAtK[1]).toBeCloseTo(per.reduce((a, c) => a + c / N, 0) / QUESTIONS, 12);
    expect(o.passAtK[4]).toBeCloseTo(per.filter((c) => c > 0).length / QUESTIONS, 12);
    expect(o.zeroVarianceShare).toBeCloseTo(per.filter((c) => c === 0 || c === N).length / QUESTIONS, 12);
    expect(o.frontierShare).toBeCloseTo(per.filter((c) => c > 0 && c < N).length / QUESTIONS, 12);

    await page.goto(`${server.url}#/run/${encodeURIComponent(runA)}/rl`);
    await page.locator('[data-testid="rl-page"][data-loaded="true"]').waitFor();
    expect(await page.getByTestId('rl-n').textContent()).toBe('n = 4');
    expect(await shownStat(page, 'pass_at_1')).toBe(pct(o.passAtK[1]!));
    expect(await shownStat(page, 'pass_at_4')).toBe(pct(o.passAtK[4]!));
    expect(await shownStat(page, 'maj_at_4')).toBe(pct(o.majAtK[4]!));
    expect(await shownStat(page, 'zero_variance_share')).toBe(pct(o.zeroVarianceShare));
    expect(await shownStat(page, 'frontier_share')).toBe(pct(o.frontierShare));
    expect(await shownStat(page, 'best_of_n_oracle')).toBe(pct(o.passAtK[4]!));
    for (const k of stats.ks) {
      const row = page.locator(`[data-testid="passk-table"] tr[data-k="${k}"]`);
      expect(await row.locator('[data-col="pass"]').textContent()).toBe(pct(o.passAtK[k]!));
      expect(await row.locator('[data-col="maj"]').textContent()).toBe(pct(o.majAtK[k]!));
    }
    // Each statistic carries its one-line explanation, with the run's value in it.
    expect(await page.locator('[data-stat="zero_variance_share"] .why').textContent()).toBe(
      `${pct(o.zeroVarianceShare)} of prompts give GRPO no gradient: every sample got the same reward.`,
    );
    expect(await page.locator('[data-testid="prompt-table"] tbody tr').count()).toBe(QUESTIONS);
    const frontierKeys = stats.prompts.filter((p) => p.frontier).map((p) => p.key);
    await page.getByTestId('prompt-filter').selectOption('frontier');
    expect(
      await page
        .locator('[data-testid="prompt-table"] tbody tr')
        .evaluateAll((trs) => trs.map((tr) => (tr as HTMLElement).dataset.key)),
    ).toEqual(frontierKeys);
    await page.getByTestId('prompt-filter').selectOption('all');
    await page.locator('[data-testid="rl-page"] canvas').nth(4).waitFor();
    await screenshot(page, 'rl-view.png', true);
  });

  it('exports per-prompt statistics (CSV, JSON) and the frontier prompts (JSONL)', async () => {
    const csv = await downloadFrom(page, '[data-testid="rl-export-csv"]');
    expect(csv.name).toMatch(/\.csv$/);
    expect(csv.text.trimEnd().split('\r\n')).toHaveLength(QUESTIONS + 1);
    const json = JSON.parse((await downloadFrom(page, '[data-testid="rl-export-json"]')).text) as {
      question_id: number;
      pass_rate: number;
    }[];
    expect(json.map((p) => [p.question_id, p.pass_rate])).toEqual(stats.prompts.map((p) => [p.questionId, p.passRate]));
    const frontier = (await downloadFrom(page, '[data-testid="rl-export-frontier"]')).text
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as { question_id: number; question: string });
    expect(frontier.map((f) => f.question_id)).toEqual(
      stats.prompts.filter((p) => p.frontier).map((p) => p.questionId),
    );
    expect(frontier.every((f) => f.question.length > 0)).toBe(true);

    // The run statistics JSON is what the CLI's `stats --out` writes for the exported run file.
    const shown = JSON.parse((await downloadFrom(page, '[data-testid="rl-export-stats"]')).text) as Record<
      string,
      unknown
    >;
    const runFile = tempFile('run-a.json');
    writeFileSync(runFile, JSON.stringify(fileA));
    const out = tempFile('stats.json');
    const cli = await runCli(['stats', '--run', runFile, '--out', out]);
    expect(cli.code, cli.stderr).toBe(0);
    const want = readJson<Record<string, unknown>>(out);
    for (const key of [
      'questions',
      'samples_per_question',
      'pass_at_k',
      'maj_at_k',
      'zero_variance_share',
      'frontier_share',
      'best_of_n',
      'by_difficulty',
    ]) {
      expect(shown[key], key).toEqual(want[key]);
    }
  }, 120_000);

  it('compares a second checkpoint: fixed / broken / both counts, EX difference and McNemar p as computed from both runs', async () => {
    const { file } = writePredictions('rollouts-b.jsonl', (q) =>
      q % 2 ? Math.min(N, (q % (N + 1)) + 2) : Math.max(0, (q % (N + 1)) - 1),
    );
    const run = await startRun(page, { datasetName: 'BIRD mini-dev', predictions: file, name: 'checkpoint B' });
    expect(run.error).toBeNull();
    const fileB = await exportedRun(page, run.runId!);
    const want = compareRuns(fileA, fileB, { resamples: 10_000, makeRng: () => mulberry32(0) });

    await page.goto(`${server.url}#/compare/${encodeURIComponent(runA)}/${encodeURIComponent(run.runId!)}`);
    await page
      .locator('[data-testid="compare-page"][data-ready="true"] [data-testid="compare-result"][data-drawn="true"]')
      .waitFor();
    const total = page.locator('[data-testid="compare-by-difficulty"] tr[data-bucket="total"]');
    for (const c of ['fixed', 'broken', 'both_right', 'both_wrong'] as const) {
      expect(await total.locator(`[data-col="${c}"]`).textContent()).toBe(String(want.overall.counts[c]));
    }
    const o = want.overall;
    expect(await total.locator('[data-col="ex_delta"]').textContent()).toBe(sign(o.exDelta));
    expect(await total.locator('[data-col="mcnemar_p"]').textContent()).toBe(
      o.mcnemarP < 1e-4 ? o.mcnemarP.toExponential(2) : o.mcnemarP.toFixed(4),
    );
    expect(await page.locator('[data-testid="compare-by-database"] tbody tr').count()).toBe(
      Object.keys(want.byDb).length,
    );
    expect(o.counts.fixed).toBeGreaterThan(0);
    expect(o.counts.broken).toBeGreaterThan(0);
    expect(o.exDelta).not.toBe(0);
    expect(await page.locator('[data-stat="ci95"] .value').textContent()).toBe(
      `[${sign(o.ci95[0])}, ${sign(o.ci95[1])}]`,
    );
    expect(await page.locator('[data-testid="compare-warnings"] li').allTextContents()).toEqual(
      want.warnings.map((w) => `⚠ ${w}`),
    );
    await page.locator('[data-testid="compare-result"] canvas').waitFor();
    await screenshot(page, 'rl-compare.png', true);

    // The comparison JSON is what the CLI's `compare --out` writes for the two exported run files.
    const shown = JSON.parse((await downloadFrom(page, '[data-testid="compare-export"]')).text) as Record<
      string,
      unknown
    >;
    const [a, b, out] = [tempFile('a.json'), tempFile('b.json'), tempFile('compare.json')];
    writeFileSync(a, JSON.stringify(fileA));
    writeFileSync(b, JSON.stringify(fileB));
    const cli = await runCli(['compare', a, b, '--out', out]);
    expect(cli.code, cli.stderr).toBe(0);
    const cliJson = readJson<Record<string, unknown>>(out);
    for (const key of [
      'questions',
      'counts',
      'ex_delta',
      'ci95',
      'mcnemar_p',
      'by_difficulty',
      'by_db',
      'warnings',
      'per_question',
    ]) {
      expect(shown[key], key).toEqual(cliJson[key]);
    }
  }, 120_000);
});
