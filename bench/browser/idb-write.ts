/**
 * Benchmark page (built by bench/browser.ts beside the app, same origin): stores a run of N
 * samples in the app's IndexedDB database with the store's own code, as a run does
 * (run-execution.ts: markUnsorted, a SampleWriter fed as items finish, sortBlocks when it ends),
 * the way tests/store/performance.browser.test.ts measures it. The app then reopens the run.
 * `benchSeriesWrite` stores a synthetic training run (bench/synthetic-series.ts) for the series view.
 */
import { countSamples, sortBlocks } from '../../src/adapters/store/sample-blocks.ts';
import type { SeriesRecord } from '../../src/app/records.ts';
import { BLOCK_SIZE, openWorkbenchDb } from '../../src/adapters/store/schema.ts';
import { runHeader, storedRunSample, unstoredDataset } from '../run-records.ts';
import { syntheticStep } from '../synthetic-series.ts';
import { DEFAULT_RUN_CONFIG, type RunHeader, type SampleRecord } from '../../src/core/run/types.ts';
import { writeAsPool } from './pool-writes.ts';

export interface IdbWriteResult {
  runId: string;
  samples: number;
  /** First push to the writer's close (every block committed). */
  writeMs: number;
  /** Re-writing the blocks in (index, sample) order, as a run does when it stops. */
  sortMs: number;
  stored: number;
}

declare global {
  interface Window {
    /** `perQuestion` > 1: an RL-shaped run, sample k is sample k % perQuestion of question k / perQuestion. */
    benchIdbWrite?: (n: number, perQuestion?: number) => Promise<IdbWriteResult>;
  }
}

/** Question q's samples are right with a chance that grows with q (so pass rates spread over 0..1), and vote among 3 results. */
const rlEx = (q: number, s: number): 0 | 1 => (((q * 7919 + s * 104729) % 1000) / 1000 < (q % 10) / 10 ? 1 : 0);

const sample = (k: number, perQuestion = 1): SampleRecord => {
  const index = Math.floor(k / perQuestion);
  const s = k % perQuestion;
  const ex = perQuestion === 1 ? ((index % 2) as 0 | 1) : rlEx(index, s);
  const base = storedRunSample(index);
  return perQuestion === 1
    ? base
    : { ...base, sample: s, ex, reward: ex, resultKey: ex ? 'gold' : `wrong-${(index + s) % 3}` };
};

/** A replay run of the dataset "bench" (not stored): `questions` questions x `perQuestion` samples. */
const benchHeader = (
  fields: Pick<RunHeader, 'id' | 'name' | 'status'>,
  predictions: string,
  questions: number,
  perQuestion: number,
): RunHeader => {
  const now = new Date().toISOString();
  return runHeader({
    ...fields,
    createdAt: now,
    updatedAt: now,
    source: { kind: 'replay', predictions: { name: predictions, sha256: '0', bytes: 0 } },
    dataset: unstoredDataset({ id: 'bench', name: 'bench (not stored)' }),
    subset: { description: 'all', indices: Array.from({ length: questions }, (_, i) => i) },
    config: DEFAULT_RUN_CONFIG,
    samplesPerQuestion: perQuestion,
    executor: 'bench',
  });
};

window.benchIdbWrite = async (n: number, perQuestion = 1): Promise<IdbWriteResult> => {
  const idb = await openWorkbenchDb();
  try {
    const runId = `bench-idb-${crypto.randomUUID()}`;
    const name = `bench: ${n} samples`;
    const header = benchHeader(
      { id: runId, name, status: 'running' },
      'bench.json',
      Math.ceil(n / perQuestion),
      perQuestion,
    );
    await idb.put('runs', header);
    // Samples arrive over time, as from the pool: out of order (grouped by database), 100 per task.
    const writeMs = await writeAsPool(idb, runId, n, (k) => sample(k, perQuestion));
    const s0 = performance.now();
    await sortBlocks(idb, runId);
    const sortMs = performance.now() - s0;
    await idb.put('runs', { ...header, status: 'done', updatedAt: new Date().toISOString() });
    return { runId, samples: n, writeMs, sortMs, stored: await countSamples(idb, runId) };
  } finally {
    idb.close();
  }
};

export interface SeriesWriteResult {
  seriesId: string;
  samples: number;
  steps: number;
}

declare global {
  interface Window {
    /** Stores a synthetic training run: `steps` runs of `questions` x `perQuestion` samples, sorted blocks, the series and its scores. */
    benchSeriesWrite?: (steps: number, questions: number, perQuestion: number) => Promise<SeriesWriteResult>;
  }
}

window.benchSeriesWrite = async (steps, questions, perQuestion) => {
  const idb = await openWorkbenchDb();
  try {
    const now = new Date().toISOString();
    const seriesId = `bench-series-${crypto.randomUUID()}`;
    const record: SeriesRecord = {
      id: seriesId,
      name: `bench: ${steps} steps x ${questions} x ${perQuestion}`,
      createdAt: now,
      updatedAt: now,
      datasetId: 'bench',
      dataset: 'bench (not stored)',
      stepRule: '<N>.jsonl',
      origin: 'dumps',
      config: DEFAULT_RUN_CONFIG,
      steps: [],
      runIds: [],
    };
    let samples = 0;
    for (let s = 1; s <= steps; s++) {
      const step = s * 25;
      const runId = `${seriesId}-step-${step}`;
      const all = syntheticStep(s, questions, perQuestion);
      samples += all.length;
      const header = benchHeader(
        { id: runId, name: `${record.name} · step ${step}`, status: 'done' },
        `${step}.jsonl`,
        questions,
        perQuestion,
      );
      const tx = idb.transaction(['runs', 'sampleBlocks', 'sampleMeta', 'seriesScores'], 'readwrite');
      void tx.objectStore('runs').put(header);
      for (let b = 0; b * BLOCK_SIZE < all.length; b++)
        void tx
          .objectStore('sampleBlocks')
          .put({ runId, block: b, samples: all.slice(b * BLOCK_SIZE, (b + 1) * BLOCK_SIZE) });
      void tx.objectStore('sampleMeta').put({ runId, sorted: true, count: all.length, blockSize: BLOCK_SIZE });
      void tx.objectStore('seriesScores').put({ seriesId, step, scores: all.map((x) => x.ex * 0.8 + 0.1) });
      await tx.done;
      record.steps.push({ step, runId, wallTime: now, source: `${step}.jsonl`, owned: true });
      record.runIds.push(runId);
    }
    await idb.put('series', record);
    return { seriesId, samples, steps };
  } finally {
    idb.close();
  }
};
