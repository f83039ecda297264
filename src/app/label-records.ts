/**
 * The records of human labels in the rubrics database (the adapter's label-store.ts reads and writes them;
 * its idb-judge-cache.ts declares their stores; rubric-ports.ts declares the repository), apart so neither imports the other.
 */
import type { HumanLabel } from '../core/rubric/labels.ts';

/** A label as stored: `criterionKey` is the criterion, or '' for a whole response (part of the key). */
export interface StoredLabel extends HumanLabel {
  criterionKey: string;
}

export type LabelMode = 'criteria' | 'responses';

/** Where a labeller was in a run's queue: the position of the item shown. */
export interface LabelProgress {
  labeller: string;
  runId: string;
  mode: LabelMode;
  position: number;
  updatedAt: string;
}
