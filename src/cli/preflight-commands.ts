/** Each command's outputs and inputs for `checkOutputs`, called right after its flags are parsed. */
import { checkOutputs, checkOutputsWithDataset, pathFlags } from './preflight.ts';

export function checkStatsOutputs(values: Record<string, string | boolean | undefined>): Promise<void> {
  const file = (flag: string) => (typeof values[flag] === 'string' ? (values[flag] as string) : null);
  return checkOutputs({
    outputs: ['out', 'csv', 'prompts-json', 'frontier-jsonl'].map((f) => ({ flag: `--${f}`, file: file(f) })),
    inputs: pathFlags({ '--run': file('run'), '--dataset': file('dataset') }),
  });
}

export function checkCompareOutputs(out: string | undefined, runA: string, runB: string): Promise<void> {
  return checkOutputs({ outputs: pathFlags({ '--out': out }), inputs: pathFlags({ RUN_A: runA, RUN_B: runB }) });
}

export function checkProbeOutputs(args: {
  out: string | null;
  gold: string;
  dataset: string | null;
  dbRoot: string;
}): Promise<void> {
  return checkOutputsWithDataset(args, { outputs: pathFlags({ '--out': args.out }), inputs: [] });
}

/** The judge cache is read and appended to: its folder must exist and it must not be an input, and --out must not be it. */
export function checkRubricOutputs(args: {
  out: string | null;
  cache: string | null;
  dataset: string;
  completions: string;
}): Promise<void> {
  return checkOutputs({
    outputs: pathFlags({ '--out': args.out, '--cache': args.cache }),
    inputs: pathFlags({ '--dataset': args.dataset, '--completions': args.completions }),
  });
}
