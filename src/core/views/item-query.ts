/**
 * Filter, search and sort of a run's samples for the item explorer. Pure and fast enough to
 * run on every keystroke over a few thousand samples (one pass, no regular expressions built
 * from user text).
 */
import type { Difficulty, Question } from '../types.ts';
import type { SampleRecord } from '../run/types.ts';
import { stepFlip } from '../compare/r-ves.ts';
import { hasFailedProbe, probeChangedAnswer } from '../episode/stats.ts';
import { trainerDisagreement } from '../eval/trainer-verdict.ts';

export type Outcome =
  | 'all'
  | 'right'
  | 'wrong'
  | 'wrong-result'
  | 'error'
  | 'timeout'
  | 'modified'
  | 'missing-db'
  // What the reward rewards: the reward view links to exactly these.
  | 'version-sensitive'
  | 'gold-issue'
  | 'gold-no-rows'
  | 'gold-count-mismatch'
  | 'gold-date-dependent'
  | 'ex-only'
  | 'order-dependent-gold'
  | 'passes-by-row-order'
  // Why a generation run's EX is 0, and R-VES items that could not be timed.
  | 'no-sql'
  | 'truncated'
  | 'request-failed'
  | 'rves-not-timed'
  | 'rves-near-step'
  // Multi-turn episodes (core/episode/stats.ts): the Turns panel links to exactly these.
  | 'episode-turn-limit'
  | 'episode-probe-failed'
  | 'episode-changed-answer'
  | 'episode-format-failure'
  // A step of a training run: where the trainer's own score and our EX disagree (core/series/stats.ts).
  | 'trainer-disagrees'
  | 'trainer-right-ex-wrong'
  | 'trainer-wrong-ex-right';

export const OUTCOMES: readonly { id: Outcome; label: string }[] = [
  { id: 'all', label: 'all' },
  { id: 'right', label: 'right (EX 1)' },
  { id: 'wrong', label: 'wrong (EX 0, scored items)' },
  { id: 'wrong-result', label: 'wrong result (ran, EX 0)' },
  { id: 'no-sql', label: 'no SQL in the completion' },
  { id: 'truncated', label: 'truncated by the token limit' },
  { id: 'request-failed', label: 'failed request (generation)' },
  { id: 'error', label: 'SQL error' },
  { id: 'timeout', label: 'timeout' },
  { id: 'modified', label: 'modified the database' },
  { id: 'missing-db', label: 'not scored (database missing)' },
  { id: 'version-sensitive', label: 'version-sensitive SQL' },
  { id: 'gold-issue', label: 'gold issue (any)' },
  { id: 'gold-no-rows', label: 'gold returns no rows' },
  { id: 'gold-count-mismatch', label: 'gold: count vs list' },
  { id: 'gold-date-dependent', label: 'gold depends on the date' },
  { id: 'ex-only', label: 'EX-only pass (EX 1, TS 0)' },
  { id: 'order-dependent-gold', label: 'order-dependent gold' },
  { id: 'passes-by-row-order', label: 'passes by row order' },
  { id: 'rves-not-timed', label: 'R-VES not timed' },
  { id: 'rves-near-step', label: 'R-VES timed near a reward step' },
  { id: 'episode-turn-limit', label: 'episode cut by the turn limit' },
  { id: 'episode-probe-failed', label: 'episode with a failed probe' },
  { id: 'episode-changed-answer', label: 'episode: a probe changed the answer' },
  { id: 'episode-format-failure', label: "episode fails the preset's format" },
  { id: 'trainer-disagrees', label: "the trainer's score disagrees with EX" },
  { id: 'trainer-right-ex-wrong', label: 'the trainer passed, EX 0' },
  { id: 'trainer-wrong-ex-right', label: 'the trainer failed, EX 1' },
];

/** Outcomes that read the trainer's score of a row (a step of a training run), not the sample alone. */
const TRAINER_OUTCOMES: ReadonlySet<Outcome> = new Set([
  'trainer-disagrees',
  'trainer-right-ex-wrong',
  'trainer-wrong-ex-right',
]);

/** Whether a row passes `outcome`: the trainer's outcomes compare the row's trainer score with the sample's EX. */
function rowMatchesOutcome(r: ExplorerRow, outcome: Outcome): boolean {
  if (!TRAINER_OUTCOMES.has(outcome)) return matchesOutcome(r.sample, outcome);
  const d = trainerDisagreement(r.trainerScore, r.sample);
  return outcome === 'trainer-disagrees'
    ? d !== null
    : outcome === 'trainer-right-ex-wrong'
      ? d === 'trainer-right'
      : d === 'trainer-wrong';
}

/** Fields of the test-suite and row-order checks, optional on a sample. */

const hasGoldIssue = (s: SampleRecord, ...kinds: string[]) =>
  (s.goldIssues ?? []).some((g) => kinds.length === 0 || kinds.includes(g.kind));

type SortKey = 'index' | 'db' | 'difficulty' | 'soft-f1' | 'time' | 'status';

export const SORT_KEYS: readonly { id: SortKey; label: string }[] = [
  { id: 'index', label: 'question order' },
  { id: 'db', label: 'database' },
  { id: 'difficulty', label: 'difficulty' },
  { id: 'soft-f1', label: 'Soft-F1' },
  { id: 'time', label: 'execution time' },
  { id: 'status', label: 'status' },
];

export interface ItemQuery {
  outcome: Outcome;
  difficulty: Difficulty | 'all';
  dbId: string | 'all';
  /** Case-insensitive text looked up in question, evidence, both SQL, error, database and id. */
  search: string;
  sort: SortKey;
  descending: boolean;
}

export const DEFAULT_QUERY: ItemQuery = {
  outcome: 'all',
  difficulty: 'all',
  dbId: 'all',
  search: '',
  sort: 'index',
  descending: false,
};

/** A sample with the text of its question when the dataset is known. */
export interface ExplorerRow {
  sample: SampleRecord;
  question: Question | null;
  /** The trainer's own score of the sample when the run is a step of a training run (absent otherwise; null: none in the dump). */
  trainerScore?: number | null;
  /** The trainer's reward columns of the sample (TRL, prime-rl traces; name to value), where its step's dump has them. */
  trainerRewards?: Record<string, number | null> | null;
}

/**
 * A sample whose database was not imported was never run: it is its own outcome, never a wrong
 * answer (its stored `ex` is 0 only because the official evaluator's field has no "none").
 */
export const isUnscored = (s: Pick<SampleRecord, 'status'>): boolean => s.status === 'missing-db';

/** The completion held nothing that looks like SQL (extraction rule `none`): its own outcome, not a wrong result. */
const hasNoSql = (s: SampleRecord) => s.extraction.rule === 'none';
/** The engine's request failed (the sample has no completion). */
const requestFailed = (s: SampleRecord) =>
  s.generation !== undefined && (s.generation.finishReason === 'error' || (s.generation.error ?? null) !== null);

export function matchesOutcome(s: SampleRecord, outcome: Outcome): boolean {
  switch (outcome) {
    case 'all':
      return true;
    case 'right':
      return s.ex === 1;
    case 'wrong':
      return s.ex === 0 && !isUnscored(s);
    case 'wrong-result':
      return s.ex === 0 && s.status === 'ok' && !hasNoSql(s);
    case 'no-sql':
      return hasNoSql(s) && !isUnscored(s) && !requestFailed(s);
    case 'truncated':
      return s.generation?.finishReason === 'length';
    case 'request-failed':
      return requestFailed(s);
    case 'rves-not-timed':
      return s.rvesNotTimed !== undefined;
    case 'rves-near-step':
      return s.ex === 1 && s.rves !== null && s.rvesNotTimed === undefined && stepFlip(s.timeRatio) > 0;
    case 'error':
      return s.status === 'error';
    case 'timeout':
      return s.status === 'timeout';
    case 'modified':
      return s.mutatedDb;
    case 'missing-db':
      return s.status === 'missing-db';
    case 'version-sensitive':
      return (s.versionFeatures?.length ?? 0) > 0;
    case 'gold-issue':
      return hasGoldIssue(s);
    case 'gold-no-rows':
      return hasGoldIssue(s, 'no-rows');
    case 'gold-count-mismatch':
      return hasGoldIssue(s, 'count-as-list', 'list-as-count');
    case 'gold-date-dependent':
      return hasGoldIssue(s, 'date-dependent');
    case 'ex-only':
      return s.ex === 1 && s.ts === 0;
    case 'order-dependent-gold':
      return s.goldOrderDependent === true || hasGoldIssue(s, 'order-dependent');
    case 'passes-by-row-order':
      return s.passesByRowOrder === true;
    case 'episode-turn-limit':
      return s.episode?.endReason === 'turn-limit';
    case 'episode-probe-failed':
      return s.episode !== undefined && hasFailedProbe(s.episode);
    case 'episode-changed-answer':
      return s.episode !== undefined && probeChangedAnswer(s.episode);
    case 'episode-format-failure':
      return s.episode !== undefined && !s.episode.formatValid;
    case 'trainer-disagrees':
    case 'trainer-right-ex-wrong':
    case 'trainer-wrong-ex-right':
      // The sample alone holds no trainer's score: rowMatchesOutcome reads the row's.
      return false;
  }
}

function haystack(r: ExplorerRow): string {
  const s = r.sample;
  const q = r.question;
  return [String(s.questionId), s.dbId, s.sql, s.goldSql, s.error ?? '', q?.question ?? '', q?.evidence ?? '']
    .join('\n')
    .toLowerCase();
}

const DIFFICULTY_ORDER: Record<Difficulty, number> = {
  simple: 0,
  moderate: 1,
  challenging: 2,
  easy: 3,
  medium: 4,
  hard: 5,
  extra: 6,
  unknown: 7,
};
const STATUS_ORDER: Record<SampleRecord['status'], number> = { ok: 0, error: 1, timeout: 2, 'missing-db': 3 };

function compareBy(key: SortKey): (a: SampleRecord, b: SampleRecord) => number {
  switch (key) {
    case 'index':
      return () => 0;
    case 'db':
      return (a, b) => (a.dbId < b.dbId ? -1 : a.dbId > b.dbId ? 1 : 0);
    case 'difficulty':
      return (a, b) => DIFFICULTY_ORDER[a.difficulty] - DIFFICULTY_ORDER[b.difficulty];
    case 'soft-f1':
      return (a, b) => (a.softF1 ?? -1) - (b.softF1 ?? -1);
    case 'time':
      return (a, b) => (a.elapsedMs ?? -1) - (b.elapsedMs ?? -1);
    case 'status':
      return (a, b) => STATUS_ORDER[a.status] - STATUS_ORDER[b.status] || b.ex - a.ex;
  }
}

/**
 * Rows that pass the filters, sorted. Ties keep question order (then sample order), so the
 * result is stable whatever the sort direction.
 */
export class ItemIndex {
  readonly #rows: readonly ExplorerRow[];
  /**
   * Lower-cased search text per row, built at the first search: at 100,000 samples it is a
   * second copy of every SQL text, and most views of a run never search.
   */
  #text: string[] | null = null;

  constructor(rows: readonly ExplorerRow[]) {
    this.#rows = rows;
  }

  get size(): number {
    return this.#rows.length;
  }

  query(q: ItemQuery): ExplorerRow[] {
    const needle = q.search.trim().toLowerCase();
    const text = needle ? (this.#text ??= this.#rows.map(haystack)) : null;
    const out: ExplorerRow[] = [];
    this.#rows.forEach((r, i) => {
      const s = r.sample;
      if (!rowMatchesOutcome(r, q.outcome)) return;
      if (q.difficulty !== 'all' && s.difficulty !== q.difficulty) return;
      if (q.dbId !== 'all' && s.dbId !== q.dbId) return;
      if (text && !text[i]!.includes(needle)) return;
      out.push(r);
    });
    const cmp = compareBy(q.sort);
    const dir = q.descending ? -1 : 1;
    return out.sort(
      (a, b) => dir * cmp(a.sample, b.sample) || a.sample.index - b.sample.index || a.sample.sample - b.sample.sample,
    );
  }
}
