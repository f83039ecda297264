/**
 * The records of RaR datasets and runs in the rubrics database (rar-store.ts reads and writes
 * them; idb-judge-cache.ts declares their stores), apart so neither imports the other.
 */
import type { ModelRef, SamplingParams } from '../core/engine/engine.ts';
import type { WeightingName } from '../core/rubric/model.ts';
import type { RarRow } from '../core/rubric/rar-dataset.ts';
import type { RarSample } from '../core/rubric/rar-run.ts';
import type { Aggregation } from '../core/rubric/score.ts';
import type { ExplicitOptions, JudgeInfo } from '../core/rubric/scores.ts';

export interface RarDatasetRecord {
  id: string;
  name: string;
  file: { name: string; sha256: string; bytes: number };
  importedAt: string;
  rows: RarRow[];
}

export type RarPolicyRecord =
  /** `prompt`: the policy prompt's version (rar-run.ts RAR_POLICY_PROMPT_VERSION). */
  | { kind: 'engine'; engine: string; model: ModelRef; params: SamplingParams; prompt: string }
  | {
      kind: 'replay';
      file: { name: string; sha256: string; bytes: number };
      completions: Record<number, string[]>;
      /** The lines' `rule_score` by row index then sample (rule × judge), when the file gives any. */
      rules?: Record<number, Array<number | null>>;
    };

export interface RarRunHeader {
  id: string;
  name: string;
  createdAt: string;
  updatedAt: string;
  status: 'running' | 'done' | 'cancelled' | 'failed';
  /** Why the run stopped, when it failed. */
  error: string | null;
  dataset: { id: string; name: string; file: RarDatasetRecord['file'] };
  policy: RarPolicyRecord;
  judge: JudgeInfo | null;
  samplesPerQuestion: number;
  aggregations: Aggregation[];
  explicit: ExplicitOptions;
  weighting: WeightingName | 'as-given';
  /** Samples the run plans (rows x samples, or what the replayed file has). */
  planned: number;
}

export interface StoredRarSample extends RarSample {
  runId: string;
}
