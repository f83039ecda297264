/**
 * RaR-style rubric datasets and their runs in the browser, in the rubrics database
 * (idb-judge-cache.ts, version 2):
 * - `rarDatasets`: the parsed rows of an imported JSONL file, with its name, size and sha256;
 * - `rarRuns`: a run's header: dataset, policy (engine and model, or the replayed completions,
 *   kept so that a resume needs no file), judge, sampling, aggregations, status;
 * - `rarSamples`: every sample (completion, generation facts, rubric scores), by
 *   [runId, index, sample], written one question at a time in a transaction.
 * A run holds the Web Lock `rar:<id>` while it runs: a second tab is refused, and a `running`
 * run whose lock nobody holds was interrupted (closed tab, reload) and can be resumed: only
 * the (index, sample) keys not stored are generated and judged.
 */
import type { Engine } from '../../core/engine/engine.ts';
import type { Judge } from '../../core/rubric/judge.ts';
import { parseRarJsonl, rarFromRecords } from '../../core/rubric/rar-dataset.ts';
import { rarKey, runRar } from '../../core/rubric/rar-run.ts';
import { sha256Blob, sha256Text } from '../import/pair-run.ts';
import { blobAsyncBuffer, readParquetRecords } from '../parquet/read-parquet.ts';
import { holdLock } from '../store/database-bytes.ts';
import { StoreError, isQuotaError } from '../../app/store-errors.ts';
import type { RubricDb } from './idb-judge-cache.ts';
import type { RarDatasetRecord, RarRunHeader, StoredRarSample } from './rar-records.ts';

export type * from './rar-records.ts';

interface RarRunHooks {
  signal?: AbortSignal;
  onProgress?: (p: { done: number; total: number }) => void;
  onStart?: (run: RarRunHeader) => void;
}

export type NewRarRun = Omit<
  RarRunHeader,
  'id' | 'createdAt' | 'updatedAt' | 'status' | 'error' | 'planned' | 'dataset' | 'judge'
> & { datasetId: string };

const lockName = (runId: string) => `rar:${runId}`;
const runRange = (runId: string) => IDBKeyRange.bound([runId, -Infinity, -Infinity], [runId, Infinity, Infinity]);
const now = () => new Date().toISOString();

function quotaMessage(what: string): StoreError {
  return new StoreError(
    'QUOTA_EXCEEDED',
    `Browser storage is full: ${what}. Nothing stored before was changed. Free space by deleting datasets or runs.`,
  );
}

export class RarRepository {
  constructor(readonly db: RubricDb) {}

  /**
   * Parses (errors name the file and line, or row group, row and column) and stores a RaR
   * dataset: JSONL text, or a released Parquet split as a Blob (`train-00000-of-00001.parquet`);
   * nothing is stored when it does not parse.
   */
  async importDataset(
    source: string | Blob,
    fileName: string,
    name = fileName.replace(/\.(jsonl?|parquet)$/i, ''),
  ): Promise<RarDatasetRecord> {
    let rows, sha256, bytes;
    if (typeof source === 'string') {
      rows = parseRarJsonl(source, fileName);
      ({ sha256, bytes } = await sha256Text(source));
    } else {
      rows = rarFromRecords(await readParquetRecords({ name: fileName, file: blobAsyncBuffer(source) }), fileName);
      ({ sha256, bytes } = await sha256Blob(source));
    }
    const record: RarDatasetRecord = {
      id: crypto.randomUUID(),
      name,
      file: { name: fileName, sha256, bytes },
      importedAt: now(),
      rows,
    };
    try {
      await this.db.put('rarDatasets', record);
    } catch (err) {
      if (isQuotaError(err)) throw quotaMessage(`rubric dataset "${name}" was not imported`);
      throw err;
    }
    return record;
  }

  async listDatasets(): Promise<RarDatasetRecord[]> {
    return (await this.db.getAll('rarDatasets')).sort((a, b) => b.importedAt.localeCompare(a.importedAt));
  }

  getDataset(id: string): Promise<RarDatasetRecord | undefined> {
    return this.db.get('rarDatasets', id);
  }

  /** Deletes a dataset; refused while runs of it are stored (delete them first). */
  async deleteDataset(id: string): Promise<void> {
    const runs = (await this.listRuns()).filter((r) => r.dataset.id === id);
    if (runs.length)
      throw new StoreError(
        'LOCKED',
        `${runs.length} run(s) use this dataset (${runs.map((r) => `"${r.name}"`).join(', ')}): delete them first`,
      );
    await this.db.delete('rarDatasets', id);
  }

  async listRuns(): Promise<RarRunHeader[]> {
    return (await this.db.getAll('rarRuns')).sort((a, b) => b.createdAt.localeCompare(a.createdAt));
  }

  getRun(id: string): Promise<RarRunHeader | undefined> {
    return this.db.get('rarRuns', id);
  }

  async samples(runId: string): Promise<StoredRarSample[]> {
    return this.db.getAll('rarSamples', runRange(runId));
  }

  async deleteRun(runId: string): Promise<void> {
    const tx = this.db.transaction(['rarRuns', 'rarSamples'], 'readwrite');
    void tx.objectStore('rarRuns').delete(runId);
    void tx.objectStore('rarSamples').delete(runRange(runId));
    await tx.done;
  }

  /** Runs a Web Lock holds right now (in any tab); a `running` run not listed was interrupted. */
  async activeRunIds(): Promise<string[]> {
    const held = (await navigator.locks?.query())?.held ?? [];
    return held
      .map((l) => l.name ?? '')
      .filter((n) => n.startsWith('rar:'))
      .map((n) => n.slice(4));
  }

  /** Creates the run and runs it; `policy` is the loaded engine (absent for a replay). */
  async start(
    req: NewRarRun,
    engines: { policy: Engine | null; judge: Judge | null },
    hooks: RarRunHooks = {},
  ): Promise<RarRunHeader> {
    const dataset = await this.getDataset(req.datasetId);
    if (!dataset) throw new StoreError('NOT_FOUND', 'the rubric dataset is no longer stored: import it again');
    const { datasetId: _d, ...rest } = req;
    const header: RarRunHeader = {
      ...rest,
      id: crypto.randomUUID(),
      createdAt: now(),
      updatedAt: now(),
      status: 'running',
      error: null,
      dataset: { id: dataset.id, name: dataset.name, file: dataset.file },
      judge: engines.judge?.info ?? null,
      planned: 0,
    };
    header.planned = dataset.rows.reduce(
      (n, row) =>
        n +
        (req.policy.kind === 'replay'
          ? Math.min(req.samplesPerQuestion, req.policy.completions[row.index]?.length ?? 0)
          : req.samplesPerQuestion),
      0,
    );
    try {
      await this.db.put('rarRuns', header);
    } catch (err) {
      if (isQuotaError(err)) throw quotaMessage(`run "${req.name}" was not started`);
      throw err;
    }
    return this.drive(header, dataset, engines, hooks);
  }

  /** Continues an interrupted or cancelled run: only samples not stored are generated and judged. */
  async resume(
    runId: string,
    engines: { policy: Engine | null; judge: Judge | null },
    hooks: RarRunHooks = {},
  ): Promise<RarRunHeader> {
    const run = await this.getRun(runId);
    if (!run) throw new StoreError('NOT_FOUND', 'this rubric run is no longer stored');
    const dataset = await this.getDataset(run.dataset.id);
    if (!dataset)
      throw new StoreError(
        'NOT_FOUND',
        `run "${run.name}": its dataset "${run.dataset.name}" was deleted, so it cannot be resumed`,
      );
    return this.drive(run, dataset, engines, hooks);
  }

  private async drive(
    run: RarRunHeader,
    dataset: RarDatasetRecord,
    engines: { policy: Engine | null; judge: Judge | null },
    hooks: RarRunHooks,
  ): Promise<RarRunHeader> {
    if (run.policy.kind === 'engine' && !engines.policy)
      throw new StoreError(
        'NOT_FOUND',
        `run "${run.name}" needs its policy engine (${run.policy.engine} · ${run.policy.model.id}) loaded`,
      );
    const release = await holdLock(lockName(run.id), true);
    if (!release)
      throw new StoreError(
        'LOCKED',
        `run "${run.name}" is running in another tab: follow it there, or close that tab and resume it here`,
      );
    const setStatus = async (status: RarRunHeader['status'], error: string | null = null) => {
      const latest = (await this.getRun(run.id)) ?? run;
      const next = { ...latest, status, error, updatedAt: now() };
      await this.db.put('rarRuns', next);
      return next;
    };
    try {
      hooks.onStart?.(await setStatus('running'));
      const done = new Set(
        (await this.db.getAllKeys('rarSamples', runRange(run.id))).map(([, index, sample]) => rarKey(index, sample)),
      );
      const policy = run.policy;
      const outcome = await runRar({
        rows: dataset.rows,
        samples: run.samplesPerQuestion,
        policy:
          policy.kind === 'engine'
            ? { kind: 'engine', engine: engines.policy!, params: policy.params }
            : {
                kind: 'replay',
                completions: new Map(Object.entries(policy.completions).map(([k, v]) => [Number(k), v])),
              },
        judge: engines.judge,
        aggregations: run.aggregations,
        explicit: run.explicit,
        weighting: run.weighting,
        done,
        write: async (samples) => {
          const tx = this.db.transaction('rarSamples', 'readwrite');
          for (const s of samples) void tx.store.put({ ...s, runId: run.id });
          try {
            await tx.done;
          } catch (err) {
            if (isQuotaError(err))
              throw quotaMessage(
                `the samples of question "${samples[0]?.rowId}" were not stored (the ${done.size} stored before are kept; resume the run once there is room)`,
              );
            throw err;
          }
        },
        signal: hooks.signal,
        onProgress: hooks.onProgress,
      });
      return await setStatus(outcome === 'done' ? 'done' : 'cancelled');
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      await setStatus('failed', message).catch(() => undefined);
      throw err;
    } finally {
      release();
    }
  }
}
