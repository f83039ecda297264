/**
 * The benchmark's workload, read from ../shared/data exactly as the CLI reads it: every BIRD
 * mini-dev prediction file (13) over the questions whose databases are present, and Spider dev
 * gold used as its own prediction over the Spider databases that are present.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DbSource } from '../src/app/ports.ts';
import { folderDbSource } from '../src/adapters/node/sql-worker-host.ts';
import { parseGoldSql } from '../src/core/formats/gold.ts';
import { planReplay } from '../src/core/run/replay.ts';
import { parseQuestions } from '../src/core/formats/questions.ts';
import type { EvalItem } from '../src/core/types.ts';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const SHARED = path.resolve(REPO_ROOT, '..', 'shared', 'data');
export const BIRD_DB_ROOT = path.join(SHARED, 'bird', 'databases');
export const SPIDER_DB_ROOT = path.join(SHARED, 'spider');

function need(p: string): string {
  if (!existsSync(p))
    throw new Error(`benchmark data missing: ${p} (the benchmark reads ../shared/data beside the repository)`);
  return p;
}

const text = (p: string) => readFileSync(need(p), 'utf8');
const dbFile = (root: string, dbId: string) => path.join(root, dbId, `${dbId}.sqlite`);

export interface Workload {
  items: EvalItem[];
  /** The predictions file of each item (same order as items), for reports. */
  sources: string[];
  /** Where each item's database file is (BIRD or Spider root). */
  dbPath: Map<string, string>;
  birdFiles: string[];
  birdItems: number;
  spiderItems: number;
}

export interface WorkloadOptions {
  /** Keep only the first N BIRD prediction files (sorted by path); all when undefined. */
  birdFiles?: number;
  /** Keep every k-th Spider item (1 = all). */
  spiderStride?: number;
}

export function birdPredictionFiles(): string[] {
  const root = need(path.join(SHARED, 'bird', 'predictions'));
  const out: string[] = [];
  for (const dir of readdirSync(root).sort()) {
    const d = path.join(root, dir);
    for (const f of readdirSync(d).sort()) if (f.endsWith('.json')) out.push(path.join(d, f));
  }
  return out;
}

export function loadWorkload(opts: WorkloadOptions = {}): Workload {
  const dbPath = new Map<string, string>();
  const present = (root: string, dbId: string): boolean => {
    if (dbPath.has(dbId)) return dbPath.get(dbId) === dbFile(root, dbId);
    if (!existsSync(dbFile(root, dbId))) return false;
    dbPath.set(dbId, dbFile(root, dbId));
    return true;
  };
  const items: EvalItem[] = [];
  const sources: string[] = [];

  // BIRD mini-dev: 13 prediction files, each paired with the mini-dev gold and questions.
  const goldPath = path.join(SHARED, 'bird', 'minidev', 'mini_dev_sqlite_gold.sql');
  const questionsPath = path.join(SHARED, 'bird', 'minidev', 'mini_dev_sqlite.json');
  const gold = parseGoldSql(text(goldPath), path.basename(goldPath));
  const questions = parseQuestions(text(questionsPath), path.basename(questionsPath));
  let birdFiles = birdPredictionFiles();
  if (birdFiles.length !== 13) throw new Error(`expected 13 BIRD prediction files, found ${birdFiles.length}`);
  if (opts.birdFiles !== undefined) birdFiles = birdFiles.slice(0, opts.birdFiles);
  for (const file of birdFiles) {
    const { items: paired } = planReplay({
      predictions: { name: path.basename(file), text: text(file) },
      gold,
      questions,
    });
    for (const it of paired) {
      if (!present(BIRD_DB_ROOT, it.dbId)) continue;
      items.push(it);
      sources.push(path.basename(file));
    }
  }
  const birdItems = items.length;

  // Spider dev: gold as its own prediction.
  const spiderGold = path.join(SPIDER_DB_ROOT, 'dev_gold.sql');
  const sGold = parseGoldSql(text(spiderGold), 'dev_gold.sql');
  const sQuestions = parseQuestions(text(path.join(SPIDER_DB_ROOT, 'dev.json')), 'dev.json');
  const stride = opts.spiderStride ?? 1;
  let k = 0;
  for (const it of planReplay({
    predictions: { name: 'dev_gold.sql', text: text(spiderGold) },
    gold: sGold,
    questions: sQuestions,
  }).items) {
    if (!present(SPIDER_DB_ROOT, it.dbId)) continue;
    if (k++ % stride !== 0) continue;
    items.push(it);
    sources.push('spider/dev_gold.sql');
  }
  return { items, sources, dbPath, birdFiles, birdItems, spiderItems: items.length - birdItems };
}

/** The pool's database source for this workload: BIRD and Spider ids do not collide. */
export function workloadDbSource(w: Pick<Workload, 'dbPath'>): DbSource {
  const sources = new Map<string, DbSource>();
  const sourceOf = (dbId: string) => {
    const file = w.dbPath.get(dbId);
    if (!file) return null;
    const root = path.dirname(path.dirname(file));
    let s = sources.get(root);
    if (!s) sources.set(root, (s = folderDbSource(root)));
    return s;
  };
  return {
    has: async (dbId) => (await sourceOf(dbId)?.has(dbId)) ?? false,
    load: async (dbId) => {
      const s = sourceOf(dbId);
      if (!s) throw new Error(`no database ${dbId}`);
      return s.load(dbId);
    },
    describe: (dbId) => w.dbPath.get(dbId) ?? dbId,
  };
}
