/**
 * Rewards per sample, as RLVR recipes define them: the execution reward (EX, 0 or 1), a format
 * reward, and a formula combining them that is stored with the run (`RunConfig.rewardFormula`).
 */
import { WorkbenchError } from '../errors.ts';
import type { ExtractionRule } from '../types.ts';
import { evaluateExpression, parseExpression, variablesOf } from './expression.ts';

/** `ts`: test-suite accuracy (metric ts, docs/test-suite.md), a reward EX-only passes do not earn. */
const REWARD_VARIABLES = ['ex', 'format', 'soft_f1', 'ts'] as const;
type RewardVariable = (typeof REWARD_VARIABLES)[number];
export const DEFAULT_REWARD_FORMULA = 'ex';

/**
 * Format reward: 1 when an extraction rule found SQL in the output, 0 for `none` (nothing
 * that looks like SQL) and for `bird-non-string` (a BIRD value that is not a string). Whether
 * the SQL parses is not checked here: a syntax error already costs the execution reward.
 */
export function formatReward(rule: ExtractionRule): 0 | 1 {
  return rule === 'none' || rule === 'bird-non-string' ? 0 : 1;
}

interface RewardInputs {
  ex: 0 | 1;
  format: 0 | 1;
  /** null when Soft-F1 was not computed (counts as 0; `checkFormulaMetrics` rejects a formula that needs it). */
  softF1: number | null;
  /** Metric ts: 1, 0 or null (not scored, counts as 0); absent when ts did not run (`checkFormulaMetrics` rejects a formula that needs it). */
  ts?: 0 | 1 | null;
}

export interface RewardFormula {
  text: string;
  uses: ReadonlySet<RewardVariable>;
  evaluate(inputs: RewardInputs): number;
}

/** Compiles a formula once; errors name the formula and the position of the problem. */
export function compileRewardFormula(text: string): RewardFormula {
  const tree = parseExpression(text, REWARD_VARIABLES);
  const uses = variablesOf(tree) as Set<RewardVariable>;
  return {
    text,
    uses,
    evaluate(inputs) {
      const value = evaluateExpression(tree, {
        ex: inputs.ex,
        format: inputs.format,
        soft_f1: inputs.softF1 ?? 0,
        ts: inputs.ts ?? 0,
      });
      if (!Number.isFinite(value)) {
        throw new WorkbenchError(
          'BAD_OPTION',
          `reward formula ${JSON.stringify(text)} gives ${value} for ex = ${inputs.ex}, format = ${inputs.format}, soft_f1 = ${inputs.softF1}` +
            `${uses.has('ts') ? `, ts = ${inputs.ts ?? null}` : ''}: ` +
            'a reward must be a finite number (division by zero?)',
        );
      }
      return value;
    },
  };
}

/** A formula using soft_f1 needs the Soft-F1 metric; errors before any work is done. */
export function checkFormulaMetrics(formula: RewardFormula, metrics: readonly string[]): void {
  if (formula.uses.has('soft_f1') && !metrics.includes('soft-f1')) {
    throw new WorkbenchError(
      'BAD_OPTION',
      `reward formula ${JSON.stringify(formula.text)} uses soft_f1, but Soft-F1 is not among the metrics (${metrics.join(', ')}): add soft-f1`,
    );
  }
  if (formula.uses.has('ts') && !metrics.includes('ts')) {
    throw new WorkbenchError(
      'BAD_OPTION',
      `reward formula ${JSON.stringify(formula.text)} uses ts, but TS is not among the metrics (${metrics.join(', ')}): add ts`,
    );
  }
}

/**
 * A formula that is not finite somewhere on the metrics' values (a division by zero) fails
 * before the run, not on its first sample after minutes of work: it is evaluated on every
 * combination of the ends of each metric's range (ex 0/1, format 0/1, soft_f1 0/1, ts 0/1; soft_f1
 * counts as 0 when Soft-F1 is not computed). Throws the error `evaluate` gives, naming the
 * formula and the values.
 */
export function checkFormulaFinite(formula: RewardFormula): void {
  for (const ex of [0, 1] as const) {
    for (const format of [0, 1] as const) {
      for (const softF1 of [0, 1]) for (const ts of [0, 1] as const) formula.evaluate({ ex, format, softF1, ts });
    }
  }
}
