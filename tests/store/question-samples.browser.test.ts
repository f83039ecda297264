import { afterEach, describe, expect, it } from 'vitest';
import { markUnsorted, questionSamples, sortBlocks } from '../../src/adapters/store/sample-blocks.ts';
import { SampleWriter } from '../../src/adapters/store/sample-writer.ts';
import { BLOCK_SIZE, openWorkbenchDb, type WorkbenchIdb } from '../../src/adapters/store/schema.ts';
import { runHeader, sampleRecord } from '../helpers/run-records.ts';
import { testStore, type TestStore } from './store-helpers.ts';

let t: TestStore;
afterEach(() => t?.dispose());

/** 7 samples per question, on every third gold index: questions cross block boundaries (BLOCK_SIZE 100). */
const N_PER = 7;
const INDICES = Array.from({ length: 600 }, (_, i) => i * 3);
const sample = (index: number, s: number) =>
  sampleRecord({
    index,
    sample: s,
    ex: ((index + s) % 2) as 0 | 1,
    dbId: 'superhero',
    softF1: 1,
    extraction: { rule: 'bird-separator', thinkStripped: false },
    sql: `SELECT ${index}, ${s}`,
    goldSql: `SELECT ${index}`,
  });

describe('the samples of one question (the A-vs-B view of a question reads only them)', () => {
  it('finds every question, at block edges too, before and after the blocks are sorted, reading only a few blocks once sorted', async () => {
    t = testStore();
    const idb = await openWorkbenchDb(t.dbName);
    const runId = 'q-run';
    await idb.put(
      'runs',
      runHeader({
        id: runId,
        name: 'q',
        subset: { description: 'all', indices: INDICES },
        samplesPerQuestion: N_PER,
        executor: 'test',
      }),
    );
    await markUnsorted(idb, runId);
    const writer = new SampleWriter(idb, runId, 0);
    // Out of order, as from the pool: last sample first.
    for (let s = N_PER - 1; s >= 0; s--) for (const i of [...INDICES].reverse()) writer.push(sample(i, s));
    await writer.close();
    const expected = (index: number) => Array.from({ length: N_PER }, (_, s) => sample(index, s));

    const store = t.reopen();
    // Unsorted (a run being appended to): read whole, then filtered.
    expect(await store.runs.questionSamples(runId, 3)).toEqual(expected(3));
    await sortBlocks(idb, runId);
    const all = await store.runs.samples(runId);
    expect(all).toHaveLength(INDICES.length * N_PER);
    const blocks = Math.ceil(all.length / BLOCK_SIZE);
    // Questions whose samples straddle a block edge, the first and the last, and one in between.
    const straddling = INDICES.filter((i) => {
      const at = all.findIndex((s) => s.index === i);
      return Math.floor(at / BLOCK_SIZE) !== Math.floor((at + N_PER - 1) / BLOCK_SIZE);
    });
    expect(straddling.length).toBeGreaterThan(0);
    for (const i of [INDICES[0]!, INDICES.at(-1)!, 180, ...straddling]) {
      expect(await store.runs.questionSamples(runId, i)).toEqual(expected(i));
    }
    // Gold indices that the run does not hold: none before, between or after its questions.
    for (const i of [-1, 1, 181, 10_000]) expect(await store.runs.questionSamples(runId, i)).toEqual([]);

    // Reads: a binary search over the blocks, then the question's one or two blocks.
    const reads: unknown[] = [];
    const counted = new Proxy(idb, {
      get(target, key) {
        if (key !== 'transaction') return Reflect.get(target, key);
        return (...args: Parameters<WorkbenchIdb['transaction']>) => {
          const tx = target.transaction(...args);
          return new Proxy(tx, {
            get(txTarget, k) {
              if (k !== 'objectStore') return Reflect.get(txTarget, k);
              return (name: 'sampleMeta' | 'sampleBlocks') => {
                const os = txTarget.objectStore(name);
                return new Proxy(os, {
                  get(osTarget, m) {
                    if (m === 'get' && name === 'sampleBlocks')
                      return (key: IDBValidKey) => (reads.push(key), osTarget.get(key as [string, number]));
                    if (m === 'getAll' && name === 'sampleBlocks')
                      throw new Error('a sorted run must not be read whole');
                    const v = Reflect.get(osTarget, m) as unknown;
                    return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(osTarget) : v;
                  },
                });
              };
            },
          });
        };
      },
    }) as WorkbenchIdb;
    expect(await questionSamples(counted, runId, straddling[0]!)).toEqual(expected(straddling[0]!));
    expect(reads.length).toBeGreaterThan(0);
    expect(reads.length).toBeLessThanOrEqual(Math.ceil(Math.log2(blocks)) + 2);
    expect(blocks).toBeGreaterThan(reads.length);
    idb.close();
  });
});
