import type { EvalItem, ItemResult } from '../types.ts';

/** An item's result with every score at its failure value; callers fill in what they know. */
export function itemResult(item: EvalItem, fields: Partial<ItemResult> & Pick<ItemResult, 'status'>): ItemResult {
  return {
    index: item.index,
    questionId: item.questionId,
    dbId: item.dbId,
    difficulty: item.difficulty,
    ex: 0,
    softF1: null,
    rves: null,
    timeRatio: null,
    error: null,
    mutatedDb: false,
    extraction: item.extraction,
    predRowCount: null,
    goldRowCount: null,
    elapsedMs: null,
    ...(item.sample !== undefined ? { sample: item.sample } : {}),
    ...fields,
  };
}
