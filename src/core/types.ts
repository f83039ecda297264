/** Shared data shapes of the evaluation core. Plain data only: they cross workers and go to JSON. */

/**
 * BIRD's three buckets, Spider's four hardness levels (src/core/sql/spider-hardness.ts, from
 * the gold SQL); anything else (custom data without difficulty) is `unknown`.
 */
export type Difficulty = 'simple' | 'moderate' | 'challenging' | 'easy' | 'medium' | 'hard' | 'extra' | 'unknown';
export const DIFFICULTIES: readonly Difficulty[] = ['simple', 'moderate', 'challenging'];
export const SPIDER_LEVELS: readonly Difficulty[] = ['easy', 'medium', 'hard', 'extra'];
/** Every bucket, in the order the tables show them. */
export const ALL_DIFFICULTIES: readonly Difficulty[] = [...DIFFICULTIES, ...SPIDER_LEVELS, 'unknown'];

/** The columns of the official table: Spider's levels when the run has them, BIRD's otherwise (then `total`). */
export function tableLevels(present: Partial<Record<string, unknown>>): Difficulty[] {
  return SPIDER_LEVELS.some((l) => present[l] !== undefined) ? [...SPIDER_LEVELS] : [...DIFFICULTIES];
}

/** One benchmark question (BIRD or Spider), normalised. */
export interface Question {
  /** BIRD `question_id`; for Spider, the 0-based position in the file. */
  questionId: number;
  dbId: string;
  question: string;
  /** BIRD external knowledge; empty for Spider. */
  evidence: string;
  /** Gold SQL as given in the question file (BIRD `SQL`, Spider `query`). */
  goldSql: string;
  difficulty: Difficulty;
}

/** One line of a gold `.sql` file: `SQL<TAB>db_id`. */
export interface GoldEntry {
  sql: string;
  dbId: string;
}

/**
 * Which rule produced the SQL of a prediction. Every item records its rule so that a
 * format reward and extraction failures can be inspected later.
 */
export type ExtractionRule =
  | 'bird-separator' // BIRD JSON value `SQL\t----- bird -----\tdb_id`
  | 'bird-no-separator' // BIRD JSON value without the separator: the whole stripped string
  | 'bird-non-string' // BIRD JSON value that is not a string: SQL becomes " " (official)
  | 'sql-field' // JSONL `sql` field, used as given
  | 'sql-line' // one line of a plain .sql predictions file
  | 'fenced-sql-first' // first ```sql / ```sqlite block of a completion
  | 'fenced-sql-last' // last ```sql / ```sqlite block of a completion
  | 'answer-tag' // <answer>...</answer>
  | 'solution-tag' // <solution>...</solution>
  | 'select-fallback' // text from the first SELECT / WITH to the end (or to the first ';')
  | 'none'; // nothing that looks like SQL: the item is evaluated with empty SQL

export interface Extraction {
  rule: ExtractionRule;
  /** True when a <think>...</think> block was removed before the rule was applied. */
  thinkStripped: boolean;
}

/** One prediction as read from a predictions file, before pairing with gold. */
export interface Prediction {
  /** Position in the file (0-based, in key order for BIRD JSON, line order for JSONL/.sql). */
  position: number;
  /** question_id when the file names one (JSONL); BIRD JSON keys are ignored, as official. */
  questionId: number | null;
  sql: string;
  extraction: Extraction;
  /** The raw completion, when the file held one (JSONL `completion`). */
  completion?: string;
  /** Mean token log-probability of the completion, when the file gives one (JSONL `mean_logprob`). */
  meanLogprob?: number;
  /** BIRD JSON: the object key as written (ignored by the official pairing, checked by ours). */
  key?: string;
  /** BIRD JSON: the database name after the value's separator (ignored officially, checked by ours). */
  dbName?: string;
}

/** One unit of work: a prediction paired with its gold query. */
export interface EvalItem {
  /** 0-based position of the gold line. */
  index: number;
  questionId: number;
  dbId: string;
  difficulty: Difficulty;
  predSql: string;
  goldSql: string;
  extraction: Extraction;
  /** 0-based sample number within its question (several samples share `index`); absent = 0. */
  sample?: number;
  /** The raw completion the SQL was extracted from, when there was one (kept for run files). */
  completion?: string;
  /** Mean token log-probability of the completion, when known (best-of-n scorer). */
  meanLogprob?: number;
  /** A replayed multi-turn dump's episode (its turns), kept with the sample (src/core/formats/replay-episode.ts). */
  episode?: Episode;
}

export type ItemStatus = 'ok' | 'error' | 'timeout' | 'missing-db';

/** A SQLite value as the core sees it: INTEGER may be a bigint beyond 2^53. */
export type SqlValue = null | number | bigint | string | Uint8Array;

/**
 * A database a SQL worker opens by pages instead of receiving its bytes (workers/paged-file.ts):
 * a file the worker reads itself (Node: its path, with the size and modification time it had
 * when it was checked, so that a change while it is read is seen), or a Blob (the browser's
 * stored chunks, read synchronously in the worker).
 */
export type DbFileRef =
  { kind: 'file'; path: string; size: number; mtimeMs: number } | { kind: 'blob'; blob: BlobLike; size: number };

/** What the core needs to know of a Blob (the core has no DOM types; a browser Blob is one). */
export interface BlobLike {
  readonly size: number;
  slice(start?: number, end?: number): unknown;
}

export interface ItemResult {
  index: number;
  questionId: number;
  dbId: string;
  difficulty: Difficulty;
  /** Official EX, 0 or 1 (errors, timeouts and missing databases are 0). */
  ex: 0 | 1;
  /** Official Soft-F1 in [0, 1]; null when not requested. */
  softF1: number | null;
  /** R-VES reward (0, 0.25, 0.5, 0.75, 1, 1.25); null when not requested. */
  rves: number | null;
  /** Mean gold/pred time ratio after outlier removal (R-VES); null when not measured. */
  timeRatio: number | null;
  /**
   * R-VES was asked and the item is correct, but its timing could not be measured (the reason):
   * `rves` is null, and the item is left out of R-VES and counted apart (docs/r-ves-timing.md).
   */
  rvesNotTimed?: string;
  status: ItemStatus;
  /** SQLite's message (prefixed by the side that failed) for `error`; a sentence for the others. */
  error: string | null;
  /** The prediction changed the database (rows or schema) before the gold query ran. */
  mutatedDb: boolean;
  extraction: Extraction;
  predRowCount: number | null;
  goldRowCount: number | null;
  /** Milliseconds spent executing both queries (not the R-VES repetitions). */
  elapsedMs: number | null;
  /** The item's sample number within its question, copied from the EvalItem (absent = 0). */
  sample?: number;
  /**
   * Signature of the predicted result (hash of its set of rows under EX equality), present
   * when the prediction executed: two samples with EX-equal results share it (self-consistency).
   */
  resultKey?: string;
  /** The gold's result was taken from an earlier item on the pristine database (not executed for this one). */
  goldReused?: boolean;
  /**
   * The database executed on holds a view whose definition is not deterministic (its name, e.g.
   * `CREATE VIEW v AS SELECT random()`): a query may read it whatever its own text says, so the
   * verdict is never shared with an identical item nor cached (src/core/run/reuse.ts).
   */
  nondeterministicView?: string;
  /**
   * The sha256 of the database bytes the item was executed on, as the executor loaded them (the
   * verdict cache stores the verdict under it, and nothing without it). Absent when not executed
   * or not known; never part of a sample's record.
   */
  dbSha256?: string;
  /** Columns of the predicted / gold result, present when that query ran (the rubric's column-count check). */
  predColumnCount?: number;
  goldColumnCount?: number;
  /** Parts of pred or gold SQL whose result differs between SQLite versions (src/core/sql/version-features.ts); absent when none or not scanned. */
  versionFeatures?: { feature: string; since: string; where: 'pred' | 'gold' }[];
  /** What is suspicious about the gold itself (src/core/eval/gold-checks.ts); absent when none or not checked. */
  goldIssues?: { kind: string; reason: string }[];
  /**
   * Test-suite accuracy (docs/test-suite.md), present when metric `ts` ran: 1 when pred and gold
   * match on the original and on every suite database where the gold runs; 0 when EX is 0 or a
   * suite database tells them apart; null when not scored (the gold failed, or the check did not finish).
   */
  ts?: 0 | 1 | null;
  /** When TS is 0 but EX is 1: the suite database on which pred and gold differ. */
  tsCounterexample?: TsCounterexample;
  /** The gold's set of rows changes with `PRAGMA reverse_unordered_selects = ON` (its verdicts are luck). */
  goldOrderDependent?: boolean;
  /** EX accepts the prediction in SQLite's usual row order but not with unordered selects reversed. */
  passesByRowOrder?: boolean;
  /**
   * The item re-run on an older SQLite generation because it is flagged version-sensitive
   * (src/core/run/version-effects.ts): that engine's verdict; absent when not re-run.
   */
  versionCheck?: VersionCheck;
}

/** An item's verdict on the second, older SQLite engine (src/core/run/version-effects.ts). */
export interface VersionCheck {
  /** `select sqlite_version()` of that engine, e.g. `3.39.3`. */
  sqliteVersion: string;
  ex: 0 | 1;
  softF1: number | null;
  status: ItemStatus;
  error: string | null;
  /** EX or Soft-F1 differs from the item's own verdict. */
  differs: boolean;
  /**
   * A planner difference: the item timed out on the main engine and its verdict here differs
   * (the older SQLite plans the query so that it finishes). Absent in records made before.
   */
  planner?: boolean;
}

/** A value of a counterexample table, JSON-safe: INTEGER beyond 2^53 as its digits, a BLOB as hex. */
export type TsCell = null | number | string | { int: string } | { blob: string };

/** The suite database on which a prediction that EX accepts and its gold differ. */
export interface TsCounterexample {
  /** Position of the database in the item's suite (0-based). */
  suiteDb: number;
  /** The prediction's error on that database (null when it ran). */
  predError: string | null;
  predColumns: string[];
  goldColumns: string[];
  /** The first rows of each result (src/../workers/sql-suite.ts COUNTEREXAMPLE_ROWS). */
  predRows: TsCell[][];
  goldRows: TsCell[][];
  predRowCount: number | null;
  goldRowCount: number;
  /** Positions of the rows (among all of each result) with no equal row on the other side (row-diff.ts). */
  predOnly: number[];
  goldOnly: number[];
}

/** SQLite's `typeof()` of a value: sql.js returns 1.0 as the number 1, so the class travels apart. */
export type StorageClass = 'integer' | 'real' | 'text' | 'blob' | 'null';

// ── A multi-turn episode's records (the runner and its ports: episode/) ──

/** One probe's outcome; exactly one of rows / error / timedOut describes it. */
export interface ProbeResult {
  columns: string[];
  /** Every row, in the query's order. */
  rows: SqlValue[][];
  /** The storage class of every cell, same shape as `rows` (sql.js returns REAL 1.0 as the number 1). */
  classes: StorageClass[][];
  /** The database's (or the pool's) error text, e.g. `no such table: x`; a refused write too. */
  error?: string;
  /** The probe ran past its timeout and was stopped. */
  timedOut?: boolean;
  /**
   * A replayed dump's probe (Episode.replay): the dump keeps the observation text, not the rows,
   * so `columns`, `rows` and `classes` are empty; `error` / `timedOut` say what the observation said.
   */
  notKept?: true;
}

/** `engine-error`: the policy's engine failed on a turn (Episode.error says how); the turns before it are kept. */
export type EndReason = 'solution' | 'turn-limit' | 'format-failure' | 'engine-error';

export interface EpisodeTurn {
  /** The policy's text (with its stop string). */
  text: string;
  tokens: number | null;
  /** The probe's SQL (SkyRL: the first `<sql>` block), null when the turn had none. */
  probeSql: string | null;
  /** The probe's outcome, when one ran. */
  probe: ProbeResult | null;
  /** The text sent back to the policy, exactly; null on the last turn. */
  observation: string | null;
  /** Milliseconds the turn took: the policy's reply and the probe. */
  ms: number;
  /**
   * Every tool call of the turn (the verl environment: a turn may call several), in order: its SQL
   * (null when the arguments had none), the probe (null when the call was refused before running)
   * and the tool's response text. `probeSql`/`probe` are the first call's.
   */
  toolCalls?: ToolCallRecord[];
}

export interface ToolCallRecord {
  sql: string | null;
  probe: ProbeResult | null;
  response: string;
}

export interface Episode {
  envId: string;
  turns: EpisodeTurn[];
  turnsUsed: number;
  /** Probes that ended in an error or a timeout (refused writes included). */
  probesFailed: number;
  /** The SQL to score with the run's EX rule; null when the episode gave none. */
  finalSql: string | null;
  endReason: EndReason;
  /** The preset's format check on the whole trajectory (SkyRL's verify_format_and_extract). */
  formatValid: boolean;
  /** The preset's own reward (SkyRL: -1 bad format, else 1 / 0); null without a judge. */
  presetReward: number | null;
  /** The engine's message when the episode ended on an engine error. */
  error?: string;
  /**
   * A trainer's dump replayed (src/core/formats/replay-episode.ts), not an episode played here:
   * the dump's format and its stop reason (SkyRL's `stop_reason`, a verifiers trace's
   * `stop_condition`; null when it has none). Its turns keep no tokens, time or probe rows, and
   * `presetReward` is the trainer's own score of the sample.
   */
  replay?: { format: string; stopReason: string | null };
}
