/**
 * What reuse and the verdict cache may share, through the CLI on real BIRD data (`eval` twice
 * with one `--cache`): a prediction that SQLite rejects for a trailing U+00A0, U+000B or U+3000
 * never takes the clean text's verdict (by reuse within a run, or from the cache across runs),
 * `strftime('%S')` (the clock, with one argument) is never cached, and neither is a timeout.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import initSqlJs from 'sql.js';
import { describe, expect, it } from 'vitest';
import { jsonlFile, readJson, runCli } from '../helpers/cli.ts';
import { datasetFlags, minidevFiles, minidevQuestions, sharedData } from '../helpers/shared-data.ts';

interface ReportItem {
  sample: number;
  ex: 0 | 1;
  status: string;
  error: string | null;
}
interface Report {
  summary: { executions: { items: number; executed: number; reused: number; from_cache: number } };
  items: ReportItem[];
}

/** Mini-dev question 719 (superhero): its position and gold. */
const POSITION = minidevQuestions().findIndex((q) => q.question_id === 719);
const GOLD = readFileSync(minidevFiles().gold, 'utf8').split('\n')[POSITION]!.split('\t')[0]!;
/** A query that never ends: a timeout whatever the machine. */
const ENDLESS = 'WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c) SELECT count(*) FROM c';

/** SQLite's own answer to `sql` on the superhero database (sql.js, outside the CLI): its error, or null. */
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

async function evalSamples(cache: string, sqls: readonly string[]): Promise<Report> {
  const predictions = jsonlFile(
    'samples.jsonl',
    sqls.map((sql) => ({ question_id: 719, sql })),
  );
  const out = path.join(mkdtempSync(path.join(tmpdir(), 'wb-cache-policy-')), 'eval.json');
  const flags = datasetFlags(minidevFiles());
  const run = await runCli([
    'eval',
    '--predictions',
    predictions,
    ...flags,
    '--cache',
    cache,
    '--timeout-s',
    '1',
    '--out',
    out,
  ]);
  expect(run.code, run.stderr).toBe(0);
  return readJson<Report>(out);
}

describe('what reuse and the verdict cache share, CLI on real data', () => {
  it("a trailing U+00A0 / U+000B / U+3000 gets SQLite's error, never the clean text's EX 1 (by reuse or from the cache); strftime('%S') and a timeout are never cached", async () => {
    expect(POSITION).toBeGreaterThanOrEqual(0);
    expect(await sqliteError(GOLD)).toBeNull();
    const cache = mkdtempSync(path.join(tmpdir(), 'wb-cache-policy-cache-'));

    // Run 1: the clean gold and the same text with a trailing U+00A0 (reuse would join them),
    // the clock with one argument, and a query that never ends.
    const one = await evalSamples(cache, [GOLD, `${GOLD}\u00a0`, "SELECT strftime('%S')", ENDLESS]);
    expect(one.items.map((i) => i.sample)).toEqual([0, 1, 2, 3]);
    expect(one.items[0]).toMatchObject({ ex: 1, status: 'ok' });
    expect(one.items[1]).toMatchObject({
      ex: 0,
      status: 'error',
      error: `prediction: ${await sqliteError(`${GOLD}\u00a0`)}`,
    });
    expect(one.items[3]).toMatchObject({ status: 'timeout' });
    expect(one.summary.executions).toMatchObject({ items: 4, executed: 4, reused: 0, from_cache: 0 });

    // Run 2, same cache: texts never seen whose old key was the clean text's, the clean text,
    // the clock and the endless query again.
    const two = await evalSamples(cache, [`${GOLD}\u3000`, `${GOLD}\v`, GOLD, "SELECT strftime('%S')", ENDLESS]);
    for (const [sample, c] of [
      [0, '\u3000'],
      [1, '\v'],
    ] as const) {
      const error = await sqliteError(GOLD + c);
      expect(error).not.toBeNull();
      expect(two.items[sample]).toMatchObject({ ex: 0, status: 'error', error: `prediction: ${error}` });
    }
    expect(two.items[2]).toMatchObject({ ex: 1, status: 'ok' });
    expect(two.items[4]).toMatchObject({ status: 'timeout' });
    // Only the clean text came from the cache: the clock and the timeout ran again.
    expect(two.summary.executions).toMatchObject({ items: 5, executed: 4, reused: 0, from_cache: 1 });
  }, 120_000);
});
