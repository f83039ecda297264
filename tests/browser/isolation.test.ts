import { writeFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { formatFixed2 } from '../../src/core/eval/report.ts';
import type { RunFile } from '../../src/core/run/types.ts';
import { evalMinidev, tempFile } from '../helpers/cli.ts';
import { readSharedText, sharedData } from '../helpers/shared-data.ts';
import { browserSkipReason, suiteTitle } from './harness.ts';
import { type AppSession, downloadFrom, importDataset, officialCells, useApp, runStored } from './workbench-helpers.ts';

interface CliItem {
  index: number;
  ex: 0 | 1;
  status: string;
  error: string | null;
}
interface CliReport {
  summary: { by_difficulty: Record<string, { ex: number }> };
  items: CliItem[];
}

const PREDICTIONS = sharedData('bird', 'predictions', 'TA_output', 'predict_mini_dev_gpt-4-o_cot_SQLite.json');

/**
 * The first question of each database here (the first item its worker runs), given a hostile
 * prediction: a PRAGMA that lowered the heap limit of the whole worker (the app's EX fell to
 * 5.00 before), the same behind EXPLAIN / EXPLAIN QUERY PLAN on the second question
 * of two databases, and a SELECT sorting 1.5 GB (spilled to the in-memory file system).
 */
const HOSTILE: Record<string, string> = {
  30: 'PRAGMA hard_heap_limit = 200000', // student_club
  // SQLite applies a PRAGMA's setting while preparing: EXPLAIN does not stop it.
  31: 'EXPLAIN /* x */ PRAGMA hard_heap_limit = 200000', // student_club
  239: 'PRAGMA "hard_heap_limit"(200000)', // superhero
  246: 'EXPLAIN QUERY PLAN PRAGMA soft_heap_limit = 100000', // superhero
  398: 'SELECT count(*) FROM (SELECT randomblob(1000) AS b FROM (WITH RECURSIVE c(v) AS (SELECT 1 UNION ALL SELECT v + 1 FROM c WHERE v < 1500000) SELECT v FROM c) ORDER BY b)', // toxicology
};

/**
 * Two attacks, in the app (browser workers): hostile predictions run first on
 * their workers, and every other item keeps the verdict the CLI gives it without them.
 */
describe.skipIf(browserSkipReason())(suiteTitle('isolation of executions in the app (BIRD mini-dev, gpt-4o)'), () => {
  let { server, page } = {} as AppSession;
  useApp((s) => ({ server, page } = s), { hash: '#/datasets' });
  let clean: CliReport;
  let hostileFile: string;

  beforeAll(async () => {
    const preds = JSON.parse(
      readSharedText('bird', 'predictions', 'TA_output', 'predict_mini_dev_gpt-4-o_cot_SQLite.json'),
    ) as Record<string, string>;
    for (const [k, sql] of Object.entries(HOSTILE))
      preds[k] = `${sql}\t----- bird -----\t${preds[k]!.split('\t----- bird -----\t')[1]}`;
    hostileFile = tempFile('hostile-gpt-4o.json');
    writeFileSync(hostileFile, JSON.stringify(preds));
    clean = (await evalMinidev<CliReport>(PREDICTIONS)).report;
  }, 300_000);

  it('every item but the hostile ones has the verdict it has without them; those end refused or over budget', async () => {
    expect((await importDataset(page, { kind: 'bird', name: 'BIRD mini-dev', folder: sharedData('bird') })).ok).toBe(
      true,
    );
    const hostileRun = await runStored(page, 'BIRD mini-dev', hostileFile, 'gpt-4o with hostile neighbours');
    await page.getByTestId('nav-runs').click();
    const file = JSON.parse(
      (await downloadFrom(page, `[data-run-id="${hostileRun}"] [data-testid="export-run"]`)).text,
    ) as RunFile;
    const scored = file.samples.filter((s) => s.status !== 'missing-db');
    expect(scored).toHaveLength(140);
    const cleanEx = new Map(clean.items.filter((i) => i.status !== 'missing-db').map((i) => [i.index, i.ex]));
    const differing = scored
      .filter((s) => !(String(s.index) in HOSTILE) && s.ex !== cleanEx.get(s.index))
      .map((s) => s.index);
    expect(differing).toEqual([]);
    const hostile = Object.fromEntries(scored.filter((s) => String(s.index) in HOSTILE).map((s) => [s.index, s.error]));
    expect(hostile[30]).toMatch(/^prediction: PRAGMA hard_heap_limit changes the state of the whole SQL worker/);
    expect(hostile[239]).toMatch(/^prediction: PRAGMA hard_heap_limit changes the state of the whole SQL worker/);
    expect(hostile[31]).toMatch(/^prediction: PRAGMA hard_heap_limit changes the state of the whole SQL worker/);
    expect(hostile[246]).toMatch(/^prediction: PRAGMA soft_heap_limit changes the state of the whole SQL worker/);
    expect(hostile[398]).toMatch(/^prediction: out of memory: over the worker's 512 MiB SQLite heap budget/);
    // The dashboard's EX is the clean run's, less what the hostile questions scored there.
    const lost = Object.keys(HOSTILE).reduce<number>((a, k) => a + (cleanEx.get(Number(k)) ?? 0), 0);
    const cleanCorrect = [...cleanEx.values()].reduce<number>((a, x) => a + x, 0);
    await page.goto(server.url + `#/run/${hostileRun}`);
    await page.locator('[data-testid="dashboard"][data-loaded="true"]').waitFor();
    expect((await officialCells(page)).ex!.total).toBe(formatFixed2(((cleanCorrect - lost) / 140) * 100));
    console.log(
      `app: EX ${formatFixed2(((cleanCorrect - lost) / 140) * 100)} with ${Object.keys(HOSTILE).length} hostile predictions (clean ${formatFixed2(clean.summary.by_difficulty.total!.ex)}); ${140 - Object.keys(HOSTILE).length} other items unchanged`,
    );
  }, 600_000);
});
