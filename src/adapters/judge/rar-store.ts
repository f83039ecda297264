/**
 * RaR-style rubric datasets and their runs in the browser, in the rubrics database
 * (idb-judge-cache.ts, version 2):
 * - `rarDatasets`: the parsed rows of an imported JSONL file, with its name, size and sha256;
 * - `rarRuns`: a run's header: dataset, policy (engine and model, or the replayed completions,
 *   kept so that a resume needs no file), judge, sampling, aggregations, status;
 * - `rarSamples`: every sample (completion, generation facts, rubric scores), by
 *   [runId, index, sample], written one question at a time in a transaction.
 * A run holds the Web Lock `rar:<id>` while it runs (`lockRun`): a second tab is refused, and a
 * `running` run whose lock nobody holds was interrupted (closed tab, reload) and can be resumed.
 * Starting and resuming a run is the application's (src/app/rubric-run-service.ts); this is the
 * RarRepository port over IndexedDB.
 */
import { parseRarJsonl, rarFromRecords } from '../../core/rubric/rar-dataset.ts';
import type { RarSample } from '../../core/rubric/rar-run.ts';
import { sha256Of } from '../import/hash-stream.ts';
import { blobAsyncBuffer, readParquetRecords } from '../parquet/read-parquet.ts';
import { holdLock } from '../store/database-bytes.ts';
import { StoreError, isQuotaError } from '../../app/store-errors.ts';
import type { RubricDb } from './idb-judge-cache.ts';
import type { RarDatasetRecord, RarRunHeader, StoredRarSample } from '../../app/rar-records.ts';
import type { RarRepository as RarRepositoryPort } from '../../app/rubric-ports.ts';

const lockName = (runId: string) => `rar:${runId}`;
const runRange = (runId: string) => IDBKeyRange.bound([runId, -Infinity, -Infinity], [runId, Infinity, Infinity]);
const now = () => new Date().toISOString();

function quotaMessage(what: string): StoreError {
  return new StoreError(
    'QUOTA_EXCEEDED',
    `Browser storage is full: ${what}. Nothing stored before was changed. Free space by deleting datasets or runs.`,
  );
}

export class RarRepository implements RarRepositoryPort {
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
      ({ sha256, bytes } = await sha256Of(source));
    } else {
      rows = rarFromRecords(await readParquetRecords({ name: fileName, file: blobAsyncBuffer(source) }), fileName);
      ({ sha256, bytes } = await sha256Of(source));
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

  putRun(run: RarRunHeader): Promise<void> {
    return this.db.put('rarRuns', run).then(() => undefined);
  }

  async sampleKeys(runId: string): Promise<Array<{ index: number; sample: number }>> {
    return (await this.db.getAllKeys('rarSamples', runRange(runId))).map(([, index, sample]) => ({ index, sample }));
  }

  async putSamples(runId: string, samples: readonly RarSample[]): Promise<void> {
    const tx = this.db.transaction('rarSamples', 'readwrite');
    for (const s of samples) void tx.store.put({ ...s, runId });
    await tx.done;
  }

  /** The Web Lock `rar:<id>`, held across tabs. */
  lockRun(runId: string): Promise<(() => void) | null> {
    return holdLock(lockName(runId), true);
  }
}
