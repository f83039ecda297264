import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createNodeSqlPool } from '../../src/adapters/node/sql-worker-host.ts';
import { DEFAULT_EVAL_OPTIONS } from '../../src/core/eval/executor.ts';
import { parseGoldSql } from '../../src/core/formats/gold.ts';
import { parseQuestions } from '../../src/core/formats/questions.ts';
import { planReplay, runEvaluation } from '../../src/core/run/replay.ts';
import { cacheableItem } from '../../src/core/run/verdict-cache.ts';
import { cachedVerdictOf, counting, withFileCache } from '../helpers/file-verdict-cache.ts';
import { verdictOf, verdictsBesideTimeouts } from '../helpers/item-results.ts';
import { readSharedText, sharedData } from '../helpers/shared-data.ts';
import { SLOW_QUESTION } from '../helpers/series-dumps.ts';
import { thirteenSampleRun } from '../helpers/thirteen-files.ts';

const pool = createNodeSqlPool({ dbRoot: sharedData('bird', 'databases'), workers: 2 });
afterAll(() => pool.dispose());

/**
 * A timeout no load reaches: under load one query near the official 30 s (mini-dev item 417 of
 * one file) timed out in one run and not the other, and a timeout is never cached.
 */
const OPTIONS = { ...DEFAULT_EVAL_OPTIONS, timeoutMs: 600_000 };

/** `make` called once, on first use; its promise shared by the tests that ask. */
function once<T>(make: () => Promise<T>): () => Promise<T> {
  let made: Promise<T> | undefined;
  return () => (made ??= make());
}

/**
 * The 13 real mini-dev files as one 13-sample run (file k = sample k), every sample executed (no
 * reuse) through the verdict cache's file started empty in `dir`: nothing can come from the
 * cache, every cacheable verdict goes into it. Evaluated once in this file, in this test run: the
 * reference of both claims below (reuse, and the cache's second run), each compared with it
 * after executing on its own.
 */
const everySample = once(async () => {
  // Without question 247 (tests/helpers/series-dumps.ts SLOW_QUESTION), whose answer in two files
  // runs for half a minute: four executions of it here would be a third of this file's time, and
  // reuse has nothing to do with a query's speed.
  const items = thirteenSampleRun().filter((it) => it.questionId !== SLOW_QUESTION);
  const dir = mkdtempSync(path.join(tmpdir(), 'wb-vcache-'));
  const cold = await withFileCache(dir, pool);
  const outcome = await runEvaluation(items, OPTIONS, { executor: cold.caching, reuse: false });
  await cold.file.save();
  return { items, dir, outcome, stats: cold.caching.stats, entries: cold.file.entries };
});

describe('reuse gives the same verdict as executing every sample, on real data', () => {
  it('the 13 real mini-dev files as a 13-sample run: identical per-item results, fewer executions', async () => {
    const { items, outcome: off, stats } = await everySample();
    expect(items).toHaveLength(139 * 13);
    expect(stats.hitSamples.size).toBe(0);
    const on = await runEvaluation(items, OPTIONS, { executor: pool });
    expect(off).toMatchObject({ executed: 139 * 13, reused: 0 });
    expect(on.executed + on.reused).toBe(139 * 13);
    expect(on.reused).toBeGreaterThan(0);
    // A query near the limit may time out in one pass and not the other when the machine is
    // loaded: that is the machine, not reuse. Such items are set apart, and there may be only a
    // few; every other verdict must be identical.
    const { slow, ...verdicts } = verdictsBesideTimeouts(on.results, off.results);
    expect(slow).toBeLessThanOrEqual(3);
    expect(verdicts.a).toEqual(verdicts.b);
    if (slow === 0) expect(on.summary.byDifficulty.total).toEqual(off.summary.byDifficulty.total);
    // Without reuse every item whose prediction ran executes its gold; with reuse each of the 139
    // distinct golds runs at most once per worker (2 here), whatever the worker evicted meanwhile.
    expect(off.goldExecuted).toBe(
      off.results.filter((r) => r.goldRowCount !== null || r.error?.startsWith('gold: ')).length,
    );
    expect(on.goldExecuted).toBeLessThanOrEqual(139 * 2);
    expect(on.goldExecuted * 5).toBeLessThan(off.goldExecuted);
    console.log(
      `13-sample run: ${on.executed} executions with reuse for 1,807 samples (${on.reused} reused), ${on.goldExecuted} gold executions (${off.goldExecuted} without reuse)`,
    );
  }, 1_800_000);

  it('Spider dev gold as its own prediction: identical per-item results', async () => {
    const gold = parseGoldSql(readSharedText('spider', 'dev_gold.sql'), 'dev_gold.sql');
    const questions = parseQuestions(readSharedText('spider', 'dev.json'), 'dev.json');
    const items = planReplay({
      predictions: { name: 'dev_gold.sql', text: readSharedText('spider', 'dev_gold.sql') },
      gold,
      questions,
    }).items;
    const spider = createNodeSqlPool({ dbRoot: sharedData('spider'), workers: 2 });
    try {
      const on = await runEvaluation(items, DEFAULT_EVAL_OPTIONS, { executor: spider });
      const off = await runEvaluation(items, DEFAULT_EVAL_OPTIONS, { executor: spider, reuse: false });
      expect(on.results.map((r) => verdictOf(r))).toEqual(off.results.map((r) => verdictOf(r)));
      console.log(`Spider dev: ${on.executed} executions with reuse for ${items.length} items (${on.reused} reused)`);
    } finally {
      await spider.dispose();
    }
  }, 300_000);
});

describe('the verdict cache across runs, on real data', () => {
  it('the 13 mini-dev files: a second run from the cache (written, read back from its file) gives every item the same EX, Soft-F1, status and error, executing none of the cached ones', async () => {
    const { items, dir, outcome: a, stats, entries } = await everySample();
    expect(stats.hitSamples.size).toBe(0);
    expect(stats.stored).toBeGreaterThan(1000);

    const count = counting(pool);
    const second = await withFileCache(dir, count.executor);
    expect(second.file.entries).toBe(entries);
    const b = await runEvaluation(items, OPTIONS, { executor: second.caching });
    expect(b.results.map(cachedVerdictOf)).toEqual(a.results.map(cachedVerdictOf));
    expect(b.summary.byDifficulty).toEqual(a.summary.byDifficulty);
    // What was executed again: only items the cache may not hold (writes, random(), machine failures).
    for (const it of count.asked) {
      const r = a.results[it.sample!]!;
      expect(
        !cacheableItem(it) ||
          r.mutatedDb ||
          !['ok', 'error'].includes(r.status) ||
          (r.status === 'error' && !/^(prediction|gold): /.test(r.error ?? '')),
      ).toBe(true);
    }
    expect(second.caching.stats.hitSamples.size).toBeGreaterThan(1000);
    console.log(
      `13 files, ${items.length} items: ${stats.stored} verdicts stored, ${second.caching.stats.hitSamples.size} answered from the cache, ${count.asked.length} executed again`,
    );
  }, 1_800_000);
});
