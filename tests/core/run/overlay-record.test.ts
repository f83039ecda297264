/**
 * The corrected-gold overlay as stored with a run: the RL and Compare computations (the analysis
 * worker's body over a plain store port) against the corrected gold when chosen, and the exports'
 * corrected columns (run file round trip, CSV read back, Parquet read by DuckDB).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { describe, expect, it } from 'vitest';
import { writeParquetFile } from '../../../src/adapters/parquet/node-sink.ts';
import { compareRuns } from '../../../src/core/rl/compare.ts';
import { mulberry32 } from '../../../src/core/util/rng.ts';
import { computeRunStats } from '../../../src/core/rl/run-stats.ts';
import { runFileJson, toCsv, toRunFile } from '../../../src/core/runfile/export.ts';
import { withStoredExtras, type GoldOverlayRecord } from '../../../src/core/run/overlay-record.ts';
import { parseRunFile } from '../../../src/core/runfile/run-file.ts';
import { SAMPLES_TABLE, runTableMetadata, sampleRows } from '../../../src/core/views/tables.ts';
import type { RunFile, SampleRecord } from '../../../src/core/run/types.ts';
import type { VersionCheckRecord } from '../../../src/core/run/version-effects.ts';
import { createAnalysisEngine, type StoredRuns } from '../../../workers/analysis-engine.ts';
import { syntheticRunFile, syntheticSamples } from '../../robustness/synthetic-run.ts';

const a = syntheticRunFile(syntheticSamples({ questions: 30, samples: 4, seed: 5 }), 'a');
const b = syntheticRunFile(syntheticSamples({ questions: 30, samples: 4, seed: 6 }), 'b');

/** An overlay that flips every sample of the first 10 questions (a corrected gold each). */
function overlayOf(file: RunFile): GoldOverlayRecord {
  const items = file.samples
    .filter((s) => s.index < 10 && s.status !== 'missing-db')
    .map((s) => ({
      index: s.index,
      sample: s.sample,
      questionId: s.questionId,
      goldSql: `SELECT 'corrected ${s.index}'`,
      ex: (1 - s.ex) as 0 | 1,
      softF1: s.softF1,
      status: s.status,
      error: s.error,
      goldRowCount: 1,
      goldColumns: ['c'],
      goldRows: [[1]],
    }));
  return {
    runId: file.run.id,
    name: 'fix.json',
    text: '[]',
    attachedAt: 'now',
    covered: 10,
    goldsChanged: items.length,
    official: { count: 30, ex: 0, softF1: null },
    corrected: { count: 30, ex: 0, softF1: null },
    items,
  };
}
/** The same samples scored by hand against the corrected gold (the reference). */
function flipped(samples: readonly SampleRecord[]): SampleRecord[] {
  return samples.map((s) =>
    s.index < 10 && s.status !== 'missing-db' ? { ...s, ex: (1 - s.ex) as 0 | 1, reward: 1 - s.ex } : s,
  );
}

function storeOf(files: RunFile[]): () => Promise<StoredRuns> {
  const byId = new Map(files.map((f) => [f.run.id, f]));
  return async () => ({
    header: async (id) => byId.get(id)!.run,
    samples: async (id, _onStep, keep) => byId.get(id)!.samples.map(keep),
    overlay: async (id) => overlayOf(byId.get(id)!),
    series: async () => {
      throw new Error('no training run in this test');
    },
    scores: async () => [],
    questionSamples: async (id, index) => byId.get(id)!.samples.filter((s) => s.index === index),
    questions: async () => undefined,
    close: () => undefined,
  });
}

describe('corrected-gold overlay stored with a run', () => {
  const engine = createAnalysisEngine(storeOf([a, b]));

  it('the RL statistics use the corrected gold when chosen, the official one otherwise', async () => {
    const official = await engine.runStats({ dbName: 'x', runId: a.run.id, seed: 0 });
    const corrected = await engine.runStats({ dbName: 'x', runId: a.run.id, seed: 0, gold: 'corrected' });
    expect(official.ok && corrected.ok).toBe(true);
    if (!official.ok || !corrected.ok) return;
    expect(official.value.overall).toEqual(computeRunStats(a.samples, { rng: mulberry32(0) }).overall);
    expect(corrected.value.overall).toEqual(computeRunStats(flipped(a.samples), { rng: mulberry32(0) }).overall);
    expect(corrected.value.overall).not.toEqual(official.value.overall);
  });

  it("Compare uses each run's corrected gold when chosen", async () => {
    const out = await engine.compare({
      dbName: 'x',
      runIdA: a.run.id,
      runIdB: b.run.id,
      resamples: 500,
      seed: 0,
      gold: 'corrected',
    });
    expect(out.ok).toBe(true);
    if (!out.ok) return;
    const ref = compareRuns(
      { ...a, samples: flipped(a.samples) },
      { ...b, samples: flipped(b.samples) },
      { resamples: 500, makeRng: () => mulberry32(0) },
    );
    expect(out.value.overall).toEqual(ref.overall);
  });

  it('exports carry the corrected verdicts and the version checks: run file, CSV and Parquet', async () => {
    const overlay = overlayOf(a);
    const check: VersionCheckRecord = {
      runId: a.run.id,
      mainVersion: '3.54.1',
      otherVersion: '3.39.3',
      measuredAt: 'now',
      checked: 1,
      items: [
        {
          index: 3,
          sample: 0,
          questionId: a.samples.find((s) => s.index === 3)!.questionId,
          sqliteVersion: '3.39.3',
          ex: 0,
          softF1: 0,
          status: 'error',
          error: 'no such function: concat',
          differs: true,
        },
      ],
    };
    const extras = withStoredExtras(a.run, a.samples, overlay, check);
    const file = toRunFile(extras.run, extras.samples);
    expect(file.run.goldOverlay).toMatchObject({ name: 'fix.json', goldsChanged: overlay.items.length });
    expect(file.run.versionCheck).toEqual({ sqliteVersion: '3.39.3', checked: 1, differing: 1, planner: 0 });
    const back = parseRunFile(runFileJson(file), 'run.json');
    expect(back.samples.map((s) => s.corrected)).toEqual(file.samples.map((s) => s.corrected));
    expect(back.samples.find((s) => s.index === 3 && s.sample === 0)!.versionCheck).toMatchObject({
      ex: 0,
      differs: true,
    });

    const scored = flipped(a.samples).filter((s) => s.status !== 'missing-db');
    const wantMean = scored.reduce((x, s) => x + s.ex, 0) / scored.length;
    // CSV: mean of ex_corrected over the scored rows is the corrected EX.
    const [head, ...rows] = toCsv(file.samples).trim().split('\r\n');
    const cols = head!.split(',');
    const exAt = cols.indexOf('ex_corrected');
    const values = rows
      .map((r) => r.split(',')[exAt])
      .filter((v) => v !== '')
      .map(Number);
    expect(values).toHaveLength(scored.length);
    expect(values.reduce((x, v) => x + v, 0) / values.length).toBeCloseTo(wantMean, 12);
    // Parquet, read by DuckDB.
    const out = path.join(mkdtempSync(path.join(tmpdir(), 'wb-overlay-')), 'run.parquet');
    await writeParquetFile(out, SAMPLES_TABLE, sampleRows(file.samples, undefined), {
      metadata: runTableMetadata(SAMPLES_TABLE, file.run),
    });
    const db = await (await DuckDBInstance.create(':memory:')).connect();
    const r = await db.runAndReadAll(
      `SELECT avg(ex_corrected) AS m, count(ex_corrected) AS n, count(*) FILTER (WHERE version_check_differs) AS d FROM '${out}'`,
    );
    const [row] = r.getRowObjects();
    expect(Number(row!.n)).toBe(scored.length);
    expect(Number(row!.m)).toBeCloseTo(wantMean, 12);
    expect(Number(row!.d)).toBe(1);
  });
});
