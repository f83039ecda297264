/** Flags of `batch export` and `batch import`. */
import { OFFICIAL_TIMEOUT_S } from '../../core/eval/constants.ts';
import { METRICS, type MetricName } from '../../core/eval/executor.ts';
import { DEFAULT_REWARD_FORMULA } from '../../core/eval/reward.ts';
import { checkTimerFlags, workersFlag } from '../bounds.ts';
import { DATASET_FLAGS, bad, listFlag, numberFlag, parseFlags, requireFlags, strings, switches } from '../flags.ts';
import { BATCH_USAGE } from '../usage.ts';

export { BATCH_USAGE };

export interface BatchExportArgs {
  dataset: string;
  gold: string;
  dbRoot: string;
  model: string;
  out: string;
  planOut: string;
  template: string;
  n: number;
  seed: number;
  temperature: number;
  topP: number;
  maxTokens: number;
  contextWindow: number | null;
  sampleRows: number | null;
  descriptions: boolean | null;
  logprobs: boolean;
  limit: number | null;
  /** A policy preset: it fixes the messages, sampling, stops and prefill (the flags it fixes are refused beside it). */
  preset: string | null;
  selfConsistency: boolean;
  /** Samples per question when --n was given (a preset's own count otherwise). */
  nGiven: boolean;
  tables: string | null;
}

export interface BatchImportArgs {
  plan: string;
  outputs: string[];
  dataset: string;
  gold: string;
  dbRoot: string;
  runOut: string | null;
  missingOut: string | null;
  metrics: MetricName[];
  reward: string;
  timeoutS: number;
  workers: number | null;
  /** The dataset's tables.json, for a plan made under a preset that renders OmniSQL's schema. */
  tables: string | null;
}

/** Samples per question of one batch: pass@k papers go to k = 1024; the file is streamed, so this bounds time and disk. */
export const MAX_BATCH_N = 1024;
const int = (min: number, max: number) => ({ min, max, integer: true });

export function parseBatchExportArgs(argv: string[]): BatchExportArgs {
  const { values: v } = parseFlags(
    argv,
    {
      ...DATASET_FLAGS,
      ...strings(
        'model',
        'out',
        'plan-out',
        'template',
        'n',
        'seed',
        'temperature',
        'top-p',
        'max-tokens',
        'context-window',
        'sample-rows',
        'limit',
        'preset',
        'tables',
      ),
      ...switches('descriptions', 'logprobs', 'self-consistency'),
    },
    BATCH_USAGE,
  );
  requireFlags(v, ['dataset', 'gold', 'db-root', 'model', 'out'], BATCH_USAGE);
  if (v.preset === undefined) {
    for (const flag of ['self-consistency', 'tables'] as const)
      if (v[flag] !== undefined)
        throw bad(`--${flag}`, 'goes with --preset ID: name the preset, or leave the flag out');
  } else {
    // The preset fixes the prompt and the sampling: a flag that would change them is refused, not ignored.
    for (const flag of [
      'template',
      'temperature',
      'top-p',
      'max-tokens',
      'context-window',
      'sample-rows',
      'descriptions',
    ] as const)
      if (v[flag] !== undefined)
        throw bad(
          `--${flag}`,
          `is fixed by --preset ${v.preset} (its messages, schema rendering and sampling are the published ones): leave it out`,
        );
    if (v.n !== undefined && v['self-consistency'])
      throw bad('--n', 'cannot be combined with --self-consistency, which sets the samples per question: give one');
  }
  const out = v.out!;
  return {
    dataset: v.dataset!,
    gold: v.gold!,
    dbRoot: v['db-root']!,
    model: v.model!,
    out,
    planOut: v['plan-out'] ?? (out.endsWith('.jsonl') ? out.slice(0, -'.jsonl'.length) : out) + '.plan.json',
    template: v.template ?? 'bird-minidev-v1',
    n: numberFlag('--n', v.n, 1, int(1, MAX_BATCH_N)),
    // seed + sample is each request's seed: it stays a 32-bit unsigned integer.
    seed: numberFlag('--seed', v.seed, 0, int(0, 0xffffffff - MAX_BATCH_N)),
    temperature: numberFlag('--temperature', v.temperature, 0, { min: 0, max: 2 }),
    topP: numberFlag('--top-p', v['top-p'], 1, { min: 0, max: 1, minExclusive: true }),
    maxTokens: numberFlag('--max-tokens', v['max-tokens'], 512, int(1, 1_048_576)),
    contextWindow:
      v['context-window'] === undefined
        ? null
        : numberFlag('--context-window', v['context-window'], 0, int(1, 10_000_000)),
    sampleRows: v['sample-rows'] === undefined ? null : numberFlag('--sample-rows', v['sample-rows'], 0, int(0, 100)),
    descriptions: v.descriptions ?? null,
    logprobs: v.logprobs ?? false,
    limit: v.limit === undefined ? null : numberFlag('--limit', v.limit, 0, int(1, 100_000_000)),
    preset: v.preset ?? null,
    selfConsistency: v['self-consistency'] ?? false,
    nGiven: v.n !== undefined,
    tables: v.tables ?? null,
  };
}

export function parseBatchImportArgs(argv: string[]): BatchImportArgs {
  const { values: v } = parseFlags(
    argv,
    {
      plan: { type: 'string' },
      output: { type: 'string', multiple: true },
      ...DATASET_FLAGS,
      ...strings('run-out', 'missing-out', 'metrics', 'reward', 'timeout-s', 'workers', 'tables'),
    },
    BATCH_USAGE,
  );
  requireFlags(v, ['plan', 'dataset', 'gold', 'db-root'], BATCH_USAGE);
  if (!v.output || v.output.length === 0)
    throw bad(
      '--output',
      `is required (the output JSONL of run_batch; repeat it for the outputs of re-run missing lines)\n${BATCH_USAGE}`,
    );
  const metrics = listFlag('--metrics', v.metrics, 'ex,soft-f1', METRICS, 'metric');
  const timeoutS = numberFlag('--timeout-s', v['timeout-s'], OFFICIAL_TIMEOUT_S, {
    min: 0,
    max: Infinity,
    minExclusive: true,
  });
  checkTimerFlags(timeoutS, null);
  return {
    plan: v.plan!,
    outputs: v.output,
    dataset: v.dataset!,
    gold: v.gold!,
    dbRoot: v['db-root']!,
    runOut: v['run-out'] ?? null,
    missingOut: v['missing-out'] ?? null,
    metrics: [...new Set(metrics)] as MetricName[],
    reward: v.reward ?? DEFAULT_REWARD_FORMULA,
    timeoutS,
    workers: workersFlag(v.workers),
    tables: v.tables ?? null,
  };
}
