/**
 * Comparison of two runs (checkpoints) on the same questions.
 *
 * Per question each run has a score: the mean EX over its samples, which for one sample is
 * that sample's EX (0 or 1). A question is "right" in a run when its score is above 0.5
 * (with n > 1: a strict majority of its samples are correct), which gives the categories
 * fixed / broken / both right / both wrong and McNemar's discordant pairs. The EX difference
 * and its paired bootstrap interval use the scores themselves (mean EX), in percentage
 * points, B minus A. Samples whose database is missing are left out, and so are questions
 * that only one run has; both are reported as warnings.
 */
import type { RunFile, SampleRecord } from '../run/types.ts';
import { ALL_DIFFICULTIES, type Difficulty } from '../types.ts';
import { groupSamples, type GroupedSample, type PromptGroup } from './groups.ts';
import { mcnemarExactP, pairedBootstrapCi } from './paired-tests.ts';
import type { Rng } from '../util/rng.ts';

export type Category = 'fixed' | 'broken' | 'both_right' | 'both_wrong';
export const CATEGORIES: readonly Category[] = ['fixed', 'broken', 'both_right', 'both_wrong'];

interface CompareOptions {
  /** Bootstrap resamples (default 10,000). */
  resamples?: number;
  /** A fresh generator, called once per bucket so that every bucket's interval is reproducible on its own. */
  makeRng: () => Rng;
  /** Called after each bootstrap bucket with (buckets done, buckets in all): the app's worker reports it as progress. */
  onProgress?: (done: number, total: number) => void;
}

/**
 * What `compareRuns` reads of a sample: a comparison of two large runs can hold only these
 * (the app's analysis worker keeps 9 fields of each of 1,000,000 samples, not their SQL texts).
 */
type ComparedSample = GroupedSample &
  Pick<SampleRecord, 'ex'> & { extraction: Pick<SampleRecord['extraction'], 'rule'>; completion?: unknown };

/** A run as `compareRuns` reads it: its header and its samples' compared fields. */
export interface ComparedRun {
  run: RunFile['run'];
  samples: readonly ComparedSample[];
}

/** The fields of a sample that `compareRuns` reads (a completion only as present or not). */
export function comparedFields(s: SampleRecord): ComparedSample {
  const out: ComparedSample = {
    index: s.index,
    sample: s.sample,
    questionId: s.questionId,
    dbId: s.dbId,
    difficulty: s.difficulty,
    status: s.status,
    ex: s.ex,
    extraction: { rule: s.extraction.rule },
  };
  if (s.completion !== undefined) out.completion = true;
  return out;
}

interface QuestionComparison {
  key: string;
  index: number;
  questionId: number;
  dbId: string;
  difficulty: Difficulty;
  nA: number;
  nB: number;
  scoreA: number;
  scoreB: number;
  category: Category;
}

export interface ComparisonBucket {
  questions: number;
  counts: Record<Category, number>;
  /** Mean score x 100. */
  exA: number;
  exB: number;
  /** exB - exA, percentage points. */
  exDelta: number;
  ci95: [number, number];
  mcnemarP: number;
}

export interface RunComparison {
  overall: ComparisonBucket;
  byDifficulty: Partial<Record<Difficulty, ComparisonBucket>>;
  byDb: Record<string, ComparisonBucket>;
  questions: QuestionComparison[];
  onlyInA: number;
  onlyInB: number;
  warnings: string[];
  /** Questions of either run excluded from the comparison (left out of both sides); absent means none. */
  excluded?: number;
}

const isRight = (score: number) => score > 0.5;

function categoryOf(a: number, b: number): Category {
  const ra = isRight(a);
  const rb = isRight(b);
  return ra && rb ? 'both_right' : ra ? 'broken' : rb ? 'fixed' : 'both_wrong';
}

const meanEx = (samples: readonly ComparedSample[]) => samples.reduce((s, x) => s + x.ex, 0) / samples.length;

function bucket(rows: readonly QuestionComparison[], resamples: number, rng: Rng): ComparisonBucket {
  const counts: Record<Category, number> = { fixed: 0, broken: 0, both_right: 0, both_wrong: 0 };
  for (const r of rows) counts[r.category]++;
  const q = rows.length;
  const exA = q === 0 ? NaN : (rows.reduce((s, r) => s + r.scoreA, 0) / q) * 100;
  const exB = q === 0 ? NaN : (rows.reduce((s, r) => s + r.scoreB, 0) / q) * 100;
  const [lo, hi] = pairedBootstrapCi(
    rows.map((r) => (r.scoreB - r.scoreA) * 100),
    resamples,
    rng,
  );
  return {
    questions: q,
    counts,
    exA,
    exB,
    exDelta: exB - exA,
    ci95: [lo, hi],
    mcnemarP: mcnemarExactP(counts.fixed, counts.broken),
  };
}

function ruleCounts(samples: readonly ComparedSample[]): Map<string, number> {
  const m = new Map<string, number>();
  for (const s of samples) m.set(s.extraction.rule, (m.get(s.extraction.rule) ?? 0) + 1);
  return m;
}

const showRules = (m: Map<string, number>) =>
  [...m]
    .sort()
    .map(([r, c]) => `${r} ${c}`)
    .join(', ');

/** Why the two runs may not be comparable; each line names what differs. */
function headerWarnings(a: ComparedRun, b: ComparedRun): string[] {
  const w: string[] = [];
  const ra = a.run;
  const rb = b.run;
  const dbA = ra.dataset.databases;
  const dbB = rb.dataset.databases;
  for (const [name, r] of [
    ['A', ra],
    ['B', rb],
  ] as const) {
    if (Object.keys(r.dataset.databases).length === 0) {
      w.push(
        `run ${name} (${r.name}) records no database checksums (e.g. converted from an eval --out report): cannot check that both runs used the same databases`,
      );
    }
  }
  for (const db of Object.keys(dbA)
    .filter((d) => d in dbB)
    .sort()) {
    if (dbA[db] && dbB[db] && dbA[db] !== dbB[db]) {
      w.push(
        `database ${db} differs: sha256 ${dbA[db]!.slice(0, 12)}… in A, ${dbB[db]!.slice(0, 12)}… in B; EX is only comparable on the same data`,
      );
    }
  }
  const qa = ra.dataset.questions.sha256;
  const qb = rb.dataset.questions.sha256;
  if (qa && qb && qa !== qb)
    w.push(
      `the questions files differ (${ra.dataset.questions.name} vs ${rb.dataset.questions.name}, different sha256)`,
    );
  const ga = ra.dataset.gold?.sha256;
  const gb = rb.dataset.gold?.sha256;
  if (ga && gb && ga !== gb)
    w.push(`the gold files differ (${ra.dataset.gold!.name} vs ${rb.dataset.gold!.name}, different sha256)`);
  const sa = ra.source;
  const sb = rb.source;
  if (sa.kind === 'generation' && sb.kind === 'generation' && sa.template !== sb.template) {
    w.push(`the prompt templates differ: ${JSON.stringify(sa.template)} in A, ${JSON.stringify(sb.template)} in B`);
  } else if (sa.kind !== sb.kind) {
    w.push(`run A is a ${sa.kind} run and run B a ${sb.kind} run: prompt templates cannot be compared`);
  }
  if (ra.config.fence !== rb.config.fence && [...a.samples, ...b.samples].some((s) => s.completion !== undefined)) {
    w.push(`the extraction settings differ: the ${ra.config.fence} fenced block in A, the ${rb.config.fence} in B`);
  }
  const rulesA = ruleCounts(a.samples);
  const rulesB = ruleCounts(b.samples);
  const setA = [...rulesA.keys()].sort().join();
  const setB = [...rulesB.keys()].sort().join();
  if (setA !== setB)
    w.push(`the runs' SQL came from different extraction rules: A ${showRules(rulesA)}; B ${showRules(rulesB)}`);
  if (ra.executor && rb.executor && ra.executor !== rb.executor)
    w.push(`the SQL engines differ: ${ra.executor} in A, ${rb.executor} in B`);
  return w;
}

export function compareRuns(a: ComparedRun, b: ComparedRun, options: CompareOptions): RunComparison {
  const resamples = options.resamples ?? 10_000;
  const ga = groupSamples(a.samples);
  const gb = groupSamples(b.samples);
  const byKeyB = new Map(gb.groups.map((g) => [g.key, g]));
  const keysA = new Set(ga.groups.map((g) => g.key));
  const rows: QuestionComparison[] = [];
  for (const g of ga.groups) {
    const h: PromptGroup<ComparedSample> | undefined = byKeyB.get(g.key);
    if (!h) continue;
    const scoreA = meanEx(g.samples);
    const scoreB = meanEx(h.samples);
    rows.push({
      key: g.key,
      index: g.index,
      questionId: g.questionId,
      dbId: g.dbId,
      difficulty: g.difficulty,
      nA: g.samples.length,
      nB: h.samples.length,
      scoreA,
      scoreB,
      category: categoryOf(scoreA, scoreB),
    });
  }
  const onlyInA = ga.groups.length - rows.length;
  const onlyInB = gb.groups.filter((g) => !keysA.has(g.key)).length;

  const warnings = headerWarnings(a, b);
  if (onlyInA > 0 || onlyInB > 0) {
    warnings.push(
      `the question sets differ: ${onlyInA} question(s) only in A, ${onlyInB} only in B (missing databases included); ` +
        `the comparison uses the ${rows.length} questions both runs scored`,
    );
  }
  if (ga.missingDb > 0 || gb.missingDb > 0) {
    warnings.push(`samples left out because their database is missing: ${ga.missingDb} in A, ${gb.missingDb} in B`);
  }
  const nSet = (r: readonly QuestionComparison[], f: (q: QuestionComparison) => number) =>
    [...new Set(r.map(f))].sort((x, y) => x - y);
  const nA = nSet(rows, (r) => r.nA);
  const nB = nSet(rows, (r) => r.nB);
  if (nA.some((n) => n > 1) || nB.some((n) => n > 1)) {
    warnings.push(
      `samples per question: ${nA.join('/')} in A, ${nB.join('/')} in B; a question's score is its mean EX over samples ` +
        'and it counts as right when more than half of its samples are correct',
    );
  }

  const difficulties = ALL_DIFFICULTIES.filter((d) => rows.some((r) => r.difficulty === d));
  const dbs = [...new Set(rows.map((r) => r.dbId))].sort();
  const total = difficulties.length + dbs.length + 1;
  let done = 0;
  const step = <T>(v: T): T => {
    options.onProgress?.(++done, total);
    return v;
  };
  /** The bucket of the rows `keep` selects, with the next RNG. */
  const bucketOf = (keep: (r: (typeof rows)[number]) => boolean) =>
    step(bucket(rows.filter(keep), resamples, options.makeRng()));
  const byDifficulty: RunComparison['byDifficulty'] = {};
  for (const d of difficulties) byDifficulty[d] = bucketOf((r) => r.difficulty === d);
  const byDb: Record<string, ComparisonBucket> = {};
  for (const db of dbs) byDb[db] = bucketOf((r) => r.dbId === db);
  return {
    overall: step(bucket(rows, resamples, options.makeRng())),
    byDifficulty,
    byDb,
    questions: rows,
    onlyInA,
    onlyInB,
    warnings,
  };
}
