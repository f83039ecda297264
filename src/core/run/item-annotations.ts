/**
 * Per-item findings that leave the score alone: the version scan and the gold checks. Hosts
 * build one annotator per run (CLI `eval`, the app's runs and gold self-test) and pass it to
 * runEvaluation as `ports.annotate`, so every item carries them as it is delivered and stored.
 */
import { goldIssuesOf } from '../eval/gold-checks.ts';
import type { EvalItem, ItemResult } from '../types.ts';
import { itemVersionFeatures, type ColumnTypes } from '../sql/version-features.ts';

/** Fields the row-order check (another module) may add; read when present. */
interface RowOrderFields {
  goldOrderDependent?: boolean;
  passesByRowOrder?: boolean;
  ts?: 0 | 1 | null;
}

interface AnnotatorInputs {
  /** Per database (readDbFacts); a database without types scans with unknown types. */
  columnTypes: Readonly<Record<string, ColumnTypes>>;
  /** The question text of a gold position, when the dataset is known. */
  questionOf?: (index: number) => string | null;
}

function goldIssuesOfResult(r: ItemResult & RowOrderFields, goldSql: string, question: string | null) {
  return goldIssuesOf({
    goldSql,
    question,
    goldRowCount: r.goldRowCount,
    goldColumnCount: r.goldColumnCount,
    error: r.error,
    goldOrderDependent: r.goldOrderDependent,
    predChangedDb: r.mutatedDb,
  });
}

export function rewardAnnotator(inputs: AnnotatorInputs): (result: ItemResult, item: EvalItem) => ItemResult {
  return (result, item) => {
    const out: ItemResult = { ...result };
    delete out.versionFeatures;
    delete out.goldIssues;
    // An item whose database is missing is not scored: nothing to say about its verdict.
    if (result.status !== 'missing-db') {
      const features = itemVersionFeatures(item.predSql, item.goldSql, inputs.columnTypes[item.dbId] ?? null);
      if (features.length > 0) out.versionFeatures = features;
      const issues = goldIssuesOfResult(result, item.goldSql, inputs.questionOf?.(item.index) ?? null);
      if (issues.length > 0) out.goldIssues = issues;
    }
    return out;
  };
}

interface RewardCounts {
  versionSensitive: ItemResult[];
  goldIssues: ItemResult[];
  /** Gold issues by kind, counted per item (an item may have several kinds). */
  goldIssueKinds: Record<string, number>;
}

export function rewardCounts(results: readonly ItemResult[]): RewardCounts {
  const goldIssueKinds: Record<string, number> = {};
  for (const r of results)
    for (const k of new Set((r.goldIssues ?? []).map((g) => g.kind))) goldIssueKinds[k] = (goldIssueKinds[k] ?? 0) + 1;
  return {
    versionSensitive: results.filter((r) => (r.versionFeatures?.length ?? 0) > 0),
    goldIssues: results.filter((r) => (r.goldIssues?.length ?? 0) > 0),
    goldIssueKinds,
  };
}
