/** Histogram bins for pass rates and GRPO advantages; plain data for tables, plots and JSON. */
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

/**
 * Advantages: bins of `width` on a grid through 0, from the lowest to the highest value, with
 * exactly-zero advantages (zero-variance groups) counted apart in a bin of their own.
 */
export function advantageHistogram(values: readonly number[], width = 0.5): Bin[] {
  const nonZero = values.filter((v) => v !== 0);
  const bins: Bin[] = [];
  const zeros = values.length - nonZero.length;
  if (nonZero.length > 0) {
    const lo = Math.floor(Math.min(...nonZero) / width) * width;
    const hi = Math.ceil(Math.max(...nonZero) / width) * width;
    for (let x = lo; x < hi - 1e-12; x += width) {
      const a = Math.round(x / width) * width;
      const b = Math.round((x + width) / width) * width;
      bins.push(bin(a, b, false, true));
    }
    if (bins.length === 0) bins.push(bin(lo, lo + width, false, true));
    bins[bins.length - 1]!.hiOpen = false;
    bins[bins.length - 1]!.label = `[${bins[bins.length - 1]!.lo}, ${bins[bins.length - 1]!.hi}]`;
    for (const v of nonZero) {
      const b = bins.find((x) => inBin(x, v)) ?? (v < bins[0]!.lo ? bins[0]! : bins[bins.length - 1]!);
      b.count++;
    }
  }
  const zeroBin = bin(0, 0, false, false, '0 (no gradient)');
  zeroBin.count = zeros;
  const at = bins.findIndex((b) => b.lo >= 0);
  bins.splice(at < 0 ? bins.length : at, 0, zeroBin);
  return bins;
}
