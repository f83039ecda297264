/**
 * Rubrics in the browser: their own small IndexedDB database `rlvr-workbench-rubrics` (the
 * workbench store's schema is left alone), holding
 * - `rubrics`: the rubrics of the editor, by id;
 * - `judgeCache`: the JudgeCache port (raw judge answers by the hash of prompt, model and
 *   parameters), so re-scoring or re-aggregating a run makes no judge call;
 * - `scores`: a run's per-sample RubricScores for one rubric, by [runId, rubricId];
 * - (version 2) `rarDatasets`, `rarRuns` and `rarSamples`: RaR-style rubric datasets and their
 *   runs, every sample by [runId, index, sample] (rar-store.ts);
 * - (version 3) `labels`: human labels by [labeller, dataset, question, response, criterion]
 *   (criterion '' for a whole response), and `labelProgress`: where each labeller was in each
 *   run's labelling queue (label-store.ts).
 */
import { openDB, type DBSchema, type IDBPDatabase } from 'idb';
import type { CachedAnswer, JudgeCache } from '../../core/rubric/judge-cache.ts';
import type { Rubric } from '../../core/rubric/model.ts';
import type { RarDatasetRecord, RarRunHeader, StoredRarSample } from '../../app/rar-records.ts';
import type {
  RubricRepository as RubricRepositoryPort,
  StoredRubric,
  StoredRubricRun,
} from '../../app/rubric-ports.ts';
import type { LabelProgress, StoredLabel } from '../../app/label-records.ts';

const RUBRIC_DB_NAME = 'rlvr-workbench-rubrics';
const RUBRIC_DB_VERSION = 3;

interface RubricDB extends DBSchema {
  rubrics: { key: string; value: StoredRubric };
  judgeCache: { key: string; value: { key: string } & CachedAnswer };
  scores: { key: [string, string]; value: StoredRubricRun };
  rarDatasets: { key: string; value: RarDatasetRecord };
  rarRuns: { key: string; value: RarRunHeader };
  rarSamples: { key: [string, number, number]; value: StoredRarSample };
  labels: { key: [string, string, string, string, string]; value: StoredLabel };
  labelProgress: { key: [string, string, string]; value: LabelProgress };
}

export type RubricDb = IDBPDatabase<RubricDB>;

export function openRubricDb(name = RUBRIC_DB_NAME): Promise<RubricDb> {
  return openDB<RubricDB>(name, RUBRIC_DB_VERSION, {
    upgrade(db, oldVersion) {
      if (oldVersion < 1) {
        db.createObjectStore('rubrics', { keyPath: 'rubric.id' });
        db.createObjectStore('judgeCache', { keyPath: 'key' });
        db.createObjectStore('scores', { keyPath: ['runId', 'rubricId'] });
      }
      if (oldVersion < 2) {
        db.createObjectStore('rarDatasets', { keyPath: 'id' });
        db.createObjectStore('rarRuns', { keyPath: 'id' });
        db.createObjectStore('rarSamples', { keyPath: ['runId', 'index', 'sample'] });
      }
      // Version 3 adds the human labels; nothing stored before is touched.
      if (oldVersion < 3) {
        db.createObjectStore('labels', { keyPath: ['labeller', 'dataset', 'question', 'response', 'criterionKey'] });
        db.createObjectStore('labelProgress', { keyPath: ['labeller', 'runId', 'mode'] });
      }
    },
  });
}

class IdbJudgeCache implements JudgeCache {
  constructor(private readonly db: RubricDb) {}

  async get(key: string): Promise<CachedAnswer | undefined> {
    const hit = await this.db.get('judgeCache', key);
    return hit ? { text: hit.text, finishReason: hit.finishReason } : undefined;
  }

  async set(key: string, answer: CachedAnswer): Promise<void> {
    await this.db.put('judgeCache', { key, text: answer.text, finishReason: answer.finishReason });
  }

  count(): Promise<number> {
    return this.db.count('judgeCache');
  }
}

/** The editor's rubrics and the stored scorings, over the same database. */
export class RubricRepository implements RubricRepositoryPort {
  constructor(readonly db: RubricDb) {}

  async list(): Promise<StoredRubric[]> {
    const all = await this.db.getAll('rubrics');
    return all.sort((a, b) => a.rubric.title.localeCompare(b.rubric.title));
  }
  async save(rubric: Rubric): Promise<void> {
    await this.db.put('rubrics', { rubric, updatedAt: new Date().toISOString() });
  }
  async remove(id: string): Promise<void> {
    await this.db.delete('rubrics', id);
  }
  async saveScores(run: StoredRubricRun): Promise<void> {
    await this.db.put('scores', run);
  }
  getScores(runId: string, rubricId: string): Promise<StoredRubricRun | undefined> {
    return this.db.get('scores', [runId, rubricId]);
  }
  cache(): IdbJudgeCache {
    return new IdbJudgeCache(this.db);
  }
}
