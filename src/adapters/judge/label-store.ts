/**
 * Human labels in the browser, in the rubrics database (idb-judge-cache.ts, version 3):
 * `labels` (one per labeller and item, core/rubric/labels.ts) and `labelProgress` (where each
 * labeller was in a run's queue, so a reload resumes there). An import merges in one
 * transaction: a file with a bad line changes nothing.
 */
import { mergeLabels, type HumanLabel, type LabelMerge } from '../../core/rubric/labels.ts';
import { StoreError, isQuotaError } from '../../app/store-errors.ts';
import type { RubricDb } from './idb-judge-cache.ts';
import type { LabelMode, StoredLabel } from '../../app/label-records.ts';
import type { LabelRepository } from '../../app/rubric-ports.ts';

const stored = (l: HumanLabel): StoredLabel => ({ ...l, criterionKey: l.criterion ?? '' });
const plain = ({ criterionKey: _, ...l }: StoredLabel): HumanLabel => l;

function quota(err: unknown): unknown {
  return isQuotaError(err)
    ? new StoreError(
        'QUOTA_EXCEEDED',
        'Browser storage is full: the labels were not stored. Nothing stored before was changed. Free space by deleting datasets or runs.',
      )
    : err;
}

export class IdbLabelRepository implements LabelRepository {
  constructor(readonly db: RubricDb) {}

  /** Every stored label of a dataset (by its file's sha256). */
  async list(dataset: string): Promise<HumanLabel[]> {
    return (await this.db.getAll('labels')).filter((l) => l.dataset === dataset).map(plain);
  }

  async put(label: HumanLabel): Promise<void> {
    try {
      await this.db.put('labels', stored(label));
    } catch (err) {
      throw quota(err);
    }
  }

  async remove(label: Pick<HumanLabel, 'labeller' | 'dataset' | 'question' | 'response' | 'criterion'>): Promise<void> {
    await this.db.delete('labels', [
      label.labeller,
      label.dataset,
      label.question,
      label.response,
      label.criterion ?? '',
    ]);
  }

  /** Merges parsed labels into the stored ones (mergeLabels: the later of one labeller's two labels wins), in one transaction. */
  async merge(incoming: readonly HumanLabel[]): Promise<LabelMerge> {
    const tx = this.db.transaction('labels', 'readwrite');
    try {
      const store = tx.objectStore('labels');
      const existing = await Promise.all(
        incoming.map((l) => store.get([l.labeller, l.dataset, l.question, l.response, l.criterion ?? ''])),
      );
      const result = mergeLabels(existing.filter((x): x is StoredLabel => x !== undefined).map(plain), incoming);
      await Promise.all(result.labels.map((l) => store.put(stored(l))));
      await tx.done;
      return result;
    } catch (err) {
      try {
        tx.abort();
      } catch {
        // already ended
      }
      throw quota(err);
    }
  }

  async position(labeller: string, runId: string, mode: LabelMode): Promise<number> {
    return (await this.db.get('labelProgress', [labeller, runId, mode]))?.position ?? 0;
  }

  async setPosition(labeller: string, runId: string, mode: LabelMode, position: number): Promise<void> {
    await this.db.put('labelProgress', { labeller, runId, mode, position, updatedAt: new Date().toISOString() });
  }
}
