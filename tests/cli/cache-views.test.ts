/**
 * A view is SQL the prediction does not show: `SELECT r FROM v` reads `random()` when v is
 * `SELECT random() AS r`. Through the CLI on a copy of mini-dev's superhero database (`eval`
 * twice with one `--cache`): every item of a database holding such a view is executed every
 * time (never reused, never from the cache), while a database whose view is deterministic
 * stays reusable and cacheable.
 */
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { jsonlFile, readJson, runCli } from '../helpers/cli.ts';
import { NativeDatabase } from '../helpers/native-sqlite.ts';
import { minidevFiles, minidevQuestions, sharedData } from '../helpers/shared-data.ts';

interface ReportItem {
  sample: number;
  ex: 0 | 1;
  status: string;
  result_key: string | null;
}
interface Report {
  summary: { executions: { items: number; executed: number; reused: number; from_cache: number } };
  items: ReportItem[];
}

/** Mini-dev question 719 (superhero): its position and gold. */
const POSITION = minidevQuestions().findIndex((q) => q.question_id === 719);
const GOLD = readFileSync(minidevFiles().gold, 'utf8').split('\n')[POSITION]!.split('\t')[0]!;

/** A database folder holding a copy of mini-dev's superhero database with `view` added (native SQLite). */
function rootWithView(view: string): string {
  const root = mkdtempSync(path.join(tmpdir(), 'wb-cache-views-'));
  mkdirSync(path.join(root, 'superhero'));
  const file = path.join(root, 'superhero', 'superhero.sqlite');
  copyFileSync(sharedData('bird', 'databases', 'superhero', 'superhero.sqlite'), file);
  const db = new NativeDatabase(file);
  db.exec(view);
  db.close();
  return root;
}

async function evalOn(root: string, cache: string, sqls: readonly string[]): Promise<Report> {
  const predictions = jsonlFile(
    'samples.jsonl',
    sqls.map((sql) => ({ question_id: 719, sql })),
  );
  const out = path.join(mkdtempSync(path.join(tmpdir(), 'wb-cache-views-out-')), 'eval.json');
  const files = minidevFiles();
  const run = await runCli([
    'eval',
    '--predictions',
    predictions,
    '--gold',
    files.gold,
    '--dataset',
    files.dataset!,
    '--db-root',
    root,
    '--cache',
    cache,
    '--out',
    out,
  ]);
  expect(run.code, run.stderr).toBe(0);
  return readJson<Report>(out);
}

describe('views that are not deterministic, CLI on real data with the verdict cache', () => {
  it('every item of a database with `CREATE VIEW v AS SELECT random()` is executed every time; a deterministic view stays reusable and cacheable', async () => {
    expect(POSITION).toBeGreaterThanOrEqual(0);
    const cache = mkdtempSync(path.join(tmpdir(), 'wb-cache-views-cache-'));

    // The prediction's text is deterministic; the view it reads is not. The gold itself (a text
    // reuse and the cache would share anywhere else) is not shared on this database either.
    const random = rootWithView('CREATE VIEW v AS SELECT random() AS r');
    const samples = ['SELECT r FROM v', 'SELECT r FROM v', GOLD, GOLD];
    const one = await evalOn(random, cache, samples);
    expect(one.summary.executions).toMatchObject({ items: 4, executed: 4, reused: 0, from_cache: 0 });
    expect(one.items.map((i) => i.status)).toEqual(['ok', 'ok', 'ok', 'ok']);
    expect(one.items.slice(2).map((i) => i.ex)).toEqual([1, 1]);
    // Each read of the view drew its own number: the two duplicates' results differ.
    const keysOne = one.items.slice(0, 2).map((i) => i.result_key);
    expect(keysOne[0]).not.toBeNull();
    expect(keysOne[0]).not.toBe(keysOne[1]);

    const two = await evalOn(random, cache, samples);
    expect(two.summary.executions).toMatchObject({ items: 4, executed: 4, reused: 0, from_cache: 0 });
    const keysTwo = two.items.slice(0, 2).map((i) => i.result_key);
    for (const k of keysTwo) expect(keysOne).not.toContain(k);

    // A deterministic view (with a column list, which names no function): reused in a run, cached across runs.
    const counted = rootWithView('CREATE VIEW w(n) AS SELECT count(*) FROM superhero');
    const plain = ['SELECT n FROM w', 'SELECT n FROM w', GOLD, GOLD];
    const three = await evalOn(counted, cache, plain);
    expect(three.summary.executions).toMatchObject({ items: 4, executed: 2, reused: 2, from_cache: 0 });
    const four = await evalOn(counted, cache, plain);
    expect(four.summary.executions).toMatchObject({ items: 4, from_cache: 2, reused: 2 });
    expect(four.items.map((i) => [i.ex, i.status, i.result_key])).toEqual(
      three.items.map((i) => [i.ex, i.status, i.result_key]),
    );
  }, 180_000);
});
