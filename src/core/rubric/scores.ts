import type { AggregationValue } from './aggregations.ts';

/**
 * What rubric scoring stores per sample: every criterion's verdict and the three aggregates
 * (explicit, implicit, direct Likert) side by side. Plain data: it goes to JSON and IndexedDB.
 */

/**
 * - `ok`: a verdict was reached (`met` is a boolean);
 * - `unparseable`: the judge answered, but never in the required format (raw answer kept);
 * - `error`: the judge could not be called (network, engine error);
 * - `skipped`: the item needs a judge and none was given;
 * - `not-applicable`: the check has nothing to look at (a SQL check on a sample without SQL,
 *   an evidence without a formula); left out of the aggregate, not counted as unresolved.
 */
type VerdictStatus = 'ok' | 'unparseable' | 'error' | 'skipped' | 'not-applicable';

export interface CriterionVerdict {
  /** The rubric item's id. */
  id: string;
  /** null unless status is `ok`: never a silent 0. */
  met: boolean | null;
  explanation: string;
  /** The judge's last raw answer (judge items), or null. */
  raw: string | null;
  status: VerdictStatus;
  source: 'judge' | 'sql' | 'regex';
  /** Judge calls made (or replayed from the cache) for this verdict. */
  attempts: number;
  /** Every attempt was answered from the judge cache. */
  cached: boolean;
}

type JudgementStatus = 'ok' | 'unparseable' | 'error' | 'skipped';

/** A single 1..10 judgement (implicit rubric score or direct Likert), normalised to [0, 1]. */
export interface ScaleJudgement {
  status: JudgementStatus;
  /** The judge's score s in 1..10, or null. */
  rawScore: number | null;
  /** (s − 1) / 9, or null. */
  score: number | null;
  explanation: string;
  raw: string | null;
  attempts: number;
  cached: boolean;
  /** Error message when status is `error`. */
  error?: string;
}

export type Normalization = 'positive' | 'absolute';

export interface ExplicitOptions {
  /**
   * Denominator: `positive` = Σ of positive weights (HealthBench; equals RaR's Σ w when no
   * weight is negative); `absolute` = Σ |w| over all items.
   */
  normalization: Normalization;
  /** Clip the score to [0, 1] (HealthBench clips; with negative weights it can leave the range). */
  clip: boolean;
  /**
   * Items without a verdict (unparseable, error, skipped): `null` makes the whole score null
   * (status `incomplete`), `skip` leaves them out of numerator and denominator.
   */
  unresolved: 'null' | 'skip';
}

export const DEFAULT_EXPLICIT_OPTIONS: ExplicitOptions = { normalization: 'positive', clip: true, unresolved: 'null' };

export interface ExplicitScore {
  /** The aggregate in use (clipped when `clip`), or null when incomplete / no positive weight. */
  score: number | null;
  /** Before clipping. */
  unclipped: number | null;
  numerator: number;
  denominator: number;
  status: 'ok' | 'incomplete' | 'no-positive-weight';
  /** Items without a verdict. */
  unresolved: string[];
  /** Items left out because their check did not apply. */
  notApplicable: string[];
  options: ExplicitOptions;
}

export interface PromptInjectionFlag {
  flagged: boolean;
  /** Ids of the patterns that matched (see injection.ts), with the matched text. */
  matches: Array<{ pattern: string; text: string }>;
}

export interface JudgeInfo {
  engine: string;
  model: string;
  /** Versions of the prompts used, e.g. `criterion: rar-criterion-v1`. */
  prompts: { criterion: string; implicit: string; likert: string };
}

export const RUBRIC_SCORES_VERSION = 1;

export interface RubricScores {
  version: typeof RUBRIC_SCORES_VERSION;
  rubricId: string;
  /** The weights the explicit score used, by item id (weights may be re-chosen later). */
  weights: Record<string, number>;
  judge: JudgeInfo | null;
  criteria: CriterionVerdict[];
  explicit: ExplicitScore | null;
  implicit: ScaleJudgement | null;
  likert: ScaleJudgement | null;
  promptInjection: PromptInjectionFlag;
  /**
   * The chosen aggregations of the registry (aggregations.ts), computed from the fields above,
   * the rubric's categories, a rule reward and the question's other samples; absent in records
   * written before the registry.
   */
  aggregations?: AggregationValue[];
}
