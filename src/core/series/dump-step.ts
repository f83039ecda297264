/**
 * The steps a trainer's or harness's file gives a series (docs/series.md, "Where steps come
 * from"), as the reader of such files returns them (src/adapters/harness/series-dump.ts reads
 * them; both hosts pair and score them), and what is said about a step: its rule, its pairing,
 * the trainer's scores and reward columns of each item.
 */
import type { HarnessFormat } from '../formats/harness.ts';
import type { DumpTurn } from '../formats/multi-turn-dump.ts';
import type { DumpEnd } from '../formats/replay-episode.ts';
import type { SourceRecord } from '../formats/records.ts';
import { DEFAULT_STEP_RULE_TEXT, type StepRule } from './step-name.ts';

/** Files a series folder may hold: dumps and predictions, every format docs/series.md lists (hidden files are left out by the callers). */
export const SERIES_DUMP_FILE = /\.(jsonl|json|eval|sql|parquet|pq)$/i;

type DumpFormat = HarnessFormat | 'predictions';

export interface DumpStep {
  step: number;
  /** The file as named to the user, with ` step N` when it holds several steps. */
  source: string;
  format: DumpFormat;
  /** What the replay plan pairs with the gold: a dump's mapped records, or a predictions file's text. */
  predictions: { name: string; records: SourceRecord[] } | { name: string; text: string };
  /** Per question id, the trainer's score of each of its samples in sample order (null where none); empty for predictions files. */
  sampleScores: Map<number, Array<number | null>>;
  /** Per question id, the trainer's reward columns of each sample (TRL, prime-rl traces); empty where the dump has none. */
  sampleRewards: Map<number, Array<Record<string, number | null> | null>>;
  /** Per question id, each sample's turns (multi-turn dumps: SkyRL, verl tool episodes, prime-rl traces); empty otherwise. */
  sampleTurns: Map<number, Array<DumpTurn[] | null>>;
  /** Per question id, how each sample's episode ended as the dump says (stop reason, turn limit); empty otherwise. */
  sampleEnds: Map<number, Array<DumpEnd | null>>;
  /** The mapping report of a dump's step (rows mapped by which rule, unmatched rows); null for predictions files. */
  report: string | null;
  /** Rows of a dump's step that matched a question (0: nothing to evaluate); null for a predictions file (paired later). */
  matched: number | null;
  /** A dump's step: its rows and those that matched no question, with why (absent for a predictions file). */
  pairing?: { rows: number; unmatched: ReadonlyArray<{ where: string; reason: string }> };
  /**
   * ISO 8601: the dump's own time (an Inspect log's `stats.completed_at` / `started_at` /
   * `eval.created`, the `date` of an lm-eval samples file's results file); null when it has none
   * (the callers then take the file's modification time).
   */
  wallTime: string | null;
}

export interface SeriesDump {
  format: DumpFormat;
  steps: DumpStep[];
  /** How the steps were found (`100.jsonl: step 100 (from the name by <N>.<ext>)`), and warnings. */
  notes: string[];
}

/** The rule as shown to the user. */
export const stepRuleText = (rule: StepRule | undefined): string =>
  rule ? `${rule.name} on the file's path` : DEFAULT_STEP_RULE_TEXT;

/**
 * The step's pairing in a sentence, the one a step's dashboard shows beside its question count:
 * `496 of 500 rows paired; 4 not: 4 match several questions by question text and its ground
 * truth does not single one out (lines 138, 139, 638, 639)`. Null when every row was paired.
 */
export function pairingNote(pairing: NonNullable<DumpStep['pairing']>): string | null {
  const { rows, unmatched } = pairing;
  if (unmatched.length === 0) return null;
  const byReason = new Map<string, string[]>();
  for (const u of unmatched) byReason.set(u.reason, [...(byReason.get(u.reason) ?? []), u.where]);
  const LISTED = 8;
  const why = [...byReason]
    .map(([reason, where]) => {
      const shown =
        where.slice(0, LISTED).join(', ') + (where.length > LISTED ? `, … ${where.length - LISTED} more` : '');
      return `${where.length} ${reason} (${shown})`;
    })
    .join('; ');
  return `${rows - unmatched.length} of ${rows} rows paired; ${unmatched.length} not: ${why}`;
}

/**
 * The trainer's reward columns of each item, parallel to `items` (null for an item the dump gives
 * none); undefined when no item has any (the dump has no reward columns), so the field stays absent.
 */
export function trainerRewardsOf(
  step: Pick<DumpStep, 'sampleRewards'>,
  items: ReadonlyArray<{ questionId: number; sample?: number }>,
): Array<Record<string, number | null> | null> | undefined {
  const rewards = items.map((it) => step.sampleRewards.get(it.questionId)?.[it.sample ?? 0] ?? null);
  return rewards.some((r) => r !== null) ? rewards : undefined;
}

/** The trainer's score of an item (null where the dump gave none). */
export function trainerScoreOf(step: Pick<DumpStep, 'sampleScores'>, questionId: number, sample = 0): number | null {
  return step.sampleScores.get(questionId)?.[sample] ?? null;
}
