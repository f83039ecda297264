/** Strict flag parsing for every CLI command: an unknown or malformed flag is a BAD_OPTION error ending with the command's usage. */
import { parseArgs, type ParseArgsOptionsConfig } from 'node:util';
import { WorkbenchError } from '../core/errors.ts';

export function parseFlags<O extends ParseArgsOptionsConfig>(
  argv: string[],
  options: O,
  usage: string,
  allowPositionals = false,
) {
  try {
    return parseArgs({ args: argv, strict: true, allowPositionals, options });
  } catch (err) {
    throw new WorkbenchError('BAD_OPTION', `${(err as Error).message}\n${usage}`);
  }
}

/** A BAD_OPTION error naming the flag. */
export const bad = (flag: string, msg: string) => new WorkbenchError('BAD_OPTION', msg, flag);

interface NumberSpec {
  min: number;
  max: number;
  integer?: boolean;
  /** `min` itself is refused (a number > 0). */
  minExclusive?: boolean;
}

/**
 * The one reader of numeric flags: a number within [min, max] (or (min, max]), an integer when
 * asked (a time limit's upper bound is the timer's, checked by checkTimerFlags with its reason), refused at parse time under the flag's own name with the accepted range, so a value
 * such as `--concurrency 1e9` fails before any file is read or any request sent.
 */
export function numberFlag(flag: string, v: string | undefined, def: number, spec: NumberSpec): number {
  if (v === undefined) return def;
  const n = Number(v);
  const low = spec.minExclusive ? n <= spec.min : n < spec.min;
  if (v.trim() === '' || !Number.isFinite(n) || (spec.integer && !Number.isSafeInteger(n)) || low || n > spec.max) {
    const kind = spec.integer ? 'integer' : 'number';
    const what =
      spec.max === Infinity
        ? spec.min === 0 && spec.minExclusive
          ? `a positive ${kind}`
          : `a ${kind} >= ${spec.min}`
        : spec.minExclusive
          ? `a ${kind} greater than ${spec.min} and at most ${spec.max.toLocaleString('en-US')}`
          : `a${kind === 'integer' ? 'n' : ''} ${kind} from ${spec.min} to ${spec.max.toLocaleString('en-US')}`;
    throw bad(flag, `expected ${what}, got ${JSON.stringify(v)}`);
  }
  return n;
}

/** Flags that take a value, for a command's parseFlags options: `...strings('run', 'out')`. */
export function strings<const K extends string>(...names: K[]): { [P in K]: { type: 'string' } } {
  return Object.fromEntries(names.map((n) => [n, { type: 'string' }])) as { [P in K]: { type: 'string' } };
}

/** Flags that take no value (switches), for a command's parseFlags options: `...switches('strict')`. */
export function switches<const K extends string>(...names: K[]): { [P in K]: { type: 'boolean' } } {
  return Object.fromEntries(names.map((n) => [n, { type: 'boolean' }])) as { [P in K]: { type: 'boolean' } };
}

/** The flags naming a dataset's files (--gold, --dataset, --db-root), for a command's parseFlags options. */
export const DATASET_FLAGS = {
  gold: { type: 'string' },
  dataset: { type: 'string' },
  'db-root': { type: 'string' },
} as const;

/** Refuses the first of `names` that was not given, naming it, with the command's usage. */
export function requireFlags<T extends Record<string, unknown>>(
  values: T,
  names: readonly (keyof T & string)[],
  usage: string,
): void {
  for (const name of names) if (!values[name]) throw bad(`--${name}`, `is required\n${usage}`);
}

/**
 * A comma-separated list of `known` values (`fallback` when the flag is absent), e.g. `--metrics
 * ex,soft-f1`: an unknown `what` or an empty list is refused under the flag's name.
 */
export function listFlag<T extends string>(
  flag: string,
  v: string | undefined,
  fallback: string,
  known: readonly T[],
  what: string,
): T[] {
  const list = (v ?? fallback)
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);
  for (const x of list) {
    if (!(known as readonly string[]).includes(x))
      throw bad(flag, `unknown ${what} ${JSON.stringify(x)}; use a comma-separated list of ${known.join(', ')}`);
  }
  if (list.length === 0) throw bad(flag, `name at least one of ${known.join(', ')}`);
  return list as T[];
}
