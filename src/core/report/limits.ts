/**
 * The report's bounds (docs/report.md, "Bounds"): what `report` reads, what a report may carry
 * and be, and how far its data may inflate when a report is read back (the app's import, the
 * report page). Each is a parameter of the function that applies it, so tests pass small ones.
 */
const KiB = 1024;
const MiB = 1024 * KiB;

export interface ReportLimits {
  /** Bytes of each file `report` reads (--run, --compare, --series), checked before reading it. */
  inputBytes: number;
  /** Characters of one text (an SQL, a completion, an error...): a longer one is cut, with a marker. */
  textChars: number;
  /** Bytes of the report's HTML: a larger report is refused before it is written. */
  htmlBytes: number;
  /** Bytes of the report's data (its JSON) inflated: the builder and every reader hold to it. */
  dataBytes: number;
  /** Inflated bytes / compressed bytes of the data, checked once past `ratioFloorBytes` (as for zips). */
  ratio: number;
  ratioFloorBytes: number;
}

/**
 * 512 MiB of input is about the most one text can hold in JavaScript (0x1fffffe8 characters);
 * 64 KiB is far above any real SQL or completion (BIRD's longest gold is 1.1 KiB) and keeps a
 * runaway string from filling the report; 256 MiB of HTML and of data are 40 times the
 * 100,000-sample report (6.2 MB, its data 60 MB); the ratio and its floor are the zips'
 * (src/adapters/zip/zip-entries.ts): real report data deflates 5 to 15 times.
 */
export const REPORT_LIMITS: ReportLimits = {
  inputBytes: 512 * MiB,
  textChars: 64 * KiB,
  htmlBytes: 256 * MiB,
  dataBytes: 256 * MiB,
  ratio: 100,
  ratioFloorBytes: 4 * MiB,
};

/**
 * Result rows of the wrong samples a report made in the app keeps (result-rows.ts): the first 20
 * rows of each side (the explorer's own preview), for at most 2,000 samples and 4 MiB of rows, a
 * few times the 500-item replay report (a 100,000-sample run keeps its first 2,000 wrong samples).
 * A sample whose SQL took over 5 s in the run is not run again (a 27 s toxicology prediction
 * would cost the report 27 s for 20 rows): it is counted and said.
 */
export const RESULT_ROWS_BUDGET = { rowsPerSide: 20, maxItems: 2000, maxBytes: 4 * MiB, maxRunMs: 5000 } as const;

export function fmtBytes(n: number): string {
  return n >= MiB ? `${(n / MiB).toFixed(1)} MiB` : n >= KiB ? `${(n / KiB).toFixed(1)} KiB` : `${n} bytes`;
}

/** The most bytes `compressed` bytes of report data may inflate to. */
export function inflationLimit(compressed: number, limits: ReportLimits = REPORT_LIMITS): number {
  return Math.min(limits.dataBytes, Math.max(limits.ratioFloorBytes, limits.ratio * Math.max(1, compressed)));
}

/** The texts of a report longer than the bound: how many were cut, and the bound. */
export interface TextsCut {
  count: number;
  maxChars: number;
}

/** A text cut to `maxChars` (never inside a surrogate pair) with the marker saying how much was left out. */
export function cutText(text: string, maxChars: number): string {
  let end = maxChars;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return `${text.slice(0, end)}… (${(text.length - end).toLocaleString('en-US')} characters more)`;
}

/**
 * `value` with every string longer than `maxChars` cut (`cutText`), at any depth; objects and
 * arrays without a long string are returned as they are (nothing is copied for a normal run).
 */
export function cutLongTexts<T>(value: T, maxChars: number, cut: { count: number }): T {
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') {
      if (v.length <= maxChars) return v;
      cut.count++;
      return cutText(v, maxChars);
    }
    if (v === null || typeof v !== 'object') return v;
    if (Array.isArray(v)) {
      let out: unknown[] | null = null;
      for (let i = 0; i < v.length; i++) {
        const w = walk(v[i]);
        if (w !== v[i]) (out ??= v.slice())[i] = w;
      }
      return out ?? v;
    }
    let out: Record<string, unknown> | null = null;
    for (const [k, x] of Object.entries(v)) {
      const w = walk(x);
      if (w !== x) (out ??= { ...(v as Record<string, unknown>) })[k] = w;
    }
    return out ?? v;
  };
  return walk(value) as T;
}

/** Bytes of `text` in UTF-8, without encoding it. */
export function utf8Length(text: string): number {
  let n = text.length;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800) n += 1;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n += 2; // a pair: 4 bytes for its 2 code units
        i++;
      } else n += 2;
    } else n += 2;
  }
  return n;
}
