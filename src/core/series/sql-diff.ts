/**
 * The difference between two SQL texts as the series view shows the majority SQL of consecutive
 * steps: a longest-common-subsequence diff over SQL-ish tokens (words, numbers, quoted strings
 * and names, single symbols, runs of whitespace; all whitespace compares equal, and words equal
 * up to case), grouped into hunks so that it reads: between two words (names, numbers, strings) both texts share, what
 * was removed is one run (its words spaced as the earlier text spaces them) followed by what was
 * added (as the later text writes it), never interleaved token by token; a `gap` (one space)
 * separates the two runs when neither brings its own. The `same` and `added` parts are the later
 * text exactly. Texts of more than MAX_DIFF_TOKENS tokens are shown as one removal and one addition.
 */
export interface DiffPart {
  kind: 'same' | 'removed' | 'added' | 'gap';
  text: string;
}

const MAX_DIFF_TOKENS = 3000;

const TOKEN = /\s+|[A-Za-z_][\w$]*|\d+(?:\.\d+)?|'(?:[^']|'')*'?|"(?:[^"]|"")*"?|`[^`]*`?|\[[^\]]*\]?|[\s\S]/g;

function sqlTokens(sql: string): string[] {
  return sql.match(TOKEN) ?? [];
}

const WORD = /^[A-Za-z_]/;
/** Equal tokens: the same text, two runs of whitespace, or two words that differ only in case (SQL keywords and names do not care). */
const same = (a: string, b: string) =>
  a === b || (/^\s/.test(a) && /^\s/.test(b)) || (WORD.test(a) && WORD.test(b) && a.toLowerCase() === b.toLowerCase());

export function sqlDiff(before: string, after: string): DiffPart[] {
  const a = sqlTokens(before);
  const b = sqlTokens(after);
  const out: DiffPart[] = [];
  if (a.length > MAX_DIFF_TOKENS || b.length > MAX_DIFF_TOKENS) {
    if (before) out.push({ kind: 'removed', text: before });
    if (before && after) out.push({ kind: 'gap', text: '\n' });
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
  // The token-by-token alignment; a `same` op carries both texts' token (whitespace may differ).
  const ops: Array<{ kind: 'same' | 'removed' | 'added'; a: string; b: string }> = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (same(a[i]!, b[j]!)) ops.push({ kind: 'same', a: a[i++]!, b: b[j++]! });
    else if (lcs[(i + 1) * w + j]! >= lcs[i * w + j + 1]!) ops.push({ kind: 'removed', a: a[i++]!, b: '' });
    else ops.push({ kind: 'added', a: '', b: b[j++]! });
  }
  while (i < a.length) ops.push({ kind: 'removed', a: a[i++]!, b: '' });
  while (j < b.length) ops.push({ kind: 'added', a: '', b: b[j++]! });
  return hunks(ops);
}

const SPACE = /^\s/;
/** One symbol (`.`, `,`, `(`, `=`): between two changes it does not end a hunk (`[-T1.event_id-] {+T2.member+}`). */
const SYMBOL = /^[^\w\s'"`[]$/;

/**
 * The ops grouped into hunks: a hunk runs from a change to the last change before the next shared
 * word, number, string or name; whitespace and symbols both texts share inside it go to each
 * side's run.
 */
function hunks(ops: ReadonlyArray<{ kind: 'same' | 'removed' | 'added'; a: string; b: string }>): DiffPart[] {
  const out: DiffPart[] = [];
  let del = '';
  let ins = '';
  // Shared whitespace and symbols after the hunk's last change: inside the hunk if another change follows, else after it.
  let trailA = '';
  let trailB = '';
  const flush = () => {
    const removed = del.trim();
    if (removed) push(out, 'removed', removed);
    // A removed run's own trailing space, or one between it and the added run, stays visible as a gap.
    if (removed && (ins ? !SPACE.test(ins) : /\s$/.test(del))) out.push({ kind: 'gap', text: ' ' });
    if (ins) push(out, 'added', ins);
    del = ins = '';
  };
  for (const op of ops) {
    const open = del !== '' || ins !== '';
    if (op.kind === 'same' && !open) push(out, 'same', op.b);
    else if (op.kind === 'same' && (SPACE.test(op.b) || SYMBOL.test(op.b))) {
      trailA += op.a;
      trailB += op.b;
    } else if (op.kind === 'same') {
      flush();
      push(out, 'same', trailB + op.b);
      trailA = trailB = '';
    } else {
      if (del) del += trailA;
      if (ins) ins += trailB;
      trailA = trailB = '';
      if (op.kind === 'removed') del += op.a;
      else ins += op.b;
    }
  }
  flush();
  if (trailB) push(out, 'same', trailB);
  return out;
}

function push(out: DiffPart[], kind: DiffPart['kind'], text: string): void {
  const last = out[out.length - 1];
  if (last && last.kind === kind) last.text += text;
  else out.push({ kind, text });
}
