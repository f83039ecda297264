/**
 * Scores the same predictions against the official and a corrected gold, side by side. Only
 * the items whose gold SQL the overlay changes are executed again; every other item keeps its
 * official verdict (same prediction, same gold, same database: the verdict cannot differ).
 */
import { summarize, type Summary } from '../eval/summary.ts';
import { overlayItems, type GoldOverlay } from '../formats/gold-overlay.ts';
import type { EvalItem, ItemResult } from '../types.ts';
import { scoreRun, type ScoreRunPorts } from './score-run.ts';
import type { RunConfig } from './types.ts';
import { WorkbenchError } from '../errors.ts';

interface VerdictChange {
  index: number;
  sample: number;
  questionId: number;
  dbId: string;
  officialEx: 0 | 1;
  correctedEx: 0 | 1;
  officialGoldSql: string;
  correctedGoldSql: string;
}

export interface OverlayComparison {
  overlay: string;
  official: Summary;
  corrected: Summary;
  /** Scored questions of the run the overlay names, and the scored items whose gold SQL it changes (missing databases left out). */
  covered: number;
  goldsChanged: number;
  /** Items whose EX differs between the two golds, in item order. */
  changed: VerdictChange[];
  /** Results against the corrected gold, in the order of `official`. */
  correctedResults: ItemResult[];
  cancelled: boolean;
}

/**
 * `official` are the run's results in the order of `items` (runEvaluation's order). Items whose
 * database is missing stay missing under both golds. The changed items are scored by the run
 * recipe (score-run.ts) with the run's configuration and ports.
 */
export async function compareWithOverlay(
  items: readonly EvalItem[],
  official: readonly ItemResult[],
  overlay: GoldOverlay,
  config: RunConfig,
  ports: ScoreRunPorts,
): Promise<OverlayComparison> {
  if (official.length !== items.length)
    throw new WorkbenchError(
      'INTERNAL',
      `overlay comparison needs one result per item (${official.length} results, ${items.length} items)`,
    );
  const applied = overlayItems(items, overlay);
  const rerun = applied.changedGold.filter((at) => official[at]!.status !== 'missing-db');
  const outcome = await scoreRun(
    rerun.map((at) => applied.items[at]!),
    config,
    ports,
  );
  const correctedResults = [...official];
  outcome.results.forEach((r, k) => (correctedResults[rerun[k]!] = r));
  const changed: VerdictChange[] = [];
  for (const at of rerun) {
    const a = official[at]!;
    const b = correctedResults[at]!;
    if (a.ex === b.ex) continue;
    changed.push({
      index: a.index,
      sample: a.sample ?? 0,
      questionId: a.questionId,
      dbId: a.dbId,
      officialEx: a.ex,
      correctedEx: b.ex,
      officialGoldSql: items[at]!.goldSql,
      correctedGoldSql: applied.items[at]!.goldSql,
    });
  }
  return {
    overlay: overlay.name,
    official: summarize(official, config.metrics),
    corrected: summarize(correctedResults, config.metrics),
    covered: new Set(
      applied.covered.filter((at) => official[at]!.status !== 'missing-db').map((at) => items[at]!.index),
    ).size,
    goldsChanged: rerun.length,
    changed,
    correctedResults,
    cancelled: outcome.cancelled,
  };
}

/** The overlay's totals and changed items for the `--out` JSON. */
export function overlayJson(c: OverlayComparison) {
  const t = (s: Summary) => ({ count: s.byDifficulty.total.count, ex: s.byDifficulty.total.ex });
  return {
    file: c.overlay,
    questions_covered: c.covered,
    golds_changed: c.goldsChanged,
    official: t(c.official),
    corrected: t(c.corrected),
    changed_items: c.changed.map((x) => ({
      index: x.index,
      sample: x.sample,
      question_id: x.questionId,
      db_id: x.dbId,
      official_ex: x.officialEx,
      corrected_ex: x.correctedEx,
      official_gold: x.officialGoldSql,
      corrected_gold: x.correctedGoldSql,
    })),
  };
}
