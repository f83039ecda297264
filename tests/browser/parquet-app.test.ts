/**
 * Parquet in and out in the built app (headless Chromium): a dataset whose questions file is
 * Parquet imported through the folder input, a Parquet predictions file run through the
 * new-run form (scored like its JSON twin), the run and its per-prompt statistics downloaded as
 * Parquet and read back by DuckDB, and a RaR split in the published Parquet schema imported on
 * the rubric screen with every criterion.
 */
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { duck } from '../helpers/duck.ts';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { BIRD_SEPARATOR } from '../../src/core/formats/predictions.ts';
import { birdQuestionsTable, int64, RAR_SCHEMA, utf8, writeParquet } from '../helpers/parquet-files.ts';
import { browserSkipReason, suiteTitle } from './harness.ts';
import { type AppSession, importDataset, officialCells, startRun, useApp } from './workbench-helpers.ts';

const demo = (f: string) => new URL(`../../public/demo/${f}`, import.meta.url).pathname;
const work = mkdtempSync(path.join(tmpdir(), 'wb-parquet-app-'));

/** The demo dataset with its questions as Parquet: questions.parquet, gold.sql, city_library/city_library.sqlite. */
function parquetDatasetFolder(): string {
  const dir = path.join(work, 'city-parquet');
  mkdirSync(path.join(dir, 'city_library'), { recursive: true });
  copyFileSync(demo('gold.sql'), path.join(dir, 'dev_gold.sql'));
  copyFileSync(demo('city_library/city_library.sqlite'), path.join(dir, 'city_library', 'city_library.sqlite'));
  const qs = JSON.parse(readFileSync(demo('questions.json'), 'utf8')) as Array<Record<string, unknown>>;
  writeParquet(path.join(dir, 'dev.parquet'), ...birdQuestionsTable(qs), 8);
  return dir;
}

function predictionsParquet(): string {
  const preds = JSON.parse(readFileSync(demo('predictions.json'), 'utf8')) as Record<string, string>;
  const keys = Object.keys(preds);
  return writeParquet(
    path.join(work, 'preds.parquet'),
    [{ name: 'schema', num_children: 2 }, int64('question_id'), utf8('sql')],
    [
      { name: 'question_id', data: keys.map((_, i) => BigInt(i)) },
      { name: 'sql', data: keys.map((k) => preds[k]!.split(BIRD_SEPARATOR)[0]!) },
    ],
    6,
  );
}

async function download(page: Page, selector: string, name: string): Promise<string> {
  const [dl] = await Promise.all([page.waitForEvent('download'), page.locator(selector).click()]);
  const file = path.join(work, name);
  await dl.saveAs(file);
  return file;
}

describe.skipIf(browserSkipReason())(suiteTitle('Parquet in and out in the app'), () => {
  let { server, page } = {} as AppSession;
  useApp((s) => ({ server, page } = s), { hash: '#/datasets' });

  let jsonEx = '';
  let parquetRunId = '';
  it('imports a dataset whose questions file is Parquet, and a Parquet predictions file scores like its JSON twin', async () => {
    const imported = await importDataset(page, {
      kind: 'bird',
      name: 'City (Parquet)',
      folder: parquetDatasetFolder(),
    });
    expect(imported).toEqual({ ok: true, message: 'Imported "City (Parquet)": 20 questions, 1 database.' });
    const json = await startRun(page, {
      datasetName: 'City (Parquet)',
      predictions: demo('predictions.json'),
      name: 'json twin',
    });
    expect(json.error).toBeNull();
    const jsonCells = await officialCells(page);
    jsonEx = jsonCells.ex!.total!;
    const run = await startRun(page, {
      datasetName: 'City (Parquet)',
      predictions: predictionsParquet(),
      name: 'parquet preds',
    });
    expect(run.error).toBeNull();
    parquetRunId = run.runId!;
    expect(await officialCells(page)).toEqual(jsonCells);

    await page.getByTestId('nav-runs').click();
    const file = await download(page, `[data-run-id="${run.runId}"] [data-testid="export-parquet"]`, 'run.parquet');
    const [agg] = await duck<{ n: number; ex: number; q: number }>(
      `SELECT count(*)::INTEGER AS n, avg(ex) AS ex, count(question)::INTEGER AS q FROM '${file}'`,
    );
    expect(agg!.n).toBe(20);
    expect(agg!.q).toBe(20); // the questions' texts travel with the samples
    expect((agg!.ex * 100).toFixed(2)).toBe(jsonEx);
  });

  it('downloads the per-prompt statistics as Parquet', async () => {
    await page.goto(`${server.url}#/run/${encodeURIComponent(parquetRunId)}/rl`);
    await page.getByTestId('rl-export-parquet').waitFor();
    const file = await download(page, '[data-testid="rl-export-parquet"]', 'prompts.parquet');
    const rows = await duck<{ n: number; pass_rate: number }>(`SELECT n, pass_rate FROM '${file}' ORDER BY index`);
    expect(rows).toHaveLength(20);
    expect(((rows.reduce((s, r) => s + r.pass_rate, 0) / 20) * 100).toFixed(2)).toBe(jsonEx);
  });

  it('imports RaR splits in the published Parquet schema with every criterion, several files at once', async () => {
    const file = writeParquet(
      path.join(work, 'test-00000-of-00001.parquet'),
      RAR_SCHEMA,
      [
        { name: 'question', data: ['Why is the sky blue?', 'Why does ice float?'] },
        { name: 'reference_answer', data: ['Rayleigh scattering.', null] },
        { name: 'question_source', data: ['sci', 'sci'] },
        {
          name: 'rubric',
          data: [
            [
              { description: 'Essential Criteria: Names Rayleigh scattering.', title: 'Scattering', weight: 5n },
              { description: 'Pitfall Criteria: Does not credit reflection from the sea.', title: 'Sea', weight: -1n },
            ],
            [
              { description: 'Essential Criteria: Ice is less dense.', title: 'Density', weight: 5n },
              { description: 'Important Criteria: Hydrogen bonds.', title: 'Bonds', weight: 3n },
              { description: 'Optional Criteria: 9% expansion.', title: 'Figure', weight: 1n },
            ],
          ],
        },
        {
          name: 'rubric_list',
          data: [
            ['a', 'b'],
            ['c', 'd', 'e'],
          ],
        },
        { name: 'rubric_count', data: [2n, 3n] },
      ],
      1,
    );
    // Two splits at once, as a release ships them: one dataset each.
    const val = path.join(work, 'val-00000-of-00001.parquet');
    copyFileSync(file, val);
    await page.goto(server.url + '#/rubric-runs');
    await page.getByTestId('rar-file').setInputFiles([file, val]);
    await expect
      .poll(async () => (await page.getByTestId('rar-message').textContent()) ?? '')
      .toBe(
        'Imported "test-00000-of-00001": 2 questions, 5 criteria. Imported "val-00000-of-00001": 2 questions, 5 criteria.',
      );
    expect(await page.getByTestId('rar-datasets').textContent()).toContain('val-00000-of-00001.parquet');
  });
});
