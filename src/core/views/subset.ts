/**
 * Which questions of a dataset a run evaluates: filters by database, difficulty and question
 * id, then an optional seeded random sample. Pure, so the same choice gives the same indices
 * in the browser, in Node and in a test. Indices are gold positions, as `RunHeader.subset`.
 */
import { mulberry32, randomIndex } from '../util/rng.ts';
import { WorkbenchError } from '../errors.ts';
import type { Difficulty, Question } from '../types.ts';

interface SubsetSpec {
  /** Databases to keep; empty keeps every database. */
  dbIds: readonly string[];
  /** Difficulties to keep; empty keeps every difficulty. */
  difficulties: readonly Difficulty[];
  /** Question ids to keep (`questionId`, not positions); empty keeps every question. */
  questionIds: readonly number[];
  /** A random sample of `n` of the questions left, drawn with `seed`; null keeps them all. */
  sample: { n: number; seed: number } | null;
}

export const ALL_QUESTIONS: SubsetSpec = { dbIds: [], difficulties: [], questionIds: [], sample: null };

export interface Subset {
  /** Gold positions in ascending order. */
  indices: number[];
  /** What was chosen, in words, for the run's header. */
  description: string;
}

/**
 * A list of ids and ranges as people type them: `3, 7, 10-20` (spaces, commas or semicolons
 * between items). Throws BAD_OPTION naming the first item that is not an id or a range.
 */
export function parseIdList(text: string): number[] {
  const out = new Set<number>();
  for (const part of text
    .replace(/\s*[-–]\s*/g, '-')
    .split(/[\s,;]+/)
    .filter(Boolean)) {
    const range = /^(\d+)-(\d+)$/.exec(part);
    if (range) {
      const a = Number(range[1]);
      const b = Number(range[2]);
      if (b < a) throw new WorkbenchError('BAD_OPTION', `the range "${part}" ends before it starts`, 'question ids');
      if (b - a > 1_000_000) throw new WorkbenchError('BAD_OPTION', `the range "${part}" is too long`, 'question ids');
      for (let i = a; i <= b; i++) out.add(i);
    } else if (/^\d+$/.test(part)) {
      out.add(Number(part));
    } else {
      throw new WorkbenchError('BAD_OPTION', `"${part}" is not a question id or a range like 10-20`, 'question ids');
    }
  }
  return [...out].sort((a, b) => a - b);
}

function describe(spec: SubsetSpec, kept: number, total: number): string {
  const parts: string[] = [];
  if (spec.dbIds.length > 0) parts.push(`databases ${spec.dbIds.join(', ')}`);
  if (spec.difficulties.length > 0) parts.push(`difficulty ${spec.difficulties.join(', ')}`);
  if (spec.questionIds.length > 0) parts.push(`${spec.questionIds.length} chosen question id(s)`);
  if (spec.sample) parts.push(`random sample of ${spec.sample.n} (seed ${spec.sample.seed})`);
  return parts.length === 0 ? `all ${total} questions` : `${kept} of ${total} questions: ${parts.join('; ')}`;
}

/** Partial Fisher-Yates: the first `n` of a seeded shuffle, returned in ascending order. */
function sampleOf(indices: number[], n: number, seed: number): number[] {
  const a = indices.slice();
  const rng = mulberry32(seed);
  const k = Math.min(n, a.length);
  for (let i = 0; i < k; i++) {
    const j = i + randomIndex(rng, a.length - i);
    [a[i], a[j]] = [a[j]!, a[i]!];
  }
  return a.slice(0, k).sort((x, y) => x - y);
}

export function selectSubset(questions: readonly Question[], spec: SubsetSpec): Subset {
  if (spec.sample && (!Number.isSafeInteger(spec.sample.n) || spec.sample.n < 1)) {
    throw new WorkbenchError(
      'BAD_OPTION',
      `the sample size must be a whole number of at least 1, got ${spec.sample.n}`,
      'sample',
    );
  }
  if (spec.sample && !Number.isSafeInteger(spec.sample.seed)) {
    throw new WorkbenchError('BAD_OPTION', `the seed must be a whole number, got ${spec.sample.seed}`, 'seed');
  }
  const dbs = new Set(spec.dbIds);
  const diffs = new Set(spec.difficulties);
  const ids = new Set(spec.questionIds);
  let indices: number[] = [];
  questions.forEach((q, i) => {
    if (dbs.size > 0 && !dbs.has(q.dbId)) return;
    if (diffs.size > 0 && !diffs.has(q.difficulty)) return;
    if (ids.size > 0 && !ids.has(q.questionId)) return;
    indices.push(i);
  });
  if (spec.sample) indices = sampleOf(indices, spec.sample.n, spec.sample.seed);
  return { indices, description: describe(spec, indices.length, questions.length) };
}
