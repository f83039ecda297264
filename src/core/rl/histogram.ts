/** Histogram bins for pass rates and GRPO advantages; plain data for tables, plots and JSON. */
import { maxOf, minOf } from '../util/numbers.ts';

export interface Bin {
  label: string;
  /** Bounds; `loOpen`/`hiOpen` say whether each end is excluded. */
  lo: number;
  hi: number;
  loOpen: boolean;
  hiOpen: boolean;
  count: number;
}

function bin(lo: number, hi: number, loOpen: boolean, hiOpen: boolean, label?: string): Bin {
  const l = lo === hi ? String(lo) : `${loOpen ? '(' : '['}${lo}, ${hi}${hiOpen ? ')' : ']'}`;
  return { label: label ?? l, lo, hi, loOpen, hiOpen, count: 0 };
}

function inBin(b: Bin, v: number): boolean {
  return (b.loOpen ? v > b.lo : v >= b.lo) && (b.hiOpen ? v < b.hi : v <= b.hi);
}

/**
 * Pass rates: exactly 0 and exactly 1 get bins of their own (with a 0/1 reward those prompts
 * give GRPO nothing), the open interval between them five bins of 0.2.
 */
export function passRateHistogram(rates: readonly number[]): Bin[] {
  const bins = [
    bin(0, 0, false, false, '0 (all wrong)'),
    bin(0, 0.2, true, false),
    bin(0.2, 0.4, true, false),
    bin(0.4, 0.6, true, false),
    bin(0.6, 0.8, true, false),
    bin(0.8, 1, true, true),
    bin(1, 1, false, false, '1 (all right)'),
  ];
  for (const r of rates) bins.find((b) => inBin(b, r))!.count++;
  return bins;
}

/** At most this many advantage bins: the width grows (1, 2, 5 x 10^e) when the values spread wider. */
export const MAX_ADVANTAGE_BINS = 40;

/** The smallest of 1, 2, 5 x 10^e that is >= x. */
function niceWidth(x: number): number {
  const e = 10 ** Math.floor(Math.log10(x));
  for (const f of [1, 2, 5, 10]) if (f * e >= x) return f * e;
  return 10 * e;
}

/**
 * Advantages: bins of `width` on a grid through 0, from the lowest to the highest value, with
 * exactly-zero advantages (zero-variance groups) counted apart in a bin of their own. When the
 * values span more than MAX_ADVANTAGE_BINS bins (one huge reward gives a huge advantage) the
 * width is widened, so the number of bins never depends on the size of the values.
 */
export function advantageHistogram(values: readonly number[], width = 0.5): Bin[] {
  const nonZero = values.filter((v) => v !== 0);
  const bins: Bin[] = [];
  const zeros = values.length - nonZero.length;
  if (nonZero.length > 0) {
    const min = minOf(nonZero);
    const max = maxOf(nonZero);
    // Half the range, doubled back: max - min itself may overflow for values near the double limit.
    const span = max / 2 - min / 2;
    if (span / width > MAX_ADVANTAGE_BINS / 2) width = niceWidth(span / (MAX_ADVANTAGE_BINS / 2));
    const first = Math.floor(min / width);
    const count = Math.max(1, Math.ceil(max / width) - first);
    for (let i = 0; i < count; i++) bins.push(bin((first + i) * width, (first + i + 1) * width, false, true));
    const last = bins[bins.length - 1]!;
    last.hiOpen = false;
    last.label = `[${last.lo}, ${last.hi}]`;
    for (const v of nonZero) {
      // Index arithmetic, not a search: clamped, so rounding at a bin edge cannot lose a value.
      const at = Math.min(count - 1, Math.max(0, Math.floor(v / width) - first));
      const b = inBin(bins[at]!, v) ? bins[at]! : (bins.find((x) => inBin(x, v)) ?? bins[at]!);
      b.count++;
    }
  }
  const zeroBin = bin(0, 0, false, false, '0 (no gradient)');
  zeroBin.count = zeros;
  const at = bins.findIndex((b) => b.lo >= 0);
  bins.splice(at < 0 ? bins.length : at, 0, zeroBin);
  return bins;
}
