/**
 * The app's ports (src/app/ports.ts) over memory and Node: runs, inputs and samples in Maps, a
 * dataset read from files with its databases in a BIRD-layout folder, the real pairing of the
 * import worker's body (run in this thread), and Node's sql.js worker pool. What the browser
 * does with IndexedDB, Web Locks and Web Workers, minus the browser.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { spawnNodeSqlWorker, folderDbSource } from '../../src/adapters/node/sql-worker-host.ts';
import { createSqlWorkerSchemaSource } from '../../src/adapters/engines/sql-worker-schema-source.ts';
import { pairRunPredictions } from '../../src/adapters/import/pair-run.ts';
import { sha256Of } from '../../src/adapters/import/hash-stream.ts';
import { SqlPool } from '../../src/adapters/sql-pool.ts';
import { StoreError } from '../../src/app/store-errors.ts';
import { pairSeriesDump } from '../../src/adapters/import/pair-series.ts';
import type { DatasetRecord, SeriesFolderRecord, SeriesRecord } from '../../src/app/records.ts';
import type { AppPorts, RunInputs, RunSession, SeriesAppPorts } from '../../src/app/ports.ts';
import { sampleKey } from '../../src/core/eval/constants.ts';
import { parseGoldSql } from '../../src/core/formats/gold.ts';
import { parseQuestions } from '../../src/core/formats/questions.ts';
import type { RunHeader, SampleRecord } from '../../src/core/run/types.ts';
import { memorySuiteCache } from '../../src/core/ts/suite.ts';
import type { GoldOverlayRecord } from '../../src/core/run/overlay-record.ts';
import type { VersionCheckRecord } from '../../src/core/run/version-effects.ts';

/**
 * A dataset record of a questions file, a gold file and the databases under `dbRoot`, each named
 * by the sha256 of its file as the app's import stores it (the verdict cache looks verdicts up
 * under it, and stores them under the sha256 of the bytes the pool loaded: the same when unchanged).
 */
export async function fileDataset(files: { questions: string; gold: string; dbRoot: string }): Promise<DatasetRecord> {
  const questionsText = readFileSync(files.questions, 'utf8');
  const goldText = readFileSync(files.gold, 'utf8');
  const questions = parseQuestions(questionsText, path.basename(files.questions));
  const ref = async (file: string, text: string) => ({ name: path.basename(file), ...(await sha256Of(text)) });
  const databases: Record<string, string> = {};
  for (const dbId of new Set(questions.map((q) => q.dbId))) {
    const file = path.join(files.dbRoot, dbId, `${dbId}.sqlite`);
    if (existsSync(file)) databases[dbId] = createHash('sha256').update(readFileSync(file)).digest('hex');
  }
  return {
    id: path.basename(files.questions),
    name: path.basename(files.questions),
    kind: 'bird',
    createdAt: new Date(0).toISOString(),
    questionsFile: await ref(files.questions, questionsText),
    goldFile: await ref(files.gold, goldText),
    questions,
    gold: parseGoldSql(goldText, path.basename(files.gold)),
    databases,
  };
}

export interface MemoryApp {
  ports: AppPorts;
  samples(runId: string): SampleRecord[];
}

export function memoryAppPorts(dataset: DatasetRecord, dbRoot: string, workers = 2): MemoryApp {
  const runs = new Map<string, RunHeader>();
  const inputs = new Map<string, RunInputs>();
  const samples = new Map<string, SampleRecord[]>();
  const overlays = new Map<string, GoldOverlayRecord>();
  const checks = new Map<string, VersionCheckRecord>();
  const locks = new Set<string>();
  const suiteCache = memorySuiteCache();
  const sorted = (runId: string) =>
    [...(samples.get(runId) ?? [])].sort((a, b) => a.index - b.index || a.sample - b.sample);
  const runOrThrow = async (runId: string) => {
    const run = runs.get(runId);
    if (!run) throw new StoreError('NOT_FOUND', `run ${runId} is not stored`);
    return run;
  };
  const ports: AppPorts = {
    runs: {
      async create(header, given) {
        runs.set(header.id, header);
        inputs.set(header.id, given);
      },
      get: runOrThrow,
      put: async (header) => void runs.set(header.id, header),
      list: async () => [...runs.values()],
      putInputs: async (runId, given) => void inputs.set(runId, given),
      inputs: async (runId) => inputs.get(runId),
      storedKeys: async (runId) => new Set(sorted(runId).map((s) => sampleKey(s))),
      samples: async (runId) => sorted(runId),
      async delete(runId) {
        runs.delete(runId);
        inputs.delete(runId);
        samples.delete(runId);
      },
    },
    datasets: {
      async get(datasetId) {
        if (datasetId !== dataset.id) throw new StoreError('NOT_FOUND', `dataset ${datasetId} is not stored`);
        return dataset;
      },
      questionsWithDatabase: async (d) => d.questions.flatMap((q, i) => (d.databases[q.dbId] ? [i] : [])),
      storedDbIds: async (databases) => new Set(Object.keys(databases)),
      source: () => folderDbSource(dbRoot),
      suiteCache: () => suiteCache,
    },
    extras: {
      overlay: async (runId) => overlays.get(runId),
      putOverlay: async (record) => void overlays.set(record.runId, record),
      removeOverlay: async (runId) => void overlays.delete(runId),
      versionCheck: async (runId) => checks.get(runId),
      putVersionCheck: async (record) => void checks.set(record.runId, record),
    },
    sessions: {
      async withLock(runId, lockedMessage, body) {
        if (locks.has(runId)) throw new StoreError('LOCKED', lockedMessage);
        locks.add(runId);
        try {
          return await body();
        } finally {
          locks.delete(runId);
        }
      },
      async open(run, signal): Promise<RunSession> {
        const stop = new AbortController();
        const forward = () => stop.abort(signal?.reason);
        signal?.addEventListener('abort', forward, { once: true });
        if (signal?.aborted) forward();
        return {
          signal: stop.signal,
          push: (s) => void (samples.get(run.id) ?? samples.set(run.id, []).get(run.id)!).push(s),
          async finish(failure, status, _counts, patch = {}) {
            signal?.removeEventListener('abort', forward);
            const final: RunHeader = {
              ...run,
              ...patch,
              status: failure ? 'failed' : status,
              updatedAt: new Date().toISOString(),
            };
            runs.set(run.id, final);
            if (failure) throw failure;
            return final;
          },
        };
      },
    },
    pairing: { pair: pairRunPredictions, hashText: sha256Of },
    executors: {
      name: 'sql.js in worker_threads (Node, test)',
      createExecutor: (source, extras) =>
        new SqlPool({
          spawn: spawnNodeSqlWorker,
          dbSource: source,
          size: workers,
          ...(extras?.suiteCache ? { suiteCache: extras.suiteCache } : {}),
        }),
      // sql.js 1.8.0 (SQLite 3.39.3) in worker_threads: the version check's engine.
      createOlderExecutor: async (source) =>
        new SqlPool({ spawn: () => spawnNodeSqlWorker('legacy'), dbSource: source, size: 1 }),
      async openSchemaSource(source, cacheBytes) {
        const worker = spawnNodeSqlWorker();
        await worker.api.init({ cacheBytes });
        const schema = createSqlWorkerSchemaSource({ api: worker.api, dbSource: source });
        return { source: schema, query: (dbId, sql) => schema.query(dbId, sql), dispose: () => worker.terminate() };
      },
    },
  };
  return { ports, samples: sorted };
}

/** The series service's ports over memory: the app's (above), a series repository in Maps, the dump reader of the import worker run in this thread. */
export function memorySeriesPorts(app: MemoryApp): SeriesAppPorts & { scores: Map<string, Array<number | null>> } {
  const series = new Map<string, SeriesRecord>();
  const scores = new Map<string, Array<number | null>>();
  const rewards = new Map<string, Array<Record<string, number | null> | null>>();
  const folders = new Map<string, SeriesFolderRecord>();
  const get = async (id: string) => {
    const s = series.get(id);
    if (!s) throw new StoreError('NOT_FOUND', `training run ${id} is not stored`);
    return structuredClone(s);
  };
  return {
    ...app.ports,
    scores,
    series: {
      list: async () => [...series.values()],
      get,
      async create(s) {
        if (series.has(s.id)) throw new StoreError('ALREADY_EXISTS', `training run "${s.name}" is already stored`);
        series.set(s.id, structuredClone(s));
      },
      async addStep(id, step, given, givenRewards) {
        const s = await get(id);
        if (s.steps.some((x) => x.step === step.step))
          throw new StoreError('ALREADY_EXISTS', `step ${step.step} is already in training run "${s.name}"`);
        const steps = [...s.steps, step].sort((a, b) => a.step - b.step);
        const next = { ...s, steps, runIds: steps.map((x) => x.runId) };
        series.set(id, next);
        scores.set(`${id}/${step.step}`, given);
        if (givenRewards) rewards.set(`${id}/${step.step}`, givenRewards);
        return structuredClone(next);
      },
      rename: async (id, name) => void series.set(id, { ...(await get(id)), name }),
      async delete(id) {
        const s = series.get(id);
        for (const step of s?.steps.filter((x) => x.owned) ?? []) await app.ports.runs.delete(step.runId);
        series.delete(id);
        folders.delete(id);
      },
      ofRun: async (runId) => [...series.values()].filter((s) => s.runIds.includes(runId)),
      scores: async (id, step) => scores.get(`${id}/${step}`) ?? [],
      rewards: async (id, step) => rewards.get(`${id}/${step}`) ?? [],
      folder: async (id) => folders.get(id),
      putFolder: async (f) => void folders.set(f.seriesId, { ...f, taken: [...f.taken] }),
      deleteFolder: async (id) => void folders.delete(id),
    },
    dumps: { read: pairSeriesDump },
    seriesFiles: {
      importSeriesFile: () => {
        throw new Error('not in memory: a series file is stored by the import worker (tests/browser/series.test.ts)');
      },
    },
  };
}
