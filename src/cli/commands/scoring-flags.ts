/**
 * The evaluation flags of a command that scores completions like `eval` does (harness, and any
 * command that reads a dataset and --timeout-s / --workers / --metrics, and series' --cache / --no-cache): read by eval's own
 * parser, so they mean what they mean for `eval` (same defaults and checks).
 */
import { parseEvalArgs, type EvalArgs } from './eval-args.ts';

/** The parsed values of a command's dataset and evaluation flags (what `parseFlags` gives). */
interface EvalFlagValues {
  gold?: string;
  dataset?: string;
  'db-root'?: string;
  'timeout-s'?: string;
  workers?: string;
  metrics?: string;
  /** `--cache DIR` / `--no-cache`, for the commands that take them (series). */
  cache?: string;
  'no-cache'?: boolean;
}

/** `eval`'s arguments for `predictions` with the command's dataset (required before this) and the evaluation flags it was given. */
export function evalArgsOf(predictions: string, values: EvalFlagValues): EvalArgs {
  const passed = (['timeout-s', 'workers', 'metrics'] as const).flatMap((flag) => {
    const value = values[flag];
    return value ? [`--${flag}`, value] : [];
  });
  const cache = [
    ...(values.cache !== undefined ? ['--cache', values.cache] : []),
    ...(values['no-cache'] ? ['--no-cache'] : []),
  ];
  return parseEvalArgs([
    '--predictions',
    predictions,
    '--gold',
    values.gold!,
    '--db-root',
    values['db-root']!,
    '--dataset',
    values.dataset!,
    ...passed,
    ...cache,
  ]);
}
