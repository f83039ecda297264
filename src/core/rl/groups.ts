import type { SampleRecord } from '../run/types.ts';
import type { Difficulty } from '../types.ts';

/** What grouping reads of a sample. */
export type GroupedSample = Pick<SampleRecord, 'index' | 'sample' | 'questionId' | 'dbId' | 'difficulty' | 'status'>;

/** The samples of one prompt (question), in sample order. */
export interface PromptGroup<S extends GroupedSample = SampleRecord> {
  /** `index:questionId`: the gold position alone is ambiguous across datasets, the id alone in mini-dev. */
  key: string;
  index: number;
  questionId: number;
  dbId: string;
  difficulty: Difficulty;
  samples: S[];
}

function promptKey(s: { index: number; questionId: number }): string {
  return `${s.index}:${s.questionId}`;
}

/**
 * Groups samples by prompt, in gold order. Samples whose database is missing are left out
 * (as in the eval summary) and counted.
 */
export function groupSamples<S extends GroupedSample>(
  samples: readonly S[],
): { groups: PromptGroup<S>[]; missingDb: number } {
  const byKey = new Map<string, PromptGroup<S>>();
  let missingDb = 0;
  for (const s of samples) {
    if (s.status === 'missing-db') {
      missingDb++;
      continue;
    }
    const key = promptKey(s);
    let g = byKey.get(key);
    if (!g)
      byKey.set(
        key,
        (g = { key, index: s.index, questionId: s.questionId, dbId: s.dbId, difficulty: s.difficulty, samples: [] }),
      );
    g.samples.push(s);
  }
  const groups = [...byKey.values()].sort((a, b) => a.index - b.index || a.questionId - b.questionId);
  for (const g of groups) g.samples.sort((a, b) => a.sample - b.sample);
  return { groups, missingDb };
}
