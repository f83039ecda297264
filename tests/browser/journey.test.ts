import { readFileSync, writeFileSync } from 'node:fs';
import { duck } from '../helpers/duck.ts';
import { beforeAll, describe, expect, it } from 'vitest';
import { readJson, runCli, tempFile } from '../helpers/cli.ts';
import { sharedData } from '../helpers/shared-data.ts';
import { seriousViolations } from './axe-check.ts';
import { browserSkipReason, suiteTitle } from './harness.ts';
import { type AppSession, closeAppAfter, importDataset, officialCells, openApp, screenshot, startRun } from './workbench-helpers.ts';


interface BirdQuestion { question_id: number; db_id: string }
interface CliItem { index: number; sample: number; ex: 0 | 1; status: string; result_key: string | null }

const STORED = new Set(['superhero', 'student_club', 'toxicology']);
const PRED = (dir: string, name: string) => sharedData('bird', 'predictions', dir, name);
const GPT4O = PRED('TA_output', 'predict_mini_dev_gpt-4-o_cot_SQLite.json');
const LLAMA8B = PRED('sql_output_kg', 'predict_mini_dev_meta-llama-3-8b-instruct-2_sqlite.json');
/** Eight published models' predictions: sample s of a question is model s's answer. */
const EIGHT = [
  GPT4O,
  PRED('TA_output', 'predict_mini_dev_gpt-4-turbo_cot_SQLite.json'),
  PRED('TA_output', 'predict_mini_dev_gpt-35-turbo_cot_SQLite.json'),
  PRED('TA_output', 'predict_mini_dev_meta-llama-3-70b-instruct2_cot_SQLite.json'),
  PRED('sql_output_kg', 'predict_mini_dev_gpt-4_sqlite.json'),
  PRED('sql_output_kg', 'predict_mini_dev_gpt-35-turbo_sqlite.json'),
  LLAMA8B,
  PRED('sql_output_kg', 'predict_mini_dev_phi-3-medium-128k-instruct-1_sqlite.json'),
];
const sqlOf = (v: string) => v.split('\t----- bird -----\t')[0]!;

/** 8 samples for `indices` (gold positions), as JSONL lines {question_id, sql}. */
function writeEightSamples(indices: readonly number[]): string {
  const questions = JSON.parse(readFileSync(sharedData('bird', 'minidev', 'mini_dev_sqlite.json'), 'utf8')) as BirdQuestion[];
  const files = EIGHT.map((f) => JSON.parse(readFileSync(f, 'utf8')) as Record<string, string>);
  const lines = indices.flatMap((i) => files.map((f) => JSON.stringify({ question_id: questions[i]!.question_id, sql: sqlOf(f[String(i)]!) })));
  const file = tempFile('eight-models.jsonl');
  writeFileSync(file, lines.join('\n') + '\n');
  return file;
}

/**
 * The newcomer's journey on real BIRD mini-dev (issue 15): first page, import the folder,
 * replay a published file, the dashboard's "wrong answers" to a real wrong item, its question's
 * 8 samples side by side, two runs compared and a fixed question A-vs-B, a reload that lands on
 * the same view. Each screen is photographed at 1400×1000 and 390×844 and checked with axe-core.
 */
describe.skipIf(browserSkipReason())(suiteTitle('the newcomer\'s journey on BIRD mini-dev'), { timeout: 120_000 }, () => {
  let { server, browser, page, watch } = {} as AppSession;
  let runA = '';
  let exTotalA = '';
  let wrongIndex = -1;
  let questions: BirdQuestion[] = [];
  const axeFindings: Record<string, unknown[]> = {};

  /** Both sizes of the screen shown now, each checked with axe. */
  async function screen(name: string): Promise<void> {
    await screenshot(page, `journey-${name}-1400x1000.png`, true);
    const wide = await seriousViolations(page);
    await page.setViewportSize({ width: 390, height: 844 });
    await screenshot(page, `journey-${name}-390x844.png`, true);
    const phone = await seriousViolations(page);
    // On a phone the page never scrolls sideways (wide tables scroll inside their panels).
    const phoneWidth = await page.evaluate(() => document.documentElement.scrollWidth);
    await page.setViewportSize({ width: 1400, height: 1000 });
    if (wide.length + phone.length > 0) axeFindings[name] = [...wide, ...phone];
    expect({ screen: name, wide, phone, phoneWidth }).toEqual({ screen: name, wide: [], phone: [], phoneWidth: 390 });
  }

  beforeAll(async () => {
    questions = JSON.parse(readFileSync(sharedData('bird', 'minidev', 'mini_dev_sqlite.json'), 'utf8')) as BirdQuestion[];
    ({ server, browser, page, watch } = await openApp());
    await page.setViewportSize({ width: 1400, height: 1000 });
  });

  closeAppAfter(() => ({ server, browser, watch }));

  it('first page: says what the workbench is for and offers the ways in', async () => {
    await page.goto(server.url + '#/');
    await page.locator('[data-testid="demo"] [data-testid="dashboard"][data-loaded="true"]').waitFor({ timeout: 60_000 });
    for (const way of ['start-import', 'start-generate', 'start-run']) expect(await page.getByTestId(way).isVisible(), way).toBe(true);
    await screen('01-home');
  });

  it('imports the BIRD mini-dev folder and replays a published predictions file', async () => {
    // The review, before anything is stored: the layout recognised, the questions choice clean, the missing databases named.
    await page.getByTestId('nav-datasets').click();
    await page.getByTestId('import-folder').setInputFiles(sharedData('bird'));
    await page.getByTestId('import-review').waitFor();
    expect(await page.getByTestId('import-layout').getAttribute('data-layout')).toBe('bird');
    expect(await page.locator('input[name="kind"][value="bird"]').isChecked()).toBe(true);
    const choices = await page.locator('[data-testid="import-questions"] option').allTextContents();
    expect(choices.slice(1)).toEqual(['bird/dev/dev.json', 'bird/minidev/mini_dev_sqlite.json']);
    const missing = page.getByTestId('import-missing');
    await missing.waitFor();
    expect((await missing.textContent())?.replace(/\s+/g, ' ')).toMatch(/8 databases the questions use are not among the files: .*formula_1 \(66\).*Their 360 questions will be imported but not scored/);
    await screen('02-import-review');
    const imported = await importDataset(page, { kind: 'bird', name: 'BIRD mini-dev', folder: sharedData('bird') });
    expect(imported).toEqual({ ok: true, message: 'Imported "BIRD mini-dev": 500 questions, 3 databases.' });
    await screen('02-datasets');
    const run = await startRun(page, { datasetName: 'BIRD mini-dev', predictions: GPT4O, name: 'gpt-4o cot' });
    expect(run.error).toBeNull();
    runA = run.runId!;
  });

  it('dashboard: "wrong answers" counts scored items only and links to exactly them', async () => {
    const cells = await officialCells(page);
    exTotalA = cells.ex!.total!;
    const scored = Number(cells.count!.total);
    const right = Math.round((Number(cells.ex!.total) / 100) * scored);
    const wrong = Number(await page.locator('[data-count="wrong"]').textContent());
    // 140 scored items (3 of 11 databases here): wrong = scored − right, the 360 unscored never among them.
    expect(scored).toBe(140);
    expect(wrong).toBe(scored - right);
    expect(Number(await page.locator('[data-count="missing-db"]').textContent())).toBe(360);
    await screen('03-dashboard');

    // A per-database count opens exactly its items.
    const errLink = page.locator('[data-testid="db-scores"] a[data-count-link$=":error"]').first();
    const [db] = (await errLink.getAttribute('data-count-link'))!.split(':');
    const errors = Number(await errLink.textContent());
    await errLink.click();
    await page.waitForURL(/\/items\?/);
    await page.locator('[data-testid="explorer"][data-complete="true"]').waitFor();
    expect(await page.getByTestId('filter-count').textContent()).toContain(`${errors} of 500`);
    const errRows = await page.locator('[data-testid="item-list"] [role="option"]').evaluateAll((rs) => rs.map((r) => (r as HTMLElement).dataset.status));
    expect(errRows.every((st) => st === 'error')).toBe(true);
    expect(await page.getByTestId('filter-db').inputValue()).toBe(db);
    await page.goBack();
    await page.locator('[data-testid="dashboard"][data-loaded="true"]').waitFor();

    await page.getByTestId('wrong-link').click();
    await page.waitForURL(/\/items\?outcome=wrong$/);
    await page.locator('[data-testid="explorer"][data-complete="true"]').waitFor();
    const rows = page.locator('[data-testid="item-list"] [role="option"]');
    await rows.first().waitFor();
    expect(await page.getByTestId('item-list').locator('[data-status="missing-db"]').count()).toBe(0);
    const listed = await rows.evaluateAll((rs) => rs.map((r) => ({ ex: (r as HTMLElement).dataset.ex, status: (r as HTMLElement).dataset.status, badge: r.querySelector('[data-testid="verdict"]')?.textContent })));
    expect(listed.every((r) => r.ex === '0' && r.status !== 'missing-db' && r.badge !== 'not scored')).toBe(true);
    expect(await page.getByTestId('filter-count').textContent()).toContain(String(wrong));
    expect(await page.getByTestId('filter-outcome').inputValue()).toBe('wrong');

    await rows.first().click();
    const detail = page.getByTestId('item-detail');
    await detail.waitFor();
    wrongIndex = Number(await detail.getAttribute('data-index'));
    expect(STORED.has(questions[wrongIndex]!.db_id)).toBe(true);
    expect(await page.getByTestId('item-ex').textContent()).toBe('EX 0');
    await page.getByTestId('pred-rows').waitFor();
    await screen('04-explorer-wrong');

    // The filter and the open item are in the address: a reload lists and opens the same.
    expect(page.url()).toMatch(new RegExp(`/items/${wrongIndex}\\.0\\?outcome=wrong$`));
    await page.reload();
    await page.locator(`[data-testid="item-detail"][data-index="${wrongIndex}"]`).waitFor();
    expect(await page.getByTestId('filter-outcome').inputValue()).toBe('wrong');
    // An item of the first page opens before the whole run is read; the filtered count comes with it.
    await page.locator('[data-testid="explorer"][data-complete="true"]').waitFor();
    expect(await page.getByTestId('filter-count').textContent()).toContain(String(wrong));
  });

  it('an unscored item is listed as "not scored", never as EX 0', async () => {
    await page.goto(`${server.url}#/run/${encodeURIComponent(runA)}/items?outcome=missing-db`);
    await page.locator('[data-testid="explorer"][data-complete="true"]').waitFor();
    const rows = page.locator('[data-testid="item-list"] [role="option"]');
    await rows.first().click();
    expect(await page.getByTestId('item-ex').textContent()).toBe('not scored');
    expect(await rows.first().locator('[data-testid="verdict"]').textContent()).toBe('not scored');
    await screen('05-explorer-unscored');
  });

  it("opens the wrong item's question in an 8-sample run of eight published models: every sample, grouped by result, with the vote", async () => {
    const stored = questions.flatMap((q, i) => (STORED.has(q.db_id) && i !== wrongIndex ? [i] : [])).slice(0, 11);
    const indices = [wrongIndex, ...stored].sort((a, b) => a - b);
    const file = writeEightSamples(indices);
    const out = tempFile('eight.json');
    const cli = runCli([
      'eval', '--predictions', file, '--gold', sharedData('bird', 'minidev', 'mini_dev_sqlite_gold.sql'),
      '--dataset', sharedData('bird', 'minidev', 'mini_dev_sqlite.json'), '--db-root', sharedData('bird', 'databases'), '--out', out,
    ]);
    const run = await startRun(page, { datasetName: 'BIRD mini-dev', predictions: file, name: 'eight models (n = 8)' });
    expect(run.error).toBeNull();
    const runN = run.runId!;
    expect((await cli).code).toBe(0);
    const items = readJson<{ items: CliItem[] }>(out).items.filter((i) => i.index === wrongIndex).sort((a, b) => a.sample - b.sample);
    expect(items).toHaveLength(8);

    // The explorer's rows name their sample; the item detail links to the question's samples.
    await page.goto(`${server.url}#/run/${encodeURIComponent(runN)}/items/${wrongIndex}.3`);
    await page.getByTestId('item-detail').waitFor();
    expect(await page.locator('[data-testid="item-detail"] h2').textContent()).toContain(`Question ${questions[wrongIndex]!.question_id} · sample s3`);
    const first = indices[0]!;
    expect(await page.locator(`[data-testid="item-list"] [data-key="${first}.1"] [data-testid="row-id"]`).textContent()).toBe(`#${questions[first]!.question_id} · s1`);
    await page.getByTestId('open-question').click();
    await page.locator('[data-testid="question-page"][data-loaded="true"]').waitFor();
    expect(page.url()).toContain(`/question/${wrongIndex}`);

    const cards = await page.locator('[data-testid="question-samples"] > li').evaluateAll((ls) => ls.map((l) => ({ sample: Number((l as HTMLElement).dataset.sample), ex: Number((l as HTMLElement).dataset.ex), group: (l as HTMLElement).dataset.group })));
    expect(cards.map((c) => [c.sample, c.ex])).toEqual(items.map((i) => [i.sample, i.ex]));
    // Samples share a result group exactly when the CLI gave them the same result signature.
    for (const a of items) for (const b of items) {
      const ga = cards[a.sample]!.group;
      const gb = cards[b.sample]!.group;
      if (a.result_key === null || b.result_key === null) continue;
      expect(ga === gb, `s${a.sample} vs s${b.sample}`).toBe(a.result_key === b.result_key);
    }
    expect(await page.getByTestId('question-right').textContent()).toBe(`${items.filter((i) => i.ex === 1).length} of 8`);
    // The vote: the largest result group's EX (shared among tied groups).
    const sizes = new Map<string, { n: number; ex: number }>();
    for (const i of items) if (i.result_key) sizes.set(i.result_key, { n: (sizes.get(i.result_key)?.n ?? 0) + 1, ex: i.ex });
    const max = Math.max(...[...sizes.values()].map((g) => g.n));
    const top = [...sizes.values()].filter((g) => g.n === max);
    const expected = top.reduce((s, g) => s + g.ex, 0) / top.length;
    expect(Number(await page.getByTestId('question-majority').textContent())).toBeCloseTo(expected, 2);
    await screen('06-question-samples');

    // The RL table's question link opens the same view.
    await page.goto(`${server.url}#/run/${encodeURIComponent(runN)}/rl`);
    const link = page.locator(`[data-testid="prompt-table"] a[href$="/question/${wrongIndex}"]`);
    await link.waitFor();
    await screen('06b-rl');
    await link.click();
    await page.locator('[data-testid="question-page"][data-loaded="true"]').waitFor();
  });

  it('compares two runs and opens a fixed question side by side; a reload lands on the same view', async () => {
    const run = await startRun(page, { datasetName: 'BIRD mini-dev', predictions: LLAMA8B, name: 'llama-3-8b kg' });
    expect(run.error).toBeNull();
    const runB = run.runId!;
    // The runs list tells runs apart by their samples per question.
    await page.getByTestId('nav-runs').click();
    expect(await page.locator('[data-testid="run-n"]').allTextContents()).toEqual(expect.arrayContaining(['n = 8 samples per question', '1 sample per question']));
    // …and by their EX, the dashboard's (gpt-4o cot: the total of its official table).
    const gpt = page.locator(`[data-run-id="${runA}"] [data-testid="run-ex"]`);
    expect(await gpt.textContent()).toBe(`EX ${exTotalA}`);
    await screen('06c-runs');
    // Baseline A = llama-3-8b, B = gpt-4o: "fixed" = wrong in A, right in B.
    await page.goto(`${server.url}#/compare/${encodeURIComponent(runB)}/${encodeURIComponent(runA)}`);
    await page.locator('[data-testid="compare-page"][data-ready="true"] [data-testid="compare-result"][data-drawn="true"]').waitFor({ timeout: 60_000 });
    // A bucket's count lists exactly its questions.
    const cell = page.locator('[data-testid="compare-by-database"] tr[data-bucket] td[data-col="fixed"]:has([data-testid="bucket-count"])').first();
    const bucketDb = await cell.locator('xpath=..').getAttribute('data-bucket');
    const fixedHere = Number(await cell.textContent());
    await cell.getByTestId('bucket-count').click();
    const listed = await page.locator('[data-testid="compare-questions"] tbody tr').evaluateAll((trs) => trs.map((tr) => ({ category: (tr as HTMLElement).dataset.category, db: tr.children[1]?.textContent })));
    expect(listed).toHaveLength(fixedHere);
    expect(listed.every((q) => q.category === 'fixed' && q.db === bucketDb)).toBe(true);
    await page.getByTestId('compare-bucket').getByRole('button').click();
    await page.getByTestId('compare-category').selectOption('fixed');
    const fixed = page.locator('[data-testid="compare-questions"] tr[data-category="fixed"] a[data-testid="compare-question-link"]');
    await fixed.first().waitFor();
    await screen('07-compare');
    await fixed.first().click();
    const view = page.locator('[data-testid="compare-question"][data-loaded="true"]');
    await view.waitFor();
    const index = Number(await view.getAttribute('data-index'));
    expect(page.url()).toMatch(new RegExp(`#/compare/[^/]+/[^/]+/question/${index}$`));
    const read = async () => ({
      verdicts: await page.getByTestId('cq-verdict').allTextContents(),
      sql: await page.locator('[data-testid="cq-sql"]').allTextContents(),
    });
    const shown = await read();
    expect(shown.verdicts).toHaveLength(2);
    expect(shown.verdicts[0]).toMatch(/^EX 0( · (error|timeout))?$/);
    expect(shown.verdicts[1]).toBe('EX 1');
    const a = JSON.parse(readFileSync(LLAMA8B, 'utf8')) as Record<string, string>;
    const b = JSON.parse(readFileSync(GPT4O, 'utf8')) as Record<string, string>;
    expect(shown.sql.map((s) => s.replace(/\s+/g, ' ').trim())).toEqual([a, b].map((f) => sqlOf(f[String(index)]!).replace(/\s+/g, ' ').trim()));
    // B (right) ran its query again for its rows; the gold result is shown once, beside both.
    await page.getByTestId('cq-gold-rows').waitFor();
    expect(await page.locator('[data-role="B"] [data-testid="cq-pred-rows"]').count()).toBe(1);
    expect(Number(await page.getByTestId('cq-gold-rows').getAttribute('data-row-count'))).toBeGreaterThan(0);
    await screen('08-compare-question');

    await page.reload();
    await page.locator('[data-testid="compare-question"][data-loaded="true"]').waitFor();
    expect(await read()).toEqual(shown);
    await screen('09-after-reload');
  });
  // ───────────── Issue 23 (numbers): R-VES as the CLI's, and a mean over each export as the dashboard's ─────────────
  // (This page is not cross-origin isolated: performance.now() in 100 µs steps, the case that gave R-VES 40.21 vs 73.68.)
  let rvesRun = '';
  let rvesEx = '';
  it('issue 23: replays with R-VES; the app\'s R-VES equals the CLI\'s within 2 points, in total and per database; none left untimed', async () => {
    const out = tempFile('rves.json');
    const cli = runCli([
      'eval', '--predictions', GPT4O, '--gold', sharedData('bird', 'minidev', 'mini_dev_sqlite_gold.sql'),
      '--dataset', sharedData('bird', 'minidev', 'mini_dev_sqlite.json'), '--db-root', sharedData('bird', 'databases'), '--metrics', 'ex,soft-f1,r-ves', '--out', out,
    ]);
    const run = await startRun(page, { datasetName: 'BIRD mini-dev', predictions: GPT4O, name: 'gpt-4o cot r-ves', tickMetrics: ['R-VES'], waitMs: 1_200_000 });
    expect(run.error).toBeNull();
    rvesRun = run.runId!;
    const cells = await officialCells(page);
    rvesEx = cells.ex!.total!;
    expect((await cli).code).toBe(0);
    const summary = readJson<{ summary: { by_difficulty: { total: { r_ves: number; r_ves_not_timed: number } }; by_db: Record<string, { r_ves: number }> } }>(out).summary;
    expect(Number(cells['r-ves']!.total)).toBeGreaterThan(0);
    expect(Math.abs(Number(cells['r-ves']!.total) - summary.by_difficulty.total.r_ves), `app ${cells['r-ves']!.total}, CLI ${summary.by_difficulty.total.r_ves}`).toBeLessThanOrEqual(2);
    for (const db of STORED) {
      const app = Number(await page.locator(`[data-testid="db-scores"] tr[data-db="${db}"] td[data-col="r-ves"]`).textContent());
      expect(Math.abs(app - summary.by_db[db]!.r_ves), `${db}: app ${app}, CLI ${summary.by_db[db]!.r_ves}`).toBeLessThanOrEqual(2);
    }
    expect(summary.by_difficulty.total.r_ves_not_timed).toBe(0);
    expect(await page.getByTestId('rves-not-timed').count()).toBe(0);
    // A correct item shows its reward and time ratio, never "reward 0" for want of a clock.
    await page.goto(`${server.url}#/run/${encodeURIComponent(rvesRun)}/items?outcome=right`);
    await page.locator('[data-testid="explorer"][data-complete="true"]').waitFor();
    await page.locator('[data-testid="item-list"] [role="option"]').first().click();
    expect(await page.getByTestId('item-rves').textContent()).toMatch(/^R-VES reward (0\.25|0\.5|0\.75|1|1\.25) \(time ratio [\d.]+\)$/);
    await screen('10-rves-item');
  }, 1_500_000);

  it('issue 23: exports the run; mean(ex) over the run JSON, CSV, JSON Lines and Parquet, read by DuckDB, is the dashboard\'s EX; unscored rows are null', async () => {
    await page.getByTestId('nav-runs').click();
    const row = `[data-run-id="${rvesRun}"]`;
    const save = async (kind: string, name: string) => {
      const [dl] = await Promise.all([page.waitForEvent('download'), page.locator(`${row} [data-testid="export-${kind}"]`).click()]);
      const file = tempFile(name);
      await dl.saveAs(file);
      return file;
    };
    const files = { run: await save('run', 'run.json'), csv: await save('csv', 'run.csv'), jsonl: await save('jsonl', 'run.jsonl'), parquet: await save('parquet', 'run.parquet') };
    const from = {
      run: `(SELECT unnest(samples, recursive := true) FROM read_json('${files.run}', maximum_object_size = 200000000))`,
      csv: `read_csv('${files.csv}', header = true)`,
      jsonl: `read_json('${files.jsonl}', format = 'newline_delimited')`,
      parquet: `'${files.parquet}'`,
    };
    for (const [kind, table] of Object.entries(from)) {
      const [agg] = await duck<{ n: number; scored: number; ex: number; unscored_scores: number }>(
        `SELECT count(*)::INTEGER AS n, count(ex)::INTEGER AS scored, avg(ex) AS ex,
           count(CASE WHEN status = 'missing-db' THEN coalesce(ex, reward, rves) END)::INTEGER AS unscored_scores FROM ${table}`,
      );
      expect({ kind, n: agg!.n, scored: agg!.scored, unscored: agg!.unscored_scores, ex: (agg!.ex * 100).toFixed(2) }).toEqual({ kind, n: 500, scored: 140, unscored: 0, ex: rvesEx });
    }
  }, 300_000);
});
