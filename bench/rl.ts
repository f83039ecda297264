/**
 * The RL-shaped workload, made from real predictions only: for each mini-dev
 * question whose database is here, N samples drawn with a fixed seed from the 13 real
 * predictions for that question, with weights proportional to 1/rank (a converged policy repeats
 * its favourite answers), the ranks a seeded shuffle per question. And the statistics keys:
 * `stats` and the comparison bootstrap on a synthetic run, per 100,000 samples.
 */
import path from 'node:path';
import { readFileSync } from 'node:fs';
import { parseGoldSql } from '../src/core/formats/gold.ts';
import { parseQuestions } from '../src/core/formats/questions.ts';
import { compareRuns } from '../src/core/rl/compare.ts';
import { mulberry32 } from '../src/core/util/rng.ts';
import { computeRunStats } from '../src/core/rl/run-stats.ts';
import { planReplay } from '../src/core/run/replay.ts';
import {
  DEFAULT_RUN_CONFIG,
  RUN_FILE_FORMAT,
  RUN_FILE_VERSION,
  type RunFile,
  type SampleRecord,
} from '../src/core/run/types.ts';
import type { EvalItem } from '../src/core/types.ts';
import { BIRD_DB_ROOT, SHARED, birdPredictionFiles } from './items.ts';
import { benchSample } from './synthetic-series.ts';

export interface RlWorkload {
  items: EvalItem[];
  dbPath: Map<string, string>;
  questions: number;
  perQuestion: number;
}

export function rlWorkload(opts: { questions?: number; perQuestion: number; seed?: number }): RlWorkload {
  const text = (p: string) => readFileSync(p, 'utf8');
  const gold = parseGoldSql(text(path.join(SHARED, 'bird', 'minidev', 'mini_dev_sqlite_gold.sql')), 'gold.sql');
  const questions = parseQuestions(text(path.join(SHARED, 'bird', 'minidev', 'mini_dev_sqlite.json')), 'q.json');
  const dbPath = new Map<string, string>();
  for (const db of ['superhero', 'student_club', 'toxicology'])
    dbPath.set(db, path.join(BIRD_DB_ROOT, db, `${db}.sqlite`));
  const candidates = new Map<number, EvalItem[]>();
  for (const f of birdPredictionFiles()) {
    for (const it of planReplay({ predictions: { name: path.basename(f), text: text(f) }, gold, questions }).items) {
      if (!dbPath.has(it.dbId)) continue;
      (candidates.get(it.index) ?? candidates.set(it.index, []).get(it.index)!).push(it);
    }
  }
  const rng = mulberry32(opts.seed ?? 2026);
  const indices = [...candidates.keys()].sort((a, b) => a - b).slice(0, opts.questions ?? Infinity);
  const items: EvalItem[] = [];
  for (const index of indices) {
    const pool = [...candidates.get(index)!];
    for (let i = pool.length - 1; i > 0; i--) {
      const j = Math.floor(rng.next() * (i + 1));
      [pool[i], pool[j]] = [pool[j]!, pool[i]!];
    }
    const weights = pool.map((_, r) => 1 / (r + 1));
    const total = weights.reduce((a, w) => a + w, 0);
    for (let sample = 0; sample < opts.perQuestion; sample++) {
      let u = rng.next() * total;
      let pick = 0;
      while (pick < pool.length - 1 && u >= weights[pick]!) u -= weights[pick++]!;
      items.push({ ...pool[pick]!, sample });
    }
  }
  return { items, dbPath, questions: indices.length, perQuestion: opts.perQuestion };
}

/** A run file of `questions` x `samples` synthetic samples (a few distinct results per question). */
function syntheticRun(questions: number, samples: number, seed: number): RunFile {
  const rng = mulberry32(seed);
  const out: SampleRecord[] = [];
  for (let index = 0; index < questions; index++) {
    const p = rng.next();
    for (let sample = 0; sample < samples; sample++) {
      const ex: 0 | 1 = rng.next() < p ? 1 : 0;
      out.push(benchSample(index, sample, ex, ex ? 'R' : `W${Math.floor(rng.next() * 3)}`));
    }
  }
  const now = new Date(0).toISOString();
  return {
    format: RUN_FILE_FORMAT,
    version: RUN_FILE_VERSION,
    run: {
      id: `synthetic-${seed}`,
      name: 'synthetic',
      createdAt: now,
      updatedAt: now,
      status: 'done',
      source: { kind: 'replay', predictions: { name: 's.jsonl', sha256: '0', bytes: 0 } },
      dataset: { id: 's', name: 's', questions: { name: 'q', sha256: '0', bytes: 0 }, gold: null, databases: {} },
      subset: { description: 'all', indices: Array.from({ length: questions }, (_, i) => i) },
      config: DEFAULT_RUN_CONFIG,
      samplesPerQuestion: samples,
      executor: 'synthetic',
    },
    samples: out,
  };
}

/** `stats_ms_per_100k_samples` and `compare_ms_per_100k_samples` (bootstrap, 10,000 resamples). */
export function measureStats(quick: boolean): { statsMsPer100k: number; compareMsPer100k: number; samples: number } {
  const questions = quick ? 200 : 2_000;
  const perQuestion = 50;
  const a = syntheticRun(questions, perQuestion, 1);
  const b = syntheticRun(questions, perQuestion, 2);
  const n = questions * perQuestion;
  let t0 = performance.now();
  computeRunStats(a.samples, { rng: mulberry32(0), ks: [1, 2, 4, 8, 16, 32, 50] });
  const statsMs = performance.now() - t0;
  t0 = performance.now();
  compareRuns(a, b, { resamples: 10_000, makeRng: () => mulberry32(0) });
  const compareMs = performance.now() - t0;
  return { statsMsPer100k: (statsMs * 100_000) / n, compareMsPer100k: (compareMs * 100_000) / n, samples: n };
}
