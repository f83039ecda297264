/**
 * What `compare` prints and writes. The JSON keys `questions`, `counts` (`fixed`, `broken`,
 * `both_right`, `both_wrong`), `ex_delta` (percentage points, B minus A), `ci95` ([low, high])
 * and `mcnemar_p` are a contract; the rest may grow.
 */
import { CATEGORIES, type ComparisonBucket, type RunComparison } from './compare.ts';
import { explain } from './explanations.ts';
import { maxOf } from '../util/numbers.ts';

interface CompareMeta {
  runA: string;
  runB: string;
  seed: number;
  resamples: number;
}

const finite = (v: number) => (Number.isFinite(v) ? v : null);

function bucketJson(b: ComparisonBucket) {
  return {
    questions: b.questions,
    counts: { ...b.counts },
    ex_a: finite(b.exA),
    ex_b: finite(b.exB),
    ex_delta: finite(b.exDelta),
    ci95: [finite(b.ci95[0]), finite(b.ci95[1])],
    mcnemar_p: b.mcnemarP,
  };
}

export function compareExplanations(b: ComparisonBucket): Record<string, string> {
  const f2 = (v: number) => (Number.isFinite(v) ? v.toFixed(2) : '-');
  return {
    ...Object.fromEntries(CATEGORIES.map((c) => [c, explain(c, { count: b.counts[c] })])),
    ex_delta: explain('ex_delta', { value: f2(b.exDelta) }),
    ci95: explain('ci95', { lo: f2(b.ci95[0]), hi: f2(b.ci95[1]) }),
    mcnemar_p: explain('mcnemar_p', { value: b.mcnemarP.toPrecision(3), b: b.counts.fixed, c: b.counts.broken }),
  };
}

export function compareJson(c: RunComparison, meta: CompareMeta) {
  return {
    run_a: meta.runA,
    run_b: meta.runB,
    ...bucketJson(c.overall),
    only_in_a: c.onlyInA,
    only_in_b: c.onlyInB,
    seed: meta.seed,
    resamples: meta.resamples,
    method:
      'per question: mean EX over its samples (one sample: its EX); right when above 0.5; ex_delta and ci95 in percentage points, ' +
      'paired bootstrap over questions (percentile, mulberry32(seed) per bucket); mcnemar_p: exact two-sided binomial on fixed vs broken',
    by_difficulty: Object.fromEntries(Object.entries(c.byDifficulty).map(([d, b]) => [d, bucketJson(b!)])),
    by_db: Object.fromEntries(Object.entries(c.byDb).map(([d, b]) => [d, bucketJson(b)])),
    warnings: c.warnings,
    explanations: compareExplanations(c.overall),
    per_question: c.questions.map((q) => ({
      index: q.index,
      question_id: q.questionId,
      db_id: q.dbId,
      difficulty: q.difficulty,
      n_a: q.nA,
      n_b: q.nB,
      score_a: q.scoreA,
      score_b: q.scoreB,
      category: q.category,
    })),
  };
}

const pad = (s: string, w: number) => s.padEnd(w);
const pp = (v: number) => (Number.isFinite(v) ? `${v >= 0 ? '+' : ''}${v.toFixed(2)}` : '-');
const p2 = (v: number) => (Number.isFinite(v) ? v.toFixed(2) : '-');
const pv = (v: number) => (v < 1e-4 ? v.toExponential(2) : v.toFixed(4));

function row(name: string, b: ComparisonBucket, w: number): string {
  return [
    pad(name, w),
    pad(String(b.questions), 7),
    pad(String(b.counts.fixed), 7),
    pad(String(b.counts.broken), 8),
    pad(String(b.counts.both_right), 7),
    pad(String(b.counts.both_wrong), 7),
    pad(p2(b.exA), 8),
    pad(p2(b.exB), 8),
    pad(pp(b.exDelta), 9),
    pad(`[${pp(b.ci95[0])}, ${pp(b.ci95[1])}]`, 20),
    pv(b.mcnemarP),
  ]
    .join('')
    .trimEnd();
}

export function compareTable(c: RunComparison, meta: CompareMeta): string {
  const names = [...Object.keys(c.byDifficulty), 'total', ...Object.keys(c.byDb)];
  const w = Math.max(12, maxOf(names.map((n) => n.length))) + 2;
  const head = [
    pad('', w),
    pad('count', 7),
    pad('fixed', 7),
    pad('broken', 8),
    pad('both+', 7),
    pad('both-', 7),
    pad('EX A', 8),
    pad('EX B', 8),
    pad('B - A', 9),
    pad('95% CI (points)', 20),
    'McNemar p',
  ].join('');
  const lines = [`A: ${meta.runA}`, `B: ${meta.runB}`, '', head];
  for (const [d, b] of Object.entries(c.byDifficulty)) lines.push(row(d, b!, w));
  lines.push(row('total', c.overall, w), '', head.replace(pad('', w), pad('database', w)));
  for (const [db, b] of Object.entries(c.byDb)) lines.push(row(db, b, w));
  lines.push(
    '',
    `both+ = right in both, both- = wrong in both; EX in %, B - A in percentage points; bootstrap: ${meta.resamples} resamples, seed ${meta.seed}`,
  );
  for (const w2 of c.warnings) lines.push(`warning: ${w2}`);
  lines.push('', 'what the numbers mean');
  for (const line of Object.values(compareExplanations(c.overall))) lines.push(`  - ${line}`);
  return lines.join('\n');
}
