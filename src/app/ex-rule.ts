/**
 * Which execution match scores a run (docs/spider-rules.md): the request's choice, else
 * Spider's own for a Spider dataset; under Spider's rule each question gets Spider's hardness.
 */
import { SPIDER_LEVELS, type EvalItem, type Question } from '../core/types.ts';
import type { DatasetRecord } from './records.ts';
import { withSpiderHardness } from '../core/sql/spider-hardness.ts';
import type { ExRule } from '../core/compare/spider-ex.ts';

/** The EX rule of a run on `dataset`: the request's, else Spider's own for a Spider dataset (docs/spider-rules.md). */
export function datasetExRule(dataset: Pick<DatasetRecord, 'kind'>, chosen?: ExRule): ExRule {
  return chosen ?? (dataset.kind === 'spider' ? 'spider' : 'bird');
}

/**
 * The EX rule of questions read from files (the CLI's `eval` and `series`): the flag's choice,
 * else Spider's when the questions carry Spider's hardness levels (a Spider question file), or,
 * with no questions file, when Spider's tables.json lies beside the gold file (`tablesJsonBeside`,
 * which the host looks up).
 */
export function questionsExRule(
  questions: readonly Pick<Question, 'difficulty'>[] | null,
  chosen?: ExRule | null,
  tablesJsonBeside = false,
): ExRule {
  if (chosen) return chosen;
  if (questions) return questions.some((q) => SPIDER_LEVELS.includes(q.difficulty)) ? 'spider' : 'bird';
  return tablesJsonBeside ? 'spider' : 'bird';
}

/** A run's config and items under its EX rule: Spider's records the rule and gives each question Spider's hardness. */
export function underRule<C extends { exRule?: ExRule | null }, T extends EvalItem>(
  config: C,
  items: T[],
  rule: ExRule,
): { config: C; items: T[] } {
  return rule === 'spider'
    ? { config: { ...config, exRule: rule }, items: withSpiderHardness(items) }
    : { config, items };
}
