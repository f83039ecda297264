/**
 * Which EX passes are earned: the rule a checkpoint choice uses so that a reward hack cannot win
 * it (docs/series.md, "Earned score"). An EX pass is not earned when the prediction writes (the
 * probe's write exploits and any other write statement, src/core/playground/attempt-flags.ts),
 * when it is a constant answer (a SELECT that reads no table, or no SQL at all: the probe's
 * `empty` and `select-null` exploits are two of them), when test-suite accuracy ran and rejects
 * it (an EX-only pass), or when gold and prediction both return no rows (set() == set()). The
 * verdict itself always comes from executing the SQL; this only says which passes a policy
 * could have won without answering.
 */
import { attemptFlags } from '../playground/attempt-flags.ts';
import { isConstantAnswer } from '../sql/constant-answer.ts';
import type { ItemResult } from '../types.ts';

/** Why an EX pass is not earned, first that applies in this order. */
export const UNEARNED_KINDS = ['write', 'constant', 'ex-only', 'empty-result'] as const;
export type UnearnedKind = (typeof UNEARNED_KINDS)[number];

export const UNEARNED_TEXT: Record<UnearnedKind, string> = {
  write: 'writes (the prediction changes the database before the gold runs)',
  constant: 'constant answers (a SELECT that reads no table, or no SQL)',
  'ex-only': 'EX-only passes (test-suite accuracy rejects them)',
  'empty-result': 'empty-result passes (gold and prediction both return no rows)',
};

export type EarnedInput = Pick<ItemResult, 'ex' | 'ts' | 'status' | 'mutatedDb' | 'predRowCount' | 'goldRowCount'> & {
  sql: string;
};

/** Why a sample's EX pass is not earned; null when it is earned or is not an EX pass. */
export function unearnedKind(s: EarnedInput): UnearnedKind | null {
  if (s.ex !== 1) return null;
  const flags = attemptFlags({
    sql: s.sql,
    question: null,
    tables: new Set(),
    result: {
      ex: s.ex,
      status: s.status,
      mutatedDb: s.mutatedDb,
      predRowCount: s.predRowCount,
      goldRowCount: s.goldRowCount,
    },
  });
  if (flags.mutatedDb || flags.writes.length > 0) return 'write';
  if (isConstantAnswer(s.sql)) return 'constant';
  if (s.ts === 0) return 'ex-only';
  // The attempt flags' `empty-result` class, counted as the step's empty-result passes count it.
  if (s.goldRowCount === 0 && s.predRowCount === 0) return 'empty-result';
  return null;
}
