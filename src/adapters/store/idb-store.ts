/**
 * WorkbenchStore on IndexedDB (idb). Datasets, database metadata (one record per sha256),
 * database bytes (Blob chunks, see schema.ts), runs, their inputs and their samples. Imports
 * and predictions parsing run in the import worker; SQL runs in the sql.js worker pool.
 */
import { sha256Text } from '../import/pair-run.ts';
import { WorkbenchError } from '../../core/errors.ts';
import type { SqlExecutor } from '../../core/eval/executor.ts';
import { toRunFile } from '../../core/run/export.ts';
import { parseRunFile } from '../../core/run/run-file.ts';
import type { RunFile, RunHeader, SampleRecord } from '../../core/run/types.ts';
import type { EvalItem } from '../../core/types.ts';
import { createBrowserSqlPool } from '../browser/sql-worker-host.ts';
import { importInWorker, pairInWorker } from '../import/import-client.ts';
import type { DbSource } from '../sql-pool.ts';
import { deleteOrphanChunks, holdLock } from './database-bytes.ts';
import { StoreError, isQuotaError } from './errors.ts';
import { storedDbIds } from './store-db-source.ts';
import { executeRun, itemKey, type ExecutionContext } from './run-execution.ts';
import type { Engine } from '../../core/engine/engine.ts';
import type { BuiltPrompt } from '../../core/prompt/build-prompt.ts';
import {
  databaseSchemas, generationPlan, previewGenerationPrompt, questionsWithDatabase, resumeGenerationRun, startGenerationRun,
  type GenerationHooks, type GenerationPreviewSpec, type GenerationPlan, type GenerationRunRequest, type GenerationRunResult, type GenerationStoreContext,
} from './generation-run.ts';
import { allSamples, countSamples, samplePage, storedKeys } from './sample-blocks.ts';
import { BLOCK_SIZE, DEFAULT_DB_NAME, blockRange, chunkRange, openWorkbenchDb, type WorkbenchIdb } from './schema.ts';
import type {
  DatasetCard, DatasetRecord, GoldSelfTestResult, RunRequest, SampleRubric, StorageInfo, StoredDatabase, WorkbenchStore,
} from './workbench-store.ts';

export interface IdbStoreOptions {
  /** IndexedDB database name (default `rlvr-workbench`); tests use their own. */
  dbName?: string;
  /** SQL executor for runs (default: the browser sql.js worker pool). */
  createExecutor?: (source: DbSource) => SqlExecutor;
  /** Written into each run header. */
  executorName?: string;
  /** Test doubles for a full disk (real `QuotaExceededError` DOMExceptions thrown at that point). */
  testing?: { simulateQuotaAfterBytes?: number; simulateQuotaAfterSamples?: number };
}

const runLock = (runId: string) => `run:${runId}`;

class IdbStore implements WorkbenchStore {
  private readonly dbName: string;
  private readonly opened: Promise<WorkbenchIdb>;

  constructor(private readonly opts: IdbStoreOptions) {
    this.dbName = opts.dbName ?? DEFAULT_DB_NAME;
    this.opened = openWorkbenchDb(this.dbName);
    // Chunks of an import that died with its tab; harmless if it finds none.
    this.opened.then((idb) => deleteOrphanChunks(idb)).catch(() => undefined);
  }

  private idb(): Promise<WorkbenchIdb> {
    return this.opened;
  }

  private context(idb: WorkbenchIdb): ExecutionContext {
    return {
      idb,
      createExecutor: this.opts.createExecutor ?? ((source) => createBrowserSqlPool(source)),
      simulateQuotaAfterSamples: this.opts.testing?.simulateQuotaAfterSamples,
    };
  }

  async storage(): Promise<StorageInfo> {
    const est = await navigator.storage.estimate();
    return { usage: est.usage ?? 0, quota: est.quota ?? 0, persisted: await navigator.storage.persisted() };
  }

  async requestPersistence(): Promise<boolean> {
    return navigator.storage?.persist ? navigator.storage.persist() : false;
  }

  async importDataset(source: Parameters<WorkbenchStore['importDataset']>[0], hooks: Parameters<WorkbenchStore['importDataset']>[1] = {}) {
    await this.idb();
    // Best effort: a persisted origin is not evicted under storage pressure.
    void this.requestPersistence().catch(() => false);
    return importInWorker(
      { dbName: this.dbName, source, simulateQuotaAfterBytes: this.opts.testing?.simulateQuotaAfterBytes },
      hooks,
    );
  }

  async listDatasets(): Promise<DatasetRecord[]> {
    const all = await (await this.idb()).getAll('datasets');
    return all.sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }

  async getDataset(datasetId: string): Promise<DatasetRecord | undefined> {
    return (await this.idb()).get('datasets', datasetId);
  }

  private async dataset(datasetId: string): Promise<DatasetRecord> {
    const ds = await this.getDataset(datasetId);
    if (!ds) throw new StoreError('NOT_FOUND', `dataset ${datasetId} is not in browser storage (deleted?)`);
    return ds;
  }

  async listDatabases(): Promise<StoredDatabase[]> {
    const all = await (await this.idb()).getAll('databases');
    return all.map(({ sha256, dbId, sizeBytes, knownAs, storedAt }) => ({ sha256, dbId, sizeBytes, knownAs, storedAt }));
  }

  async datasetCard(datasetId: string): Promise<DatasetCard> {
    const idb = await this.idb();
    const dataset = await this.dataset(datasetId);
    const byDifficulty: Record<string, number> = {};
    const byDb: DatasetCard['byDb'] = {};
    const questionsWithoutDb: number[] = [];
    for (const [i, q] of dataset.questions.entries()) {
      byDifficulty[q.difficulty] = (byDifficulty[q.difficulty] ?? 0) + 1;
      const sha = dataset.databases[q.dbId] ?? null;
      let entry = byDb[q.dbId];
      if (!entry) {
        const rec = sha ? await idb.get('databases', sha) : undefined;
        entry = byDb[q.dbId] = { questions: 0, sizeBytes: rec?.sizeBytes ?? null, sha256: rec ? sha : null, knownAs: rec?.knownAs ?? null };
      }
      entry.questions++;
      if (entry.sha256 === null) questionsWithoutDb.push(i);
    }
    return { dataset, byDifficulty, byDb, questionsWithoutDb };
  }

  /** Deletes database records and chunks that no dataset or run refers to any more. */
  private async deleteUnreferenced(idb: WorkbenchIdb, candidates: Iterable<string>): Promise<void> {
    const tx = idb.transaction(['datasets', 'runs', 'databases', 'chunks'], 'readwrite');
    const used = new Set<string>();
    for (const d of await tx.objectStore('datasets').getAll()) for (const s of Object.values(d.databases)) used.add(s);
    for (const r of await tx.objectStore('runs').getAll()) for (const s of Object.values(r.dataset.databases)) used.add(s);
    for (const sha of new Set(candidates)) {
      if (used.has(sha)) continue;
      await tx.objectStore('databases').delete(sha);
      await tx.objectStore('chunks').delete(chunkRange(sha));
    }
    await tx.done;
  }

  async deleteDataset(datasetId: string): Promise<void> {
    const idb = await this.idb();
    const ds = await idb.get('datasets', datasetId);
    if (!ds) return;
    await idb.delete('datasets', datasetId);
    await this.deleteUnreferenced(idb, Object.values(ds.databases));
  }

  // ---- Runs ----

  private async createAndExecute(
    header: RunHeader,
    items: EvalItem[],
    hooks: Parameters<WorkbenchStore['startRun']>[1] = {},
  ): Promise<RunHeader> {
    const idb = await this.idb();
    const release = await holdLock(runLock(header.id), true);
    if (!release) throw new StoreError('LOCKED', `run "${header.name}" is already being evaluated`);
    try {
      const tx = idb.transaction(['runs', 'runInputs'], 'readwrite');
      void tx.objectStore('runs').put(header);
      void tx.objectStore('runInputs').put({ runId: header.id, items });
      await tx.done;
      return await executeRun(this.context(idb), header, items, 0, hooks);
    } finally {
      release();
    }
  }

  private newHeader(req: { name: string; subset: RunHeader['subset']; config: RunHeader['config'] }, dataset: DatasetRecord, predictions: { name: string; sha256: string; bytes: number }): RunHeader {
    const now = new Date().toISOString();
    return {
      id: crypto.randomUUID(),
      name: req.name,
      createdAt: now,
      updatedAt: now,
      status: 'running',
      source: { kind: 'replay', predictions },
      dataset: { id: dataset.id, name: dataset.name, questions: dataset.questionsFile, gold: dataset.goldFile, databases: { ...dataset.databases } },
      subset: req.subset,
      config: req.config,
      samplesPerQuestion: 1,
      executor: this.opts.executorName ?? 'sql.js in Web Workers (browser)',
    };
  }

  async startRun(req: RunRequest, hooks: Parameters<WorkbenchStore['startRun']>[1] = {}): Promise<RunHeader> {
    const dataset = await this.dataset(req.datasetId);
    const paired = await pairInWorker({
      predictionsName: req.predictions.name,
      predictionsText: req.predictions.text,
      questions: dataset.questions,
      gold: dataset.gold,
      fence: req.config.fence,
    });
    const wanted = req.subset.indices.length > 0 ? new Set(req.subset.indices) : null;
    const items = wanted ? paired.items.filter((it) => wanted.has(it.index)) : paired.items;
    if (items.length === 0) {
      throw new WorkbenchError('MISMATCH', 'no question of the chosen subset has a prediction in this file', req.predictions.name);
    }
    const subset = { description: req.subset.description, indices: [...new Set(items.map((it) => it.index))] };
    const header = this.newHeader({ name: req.name, subset, config: req.config }, dataset, {
      name: req.predictions.name, sha256: paired.sha256, bytes: paired.bytes,
    });
    header.samplesPerQuestion = Math.max(...items.map((it) => (it.sample ?? 0) + 1));
    return this.createAndExecute(header, items, hooks);
  }

  async resumeRun(runId: string, hooks: Parameters<WorkbenchStore['resumeRun']>[1] = {}): Promise<RunHeader> {
    const idb = await this.idb();
    const run = await this.runOrThrow(runId);
    const release = await holdLock(runLock(runId), true);
    if (!release) {
      throw new StoreError('LOCKED', `run "${run.name}" is being evaluated in another tab: follow it there, or close that tab and resume it here`);
    }
    try {
      const inputs = await idb.get('runInputs', runId);
      if (inputs?.generation) {
        throw new StoreError('NOT_FOUND', `run "${run.name}" is a generation run: resume it from the Generate page, with its engine and model loaded`);
      }
      if (!inputs) throw new StoreError('NOT_FOUND', `run "${run.name}" was imported from a file and cannot be resumed: its predictions are not stored`);
      const done = await storedKeys(idb, runId);
      const remaining = inputs.items.filter((it) => !done.has(itemKey(it)));
      const header: RunHeader = { ...run, status: 'running', updatedAt: new Date().toISOString() };
      await idb.put('runs', header);
      return await executeRun(this.context(idb), header, remaining, inputs.items.length - remaining.length, hooks);
    } finally {
      release();
    }
  }

  async goldSelfTest(datasetId: string, hooks: Parameters<WorkbenchStore['startRun']>[1] = {}): Promise<GoldSelfTestResult> {
    const dataset = await this.dataset(datasetId);
    const idb = await this.idb();
    const stored = await storedDbIds(idb, dataset.databases);
    // Questions without a database cannot test their gold: they are left out, not listed as failures.
    const all: EvalItem[] = dataset.gold.map((g, index) => ({
      index,
      questionId: dataset.questions[index]?.questionId ?? index,
      dbId: g.dbId,
      difficulty: dataset.questions[index]?.difficulty ?? 'unknown',
      predSql: g.sql,
      goldSql: g.sql,
      extraction: { rule: 'sql-line', thinkStripped: false },
    }));
    const items = all.filter((it) => stored.has(it.dbId));
    if (items.length === 0) {
      throw new StoreError('NOT_FOUND', `dataset "${dataset.name}" has no stored database: there is no gold query to test`);
    }
    const goldText = dataset.gold.map((g) => `${g.sql}\t${g.dbId}`).join('\n');
    const name = `${dataset.name}: gold self-test`;
    const header = this.newHeader(
      { name, subset: { description: 'questions with a stored database', indices: items.map((it) => it.index) }, config: { ...SELF_TEST_CONFIG } },
      dataset,
      { name: dataset.goldFile?.name ?? `${dataset.questionsFile.name} (SQL of the questions)`, ...(await sha256Text(goldText)) },
    );
    const run = await this.createAndExecute(header, items, hooks);
    const failures = (await this.samples(run.id))
      .filter((s) => s.status !== 'ok' || s.ex !== 1)
      .map((s) => ({ index: s.index, questionId: s.questionId, dbId: s.dbId, status: s.status, error: s.error, sql: s.goldSql }));
    return { run, failures };
  }

  async activeRunIds(): Promise<string[]> {
    const held = (await navigator.locks?.query())?.held ?? [];
    return held.map((l) => l.name ?? '').filter((n) => n.startsWith('run:')).map((n) => n.slice(4));
  }

  async listRuns(): Promise<RunHeader[]> {
    const all = await (await this.idb()).getAll('runs');
    return all.sort((a, b) => b.createdAt.localeCompare(a.createdAt));
  }

  async getRun(runId: string): Promise<RunHeader | undefined> {
    return (await this.idb()).get('runs', runId);
  }

  private async runOrThrow(runId: string): Promise<RunHeader> {
    const run = await this.getRun(runId);
    if (!run) throw new StoreError('NOT_FOUND', `run ${runId} is not in browser storage (deleted?)`);
    return run;
  }

  async samples(runId: string, page?: { offset: number; limit: number }): Promise<SampleRecord[]> {
    const idb = await this.idb();
    return page ? samplePage(idb, runId, page.offset, page.limit) : allSamples(idb, runId);
  }

  async sampleCount(runId: string): Promise<number> {
    return countSamples(await this.idb(), runId);
  }

  async databaseSchemas(runId: string): Promise<Record<string, Record<string, string[]>>> {
    const run = await this.runOrThrow(runId);
    return databaseSchemas(await this.idb(), run.dataset.databases, run.dataset.name);
  }

  async setSampleRubrics(runId: string, scored: readonly SampleRubric[]): Promise<number> {
    const idb = await this.idb();
    const run = await this.runOrThrow(runId);
    const release = await holdLock(runLock(runId), true);
    if (!release) throw new StoreError('LOCKED', `run "${run.name}" is being evaluated: write rubric scores into it once it has finished`);
    try {
      const byKey = new Map(scored.map((s) => [`${s.index}/${s.sample}`, s]));
      let updated = 0;
      // One transaction: every block gets the scores, or (quota, a closed tab) none does.
      const tx = idb.transaction('sampleBlocks', 'readwrite');
      let cursor = await tx.store.openCursor(blockRange(runId));
      while (cursor) {
        let changed = false;
        const samples = cursor.value.samples.map((rec) => {
          const s = byKey.get(`${rec.index}/${rec.sample}`);
          if (!s) return rec;
          changed = true;
          updated += 1;
          const next: SampleRecord = { ...rec, rubric: s.rubric };
          if (s.rubricScore === null) delete next.rubricScore;
          else next.rubricScore = s.rubricScore;
          return next;
        });
        if (changed) await cursor.update({ ...cursor.value, samples });
        cursor = await cursor.continue();
      }
      await tx.done;
      return updated;
    } catch (err) {
      if (isQuotaError(err)) throw new StoreError('QUOTA_EXCEEDED', `Browser storage is full: the rubric scores of run "${run.name}" were not written (nothing in the run changed). Free space by deleting datasets or runs.`);
      throw err;
    } finally {
      release();
    }
  }

  async renameRun(runId: string, name: string): Promise<void> {
    const idb = await this.idb();
    const tx = idb.transaction('runs', 'readwrite');
    const run = await tx.store.get(runId);
    if (run) await tx.store.put({ ...run, name, updatedAt: new Date().toISOString() });
    await tx.done;
  }

  async deleteRun(runId: string): Promise<void> {
    const idb = await this.idb();
    const run = await idb.get('runs', runId);
    const tx = idb.transaction(['runs', 'runInputs', 'sampleBlocks', 'sampleMeta'], 'readwrite');
    void tx.objectStore('runs').delete(runId);
    void tx.objectStore('runInputs').delete(runId);
    void tx.objectStore('sampleBlocks').delete(blockRange(runId));
    void tx.objectStore('sampleMeta').delete(runId);
    await tx.done;
    if (run) await this.deleteUnreferenced(idb, Object.values(run.dataset.databases));
  }

  async exportRun(runId: string): Promise<RunFile> {
    return toRunFile(await this.runOrThrow(runId), await this.samples(runId));
  }

  async importRunFile(text: string, fileName: string): Promise<RunHeader> {
    const parsed = parseRunFile(text, fileName);
    const file = toRunFile(parsed.run, parsed.samples); // (index, sample) order
    const idb = await this.idb();
    const existing = await idb.get('runs', file.run.id);
    if (existing) throw new StoreError('ALREADY_EXISTS', `${fileName}: this run is already stored as "${existing.name}"`);
    const run: RunHeader = file.run.status === 'running' ? { ...file.run, status: 'cancelled' } : file.run;
    const samples = file.samples; // sorted and unique: checked by parseRunFile's caller below
    const tx = idb.transaction(['runs', 'sampleBlocks', 'sampleMeta'], 'readwrite');
    void tx.objectStore('runs').put(run);
    for (let b = 0; b * BLOCK_SIZE < samples.length; b++) {
      void tx.objectStore('sampleBlocks').put({ runId: run.id, block: b, samples: samples.slice(b * BLOCK_SIZE, (b + 1) * BLOCK_SIZE) });
    }
    void tx.objectStore('sampleMeta').put({ runId: run.id, sorted: true, count: samples.length, blockSize: BLOCK_SIZE });
    await tx.done;
    return run;
  }

  async startGenerationRun(req: GenerationRunRequest, engine: Engine, hooks: GenerationHooks = {}): Promise<GenerationRunResult> {
    const dataset = await this.dataset(req.datasetId);
    return startGenerationRun(await this.generationContext(), dataset, req, engine, hooks);
  }

  async resumeGenerationRun(runId: string, engine: Engine, hooks: GenerationHooks = {}): Promise<GenerationRunResult> {
    return resumeGenerationRun(await this.generationContext(), runId, engine, hooks);
  }

  async generationPlan(runId: string): Promise<GenerationPlan | undefined> {
    return generationPlan(await this.idb(), runId);
  }

  async questionsWithDatabase(datasetId: string): Promise<number[]> {
    return questionsWithDatabase(await this.idb(), await this.dataset(datasetId));
  }

  async previewGenerationPrompt(datasetId: string, index: number, spec: GenerationPreviewSpec, engine: Engine | null): Promise<BuiltPrompt> {
    return previewGenerationPrompt(await this.idb(), await this.dataset(datasetId), index, spec, engine);
  }

  private async generationContext(): Promise<GenerationStoreContext> {
    return { ...this.context(await this.idb()), executorName: this.opts.executorName ?? 'sql.js in Web Workers (browser)' };
  }

  close(): void {
    void this.opened.then((idb) => idb.close()).catch(() => undefined);
  }
}

/** Gold self-test: EX only, the official 30 s timeout, writes allowed as in the official evaluator. */
const SELF_TEST_CONFIG: RunHeader['config'] = {
  metrics: ['ex'], timeoutMs: 30_000, readOnly: false, vesIterations: 0, fence: 'last', rewardFormula: 'ex',
};

export function createIdbStore(options: IdbStoreOptions = {}): WorkbenchStore {
  return new IdbStore(options);
}
