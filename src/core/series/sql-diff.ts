/**
 * The difference between two SQL texts as the series view shows the majority SQL of consecutive
 * steps: a longest-common-subsequence diff over SQL-ish tokens (words, numbers, quoted strings
 * and names, single symbols, runs of whitespace; all whitespace compares equal, and words equal
 * up to case), each part kept as the later text writes it. Texts of more than MAX_DIFF_TOKENS tokens are shown as one removal and one addition.
 */
export interface DiffPart {
  kind: 'same' | 'removed' | 'added';
  text: string;
}

export const MAX_DIFF_TOKENS = 3000;

const TOKEN = /\s+|[A-Za-z_][\w$]*|\d+(?:\.\d+)?|'(?:[^']|'')*'?|"(?:[^"]|"")*"?|`[^`]*`?|\[[^\]]*\]?|[\s\S]/g;

export function sqlTokens(sql: string): string[] {
  return sql.match(TOKEN) ?? [];
}

const WORD = /^[A-Za-z_]/;
/** Equal tokens: the same text, two runs of whitespace, or two words that differ only in case (SQL keywords and names do not care). */
const same = (a: string, b: string) =>
  a === b || (/^\s/.test(a) && /^\s/.test(b)) || (WORD.test(a) && WORD.test(b) && a.toLowerCase() === b.toLowerCase());

function push(out: DiffPart[], kind: DiffPart['kind'], text: string): void {
  const last = out[out.length - 1];
  if (last && last.kind === kind) last.text += text;
  else out.push({ kind, text });
}

export function sqlDiff(before: string, after: string): DiffPart[] {
  const a = sqlTokens(before);
  const b = sqlTokens(after);
  const out: DiffPart[] = [];
  if (a.length > MAX_DIFF_TOKENS || b.length > MAX_DIFF_TOKENS) {
    if (before) out.push({ kind: 'removed', text: before });
    if (after) out.push({ kind: 'added', text: after });
    return out;
  }
  // lcs[i][j]: longest common subsequence of a[i..] and b[j..], one row of b.length + 1 per i.
  const w = b.length + 1;
  const lcs = new Uint16Array((a.length + 1) * w);
  for (let i = a.length - 1; i >= 0; i--)
    for (let j = b.length - 1; j >= 0; j--)
      lcs[i * w + j] = same(a[i]!, b[j]!)
        ? lcs[(i + 1) * w + j + 1]! + 1
        : Math.max(lcs[(i + 1) * w + j]!, lcs[i * w + j + 1]!);
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (same(a[i]!, b[j]!)) {
      push(out, 'same', b[j]!);
      i++;
      j++;
    } else if (lcs[(i + 1) * w + j]! >= lcs[i * w + j + 1]!) push(out, 'removed', a[i++]!);
    else push(out, 'added', b[j++]!);
  }
  while (i < a.length) push(out, 'removed', a[i++]!);
  while (j < b.length) push(out, 'added', b[j++]!);
  return joinSpaces(out);
}

/** A space kept between two changes of the same kind joins them (`, power` rather than `,` `power`). */
function joinSpaces(parts: DiffPart[]): DiffPart[] {
  const out: DiffPart[] = [];
  for (let k = 0; k < parts.length; k++) {
    const p = parts[k]!;
    const prev = out[out.length - 1];
    const next = parts[k + 1];
    if (p.kind === 'same' && /^\s+$/.test(p.text) && prev && next && prev.kind === next.kind) {
      prev.text += p.text + next.text;
      k++;
    } else if (prev && prev.kind === p.kind) prev.text += p.text;
    else out.push({ ...p });
  }
  return out;
}
