/**
 * One step of a trainer's dump paired with the dataset's gold: the pairing both hosts use for a
 * series (the app's import worker, src/adapters/import/pair-series.ts, and the CLI's `series`);
 * only reading the file stays per host. Pairing is not strict: findings are notes of the step.
 */
import { findingText } from '../core/formats/pairing.ts';
import { withReplayEpisodes } from '../core/formats/replay-episode.ts';
import { planReplay, type ReplayInputs } from '../core/run/replay.ts';
import { pairingNote, trainerRewardsOf, trainerScoreOf, type DumpStep } from '../core/series/dump-step.ts';
import type { EvalItem } from '../core/types.ts';

interface PairedDumpStep {
  /** In the replay plan's order; a multi-turn dump's samples keep their episodes (turns, the trainer's score). */
  items: EvalItem[];
  /** The trainer's score of each item (parallel to `items`). */
  trainerScores: Array<number | null>;
  /** Each item's reward columns (TRL, prime-rl traces), when the dump has any. */
  trainerRewards?: Array<Record<string, number | null> | null>;
  /** Which rows of the dump were not paired, when some were not. */
  pairingNote: string | null;
  /** The pairing's findings and the plan's warnings, as text. */
  warnings: string[];
}

/** Pairs a step of a dump (one with rows that matched a question) with `gold` and `questions`. */
export function pairDumpStep(
  step: DumpStep,
  inputs: Pick<ReplayInputs, 'gold' | 'questions' | 'fence'>,
): PairedDumpStep {
  const plan = planReplay({ ...inputs, predictions: { ...step.predictions, name: step.source } });
  const items = withReplayEpisodes(plan.items, step.format, step);
  const trainerRewards = trainerRewardsOf(step, items);
  return {
    items,
    trainerScores: items.map((it) => trainerScoreOf(step, it.questionId, it.sample)),
    ...(trainerRewards ? { trainerRewards } : {}),
    pairingNote: step.pairing ? pairingNote(step.pairing) : null,
    warnings: [...plan.findings.map(findingText), ...plan.warnings],
  };
}
