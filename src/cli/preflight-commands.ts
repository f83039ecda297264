/** Each command's outputs and inputs for `checkOutputs`, called right after its flags are parsed. */
import type { EvalArgs } from './commands/eval-args.ts';
import { checkOutputs } from './preflight.ts';

export function checkEvalOutputs(args: EvalArgs): Promise<void> {
  return checkOutputs({
    outputs: [
      { flag: '--out', file: args.out },
      { flag: '--run-out', file: args.runOut },
    ],
    inputs: [
      { flag: '--predictions', file: args.predictions },
      { flag: '--gold', file: args.gold },
      { flag: '--dataset', file: args.dataset },
    ],
    inputDirs: [{ flag: '--db-root', file: args.dbRoot }],
  });
}

export function checkStatsOutputs(values: Record<string, string | boolean | undefined>): Promise<void> {
  const file = (flag: string) => (typeof values[flag] === 'string' ? (values[flag] as string) : null);
  return checkOutputs({
    outputs: ['out', 'csv', 'prompts-json', 'frontier-jsonl'].map((f) => ({ flag: `--${f}`, file: file(f) })),
    inputs: [
      { flag: '--run', file: file('run') },
      { flag: '--dataset', file: file('dataset') },
    ],
  });
}

export function checkCompareOutputs(out: string | undefined, runA: string, runB: string): Promise<void> {
  return checkOutputs({
    outputs: [{ flag: '--out', file: out }],
    inputs: [
      { flag: 'RUN_A', file: runA },
      { flag: 'RUN_B', file: runB },
    ],
  });
}

export function checkProbeOutputs(args: {
  out: string | null;
  gold: string;
  dataset: string | null;
  dbRoot: string;
}): Promise<void> {
  return checkOutputs({
    outputs: [{ flag: '--out', file: args.out }],
    inputs: [
      { flag: '--gold', file: args.gold },
      { flag: '--dataset', file: args.dataset },
    ],
    inputDirs: [{ flag: '--db-root', file: args.dbRoot }],
  });
}

/** The judge cache is read and appended to: its folder must exist and it must not be an input, and --out must not be it. */
export function checkRubricOutputs(args: {
  out: string | null;
  cache: string | null;
  dataset: string;
  completions: string;
}): Promise<void> {
  return checkOutputs({
    outputs: [
      { flag: '--out', file: args.out },
      { flag: '--cache', file: args.cache },
    ],
    inputs: [
      { flag: '--dataset', file: args.dataset },
      { flag: '--completions', file: args.completions },
    ],
  });
}
