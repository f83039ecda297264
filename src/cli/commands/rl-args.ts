/** Flag readers shared by `stats` and `compare`. */
import { bad, numberFlag } from '../flags.ts';

/** An integer in [min, max], or the default when the flag is absent. */
export function integerFlag(flag: string, v: string | undefined, def: number, min: number, max: number): number {
  return numberFlag(flag, v, def, { min, max, integer: true });
}

/** `--k 1,4,8`: positive integers, at least one. */
export function kList(v: string | undefined): number[] | undefined {
  if (v === undefined) return undefined;
  const parts = v
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);
  if (parts.length === 0) throw bad('--k', 'name at least one k, e.g. --k 1,4,8');
  return parts.map((p) => integerFlag('--k', p, 1, 1, 1_000_000));
}
