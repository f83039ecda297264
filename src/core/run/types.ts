/**
 * A run: what was evaluated, how, and every sample's result. The same shape is stored in
 * IndexedDB (header apart from samples), exported as a run file, and read by the CLI.
 */
import { OFFICIAL_TIMEOUT_MS, OFFICIAL_VES_ITERATIONS } from '../eval/constants.ts';
import type { MetricName } from '../eval/executor.ts';
import type { ItemResult, ItemStatus } from '../types.ts';
import type { RubricScores } from '../rubric/scores.ts';
import type { ChatMessage, Completion } from '../engine/engine.ts';
import type { PromptFit } from '../prompt/build-prompt.ts';
import type { SuiteSpec } from '../ts/suite.ts';
import type { ExRule } from '../compare/spider-ex.ts';
import type { Episode } from '../episode/types.ts';
import type { PolicyPreset } from '../prompt/presets.ts';

export const RUN_FILE_FORMAT = 'rlvr-workbench-run';
export const RUN_FILE_VERSION = 1;

/**
 * A run's settings: the one settings type after parsing (the app's run form, the CLI's
 * evaluation flags: `runConfigOf`), taken by the app's services and the run recipe, stored as
 * the header's `config`; the executor's request is derived from it (`evalOptionsOf`).
 */
export interface RunConfig {
  metrics: MetricName[];
  timeoutMs: number;
  readOnly: boolean;
  vesIterations: number;
  /** Which fenced block extraction takes from completions. */
  fence: 'first' | 'last';
  /** Reward per sample as an expression of `ex` and `format` (e.g. `ex + 0.1 * format`). */
  rewardFormula: string;
  /** Metric ts: the test suite's seed and size (docs/test-suite.md); absent without ts (then DEFAULT_SUITE_SPEC applies). */
  suite?: SuiteSpec;
  /** The execution match that decided EX (docs/spider-rules.md); absent in BIRD runs and older runs: BIRD's set equality. */
  exRule?: ExRule;
  /**
   * The app's runs: take verdicts from the verdict cache of earlier runs and keep this run's
   * there (verdict-cache.ts); absent means yes. False executes every item, as the CLI's
   * `--no-cache`. It changes no verdict, only whether the SQL runs again.
   */
  verdictCache?: boolean;
}

export const DEFAULT_RUN_CONFIG: RunConfig = {
  metrics: ['ex', 'soft-f1'],
  timeoutMs: OFFICIAL_TIMEOUT_MS,
  readOnly: false,
  vesIterations: OFFICIAL_VES_ITERATIONS,
  fence: 'last',
  rewardFormula: 'ex',
};

export interface FileRef {
  name: string;
  sha256: string;
  bytes: number;
}

export interface RunHeader {
  id: string;
  name: string;
  /** ISO 8601. */
  createdAt: string;
  updatedAt: string;
  status: 'running' | 'done' | 'cancelled' | 'failed';
  /** How the SQL was produced: a predictions file (replay) or an engine. */
  source:
    { kind: 'replay'; predictions: FileRef } | { kind: 'generation'; engine: string; model: string; template: string };
  dataset: { id: string; name: string; questions: FileRef; gold: FileRef | null; databases: Record<string, string> };
  /** Gold indices (positions in the dataset) of the questions in this run. */
  subset: { description: string; indices: number[] };
  config: RunConfig;
  samplesPerQuestion: number;
  /** Engine of execution, e.g. `sql.js 1.17.0 (SQLite 3.54.1)`. */
  executor: string;
  /** `select sqlite_version()` of the engine that gave the verdicts; absent in older runs. */
  sqliteVersion?: string;
  /** Samples whose queries ran, and samples that took the verdict of an identical one (src/core/run/reuse.ts); absent in older runs. */
  /** `fromCache`: verdicts taken from the verdict cache (src/core/run/verdict-cache.ts), not executed. */
  executions?: { executed: number; reused: number; fromCache?: number };
  /** `eval --shard K/N`: this run file holds shard K of N (src/core/batch/shard.ts); `merge` joins them. */
  shard?: { k: number; n: number };
  /**
   * Generation runs: the device the engine reported the last time it generated for this run
   * (`webgpu`, `cpu`, `server`, `none`), why the CPU when a GPU was asked for, and which
   * adapter or server; absent for replays, older runs and engines that cannot tell.
   */
  device?: RunDevice;
  /**
   * The summary's total EX (percent), scored questions and samples, for run lists; written when
   * the app evaluated the whole run in one go (absent after a resume, in older and imported runs).
   */
  score?: { ex: number | null; questions: number; samples: number };
  /**
   * Version effects measured (src/core/run/version-effects.ts): the flagged samples re-run on the
   * older SQLite engine, and how many of their verdicts differ; absent when not measured.
   */
  versionCheck?: {
    sqliteVersion: string;
    checked: number;
    /** Result differences (EX or Soft-F1), planner differences apart. */
    differing: number;
    /** Items that timed out here and got another verdict on the older SQLite (absent in older files). */
    planner?: number;
  };
  /**
   * The policy preset the run was generated with (src/core/prompt/presets.ts): its id,
   * fingerprint and full content, so a later change of a built-in preset cannot change what the
   * run says; absent for runs generated with a prompt template, replays and older runs.
   */
  preset?: { id: string; fingerprint: string; content: PolicyPreset };
  /** Exports of a run with a corrected-gold overlay: its name and both totals (the samples carry `corrected`). */
  goldOverlay?: {
    name: string;
    covered: number;
    goldsChanged: number;
    officialEx: number | null;
    correctedEx: number | null;
  };
}

/** The device that ran a generation run (the engine's EngineDevice as recorded). */
export interface RunDevice {
  device: string;
  reason: string | null;
  detail?: string;
}

/** One sample of one question: the item's scores plus what the model wrote. */
export interface SampleRecord extends ItemResult {
  /** 0-based sample number within its question. */
  sample: number;
  sql: string;
  goldSql: string;
  completion?: string;
  /** Format reward: SQL was found by an extraction rule other than `none`. */
  format: 0 | 1;
  /** Value of the run's reward formula. */
  reward: number;
  /** Mean token log-probability, when the engine reported it. */
  meanLogprob?: number;
  /** Rubric score of the sample, when a rubric was applied (best-of-n scorer). */
  rubricScore?: number;
  /**
   * Every criterion's verdict and the explicit, implicit and Likert aggregates, when the sample
   * was scored with a rubric (src/core/rubric); its `promptInjection` flags completions that
   * address the judge.
   */
  rubric?: RubricScores;
  /**
   * Multi-turn presets: the sample's whole episode (every turn, probe and observation); the
   * sample's `sql` is its final SQL ('' when none) and its verdict the run's EX rule on it;
   * `episode.presetReward` is the preset's own reward beside it.
   */
  episode?: Episode;
  /** How a generation run produced the sample: prompt as sent, what was cut, tokens, latency, finish reason, seed, engine and model. */
  generation?: SampleGeneration;
  /**
   * Exports of a run with a corrected-gold overlay (core/run/overlay-record.ts): the sample's
   * verdict against the corrected gold (`changed`: the overlay changed its gold SQL); absent when
   * no overlay is attached or the sample was not scored.
   */
  corrected?: { ex: 0 | 1; softF1: number | null; status: ItemStatus; goldSql: string; changed: boolean };
}

/** Text of one question of the run, for exports that feed the next RL round. */
export interface RunQuestion {
  /** Gold position, as `SampleRecord.index`. */
  index: number;
  questionId: number;
  dbId: string;
  question: string;
  evidence: string;
}

export interface RunFile {
  format: typeof RUN_FILE_FORMAT;
  version: typeof RUN_FILE_VERSION;
  run: RunHeader;
  samples: SampleRecord[];
  /** The questions' texts, when the run knew them (optional: `eval` without `--dataset` has none). */
  questions?: RunQuestion[];
}

/** How one sample was produced: stored in `SampleRecord.generation`. */
export interface SampleGeneration {
  /** The prompt exactly as sent. */
  prompt: ChatMessage[];
  templateId: string;
  templateFingerprint: string;
  /** Token count, limit, counter and what was cut to fit the context window. */
  fit: PromptFit;
  tokensIn: number | null;
  tokensOut: number | null;
  latencyMs: number;
  finishReason: Completion['finishReason'];
  seed: number | null;
  /** `<engine kind>` and model id. */
  engine: string;
  model: string;
  /** The engine's message when finishReason is `error`. */
  error?: string;
  /** The device that ran the sample and, on a fallback to the CPU, why (engines that report it). */
  device?: string;
  deviceReason?: string;
  /** Which adapter or server (EngineDevice.detail), when the engine says. */
  deviceDetail?: string;
  /** The model id the server says answered, and its `system_fingerprint`, when reported. */
  servedModel?: string;
  systemFingerprint?: string;
}
