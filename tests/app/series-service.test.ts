/**
 * The app's series service over memory and Node's SQL pool (tests/helpers/memory-app-ports.ts):
 * three real checkpoints as verl dumps imported as a series give the runs the CLI's `series`
 * gives (sample by sample, same trainer scores), a step added after a "reload" (a new service
 * over the same storage) executes only SQL the series has not seen, runs grouped by hand make a
 * series, and a followed folder takes a step file written while it is followed.
 */
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createSeriesService, type DumpFile } from '../../src/app/series-service.ts';
import type { FolderPort } from '../../src/app/ports.ts';
import { parseSeriesFile } from '../../src/core/series/file.ts';
import { DEFAULT_RUN_CONFIG, type RunConfig, type SampleRecord } from '../../src/core/run/types.ts';
import { runCli } from '../helpers/cli.ts';
import { fileDataset, memoryAppPorts, memorySeriesPorts } from '../helpers/memory-app-ports.ts';
import {
  DB_ROOT,
  inspectLogJson,
  MINIDEV_ARGS,
  MINIDEV_GOLD,
  MINIDEV_QUESTIONS,
  questions,
  stepOf,
  verlLines,
  writeVerlDumps,
} from '../helpers/series-dumps.ts';
import { predictionsOf, trlRows, writeTrlCompletions } from '../helpers/trainer-dumps.ts';

// The CLI's defaults (EX and Soft-F1, the official timeout, the last fence), as the app's form starts.
const config: RunConfig = { ...DEFAULT_RUN_CONFIG, metrics: ['ex', 'soft-f1'], vesIterations: 0 };
const dumpFiles = (dir: string): DumpFile[] =>
  writeVerlDumps(dir, [0, 1, 2], ['superhero']).map((f) => ({
    name: path.basename(f),
    file: new Blob([readFileSync(f)]),
    lastModified: statSync(f).mtimeMs,
  }));

/** A folder on disk as the service follows one (what a FileSystemDirectoryHandle gives in the browser). */
function diskFolder(dir: string): FolderPort {
  return {
    name: path.basename(dir),
    async list() {
      const names = (await readdir(dir)).sort();
      return Promise.all(
        names.map(async (name) => {
          const st = await stat(path.join(dir, name));
          return { name, size: st.size, lastModified: st.mtimeMs };
        }),
      );
    },
    read: async (name) => new Blob([await readFile(path.join(dir, name))]),
  };
}

describe('the series service (memory ports, real SQL)', () => {
  it('imports verl dumps as the CLI reads them: the same samples and trainer scores per step', async () => {
    const dataset = await fileDataset({ questions: MINIDEV_QUESTIONS, gold: MINIDEV_GOLD, dbRoot: DB_ROOT });
    const app = memoryAppPorts(dataset, DB_ROOT);
    const ports = memorySeriesPorts(app);
    const service = createSeriesService(ports);
    const dir = mkdtempSync(path.join(tmpdir(), 'wb-series-app-'));
    const notes: string[] = [];
    const progress: number[] = [];
    const series = await service.importDumps(
      { name: 'run', datasetId: dataset.id, config, stepPattern: null, format: null, files: dumpFiles(dir) },
      { onNote: (n) => notes.push(n), onProgress: (p) => p.phase === 'evaluating' && progress.push(p.done) },
    );
    expect(series.steps.map((s) => s.step)).toEqual([100, 200, 300]);
    // verl dumps carry no time: the files' modification time, marked so.
    expect(series.steps.map((s) => [s.wallTime, s.wallTimeSource])).toEqual(
      [100, 200, 300].map((n) => [
        new Date(Math.floor(statSync(path.join(dir, `${n}.jsonl`)).mtimeMs)).toISOString(),
        'file',
      ]),
    );
    expect(notes).toContain('100.jsonl: step 100 (from the rows\' "step")');
    expect(progress.at(-1)).toBe(52);
    // Each step keeps its notes (the mapping report, how its file's steps were found) with it in the store.
    for (const s of series.steps) {
      const kept = (await service.get(series.id)).steps.find((x) => x.step === s.step)!.notes!;
      expect(kept).toContain(`${s.step}.jsonl: step ${s.step} (from the rows' "step")`);
      expect(kept.some((n) => n.startsWith(`${s.step}.jsonl (verl): step ${s.step}: 52 rows, mapped 52`))).toBe(true);
      // Every row was paired: no pairing sentence.
      expect(kept.some((n) => / rows paired; /.test(n))).toBe(false);
    }
    // The trainer's scores of a step's run, for its item view and exports; none for a run that is no step.
    expect(await service.trainerScores(series.steps[1]!.runId)).toEqual({
      seriesId: series.id,
      step: 200,
      scores: verlLines(1, ['superhero']).map((l) => JSON.parse(l).score),
    });
    expect(await service.trainerScores('no-such-run')).toBeNull();

    const out = path.join(dir, 'cli.series.json');
    const cli = await runCli(['series', '--completions', dir, ...MINIDEV_ARGS, '--series-out', out]);
    expect(cli.code, cli.stderr).toBe(0);
    const file = parseSeriesFile(readFileSync(out, 'utf8'), out);
    const volatile = ({ elapsedMs: _e, goldReused: _g, ...rest }: SampleRecord) => rest;
    for (const [i, s] of series.steps.entries()) {
      const ours = app.samples(s.runId).map(volatile);
      const theirs = [...file.steps[i]!.run.samples]
        .sort((a, b) => a.index - b.index || a.sample - b.sample)
        .map(volatile);
      expect(ours).toEqual(theirs);
      expect(ports.scores.get(`${series.id}/${s.step}`)).toEqual(
        verlLines(i, ['superhero']).map((l) => JSON.parse(l).score),
      );
      expect(s.executions!.executed + s.executions!.reused).toBe(52);
    }

    // A reload: a new service over the same storage remembers the stored steps' verdicts.
    const again = createSeriesService(ports);
    const fourth = writeVerlDumps(path.join(dir, 'more'), [0], ['superhero'])[0]!;
    const text = readFileSync(fourth, 'utf8')
      .replaceAll('"step": 100', '"step": 400')
      .replaceAll('"step":100', '"step":400');
    writeFileSync(fourth, text);
    const grown = await again.addDumps(series.id, [{ name: '400.jsonl', file: new Blob([text]), lastModified: null }]);
    const s400 = grown.steps.find((s) => s.step === 400)!;
    // Step 400 holds step 100's answers: every cleanly executed one comes from the series.
    const clean = app
      .samples(series.steps[0]!.runId)
      .filter((x) => x.status === 'ok' || /^(prediction|gold): /.test(x.error ?? ''));
    expect(s400.executions!.reused).toBeGreaterThanOrEqual(clean.length);
    expect(app.samples(s400.runId).map((x) => x.ex)).toEqual(app.samples(series.steps[0]!.runId).map((x) => x.ex));
    await expect(
      again.addDumps(series.id, [{ name: 'again.jsonl', file: new Blob([text]), lastModified: null }]),
    ).rejects.toThrow(/step 400 is already in training run "run" \(from 400\.jsonl\)/);

    // Runs grouped by hand: two of the stored runs, steps given.
    const grouped = await service.groupRuns({
      name: 'by hand',
      steps: [
        { runId: series.steps[2]!.runId, step: 7 },
        { runId: series.steps[0]!.runId, step: 3 },
      ],
    });
    expect(grouped.steps.map((s) => [s.step, s.runId, s.owned])).toEqual([
      [3, series.steps[0]!.runId, false],
      [7, series.steps[2]!.runId, false],
    ]);
    expect((await service.ofRun(series.steps[0]!.runId)).map((s) => s.name).sort()).toEqual(['by hand', 'run']);
    await expect(
      service.groupRuns({
        name: 'x',
        steps: [
          { runId: series.steps[0]!.runId, step: 1 },
          { runId: series.steps[1]!.runId, step: 1 },
        ],
      }),
    ).rejects.toThrow(/two runs are given step 1/);
    // Deleting the hand-made series keeps the runs; deleting the imported one deletes its own.
    await service.delete(grouped.id);
    expect(app.samples(series.steps[0]!.runId)).toHaveLength(52);
    await service.delete(series.id);
    expect(app.samples(series.steps[0]!.runId)).toHaveLength(0);
  }, 900_000);

  it("takes each step's wall time from the dump: an Inspect log's stats.completed_at, the date of an lm-eval results file chosen with its samples", async () => {
    const dataset = await fileDataset({ questions: MINIDEV_QUESTIONS, gold: MINIDEV_GOLD, dbRoot: DB_ROOT });
    const service = createSeriesService(memorySeriesPorts(memoryAppPorts(dataset, DB_ROOT)));
    const old = Date.parse('2020-06-01T00:00:00Z');
    const results = { results: { bird: {} }, configs: { bird: {} }, date: 1735689600.25 };
    const line = JSON.stringify({
      doc_id: 0,
      doc: { question_id: questions.find((q) => q.db_id === 'superhero')!.question_id },
      resps: [['SELECT 1']],
      filter: 'none',
    });
    const files: DumpFile[] = [
      {
        name: 'checkpoint-40/log.json',
        file: new Blob([
          inspectLogJson(3, {
            created: '2025-03-01T09:00:00Z',
            startedAt: '2025-03-01T09:00:01Z',
            completedAt: '2025-03-01T10:30:00+02:00',
          }),
        ]),
        lastModified: old,
      },
      { name: 'checkpoint-80/samples_bird_2025-01-01T00-00-00.jsonl', file: new Blob([line]), lastModified: old },
      {
        name: 'checkpoint-80/results_2025-01-01T00-00-00.json',
        file: new Blob([JSON.stringify(results)]),
        lastModified: old,
      },
      { name: 'checkpoint-90/samples_bird_2025-01-01T00-00-00.jsonl', file: new Blob([line]), lastModified: old },
    ];
    const series = await service.importDumps({
      name: 'logs',
      datasetId: dataset.id,
      config,
      stepPattern: null,
      format: null,
      files,
    });
    expect(series.steps.map((s) => [s.step, s.wallTime, s.wallTimeSource])).toEqual([
      [40, '2025-03-01T08:30:00.000Z', 'dump'],
      [80, '2025-01-01T00:00:00.250Z', 'dump'],
      [90, '2020-06-01T00:00:00.000Z', 'file'],
    ]);
  }, 300_000);

  it('follows a folder: a step file written while it is followed is evaluated once its size is stable', async () => {
    const dataset = await fileDataset({ questions: MINIDEV_QUESTIONS, gold: MINIDEV_GOLD, dbRoot: DB_ROOT });
    const ports = memorySeriesPorts(memoryAppPorts(dataset, DB_ROOT));
    const service = createSeriesService(ports);
    const dir = mkdtempSync(path.join(tmpdir(), 'wb-series-follow-'));
    writeVerlDumps(dir, [0], ['superhero']);
    const series = await service.createFollowed({ name: 'live', datasetId: dataset.id, config, stepPattern: null }, {
      name: path.basename(dir),
    } as FileSystemDirectoryHandle);
    const stop = new AbortController();
    const notes: string[] = [];
    const following = service.follow(series.id, diskFolder(dir), {
      pollMs: 50,
      signal: stop.signal,
      onNote: (n) => notes.push(n),
    });
    const steps = async () => (await service.get(series.id)).steps.map((s) => s.step);
    const until = async (want: number[]) => {
      for (let i = 0; i < 1200 && JSON.stringify(await steps()) !== JSON.stringify(want); i++)
        await new Promise((r) => setTimeout(r, 100));
      expect(await steps()).toEqual(want);
    };
    await until([100]);
    writeFileSync(path.join(dir, 'notes.txt'), 'not a dump');
    writeFileSync(path.join(dir, 'broken.jsonl'), '{"input": 1}\n');
    writeVerlDumps(dir, [1], ['superhero']);
    await until([100, 200]);
    const skipped = () => notes.some((n) => n.startsWith('broken.jsonl: ') && n.includes('skipped'));
    for (let i = 0; i < 600 && !skipped(); i++) await new Promise((r) => setTimeout(r, 100));
    stop.abort();
    await following;
    expect(skipped()).toBe(true);
    expect((await ports.series.folder(series.id))!.taken.sort()).toEqual(['100.jsonl', '200.jsonl', 'broken.jsonl']);
    expect(stepOf(1)).toBe(200);
  }, 600_000);

  it("keeps each sample's reward columns of a TRL completions Parquet with the step, in the run's order, for the item view and exports", async () => {
    const dataset = await fileDataset({ questions: MINIDEV_QUESTIONS, gold: MINIDEV_GOLD, dbRoot: DB_ROOT });
    const service = createSeriesService(memorySeriesPorts(memoryAppPorts(dataset, DB_ROOT)));
    const dir = mkdtempSync(path.join(tmpdir(), 'wb-series-trl-'));
    const [file] = writeTrlCompletions(dir, [1]);
    const series = await service.importDumps({
      name: 'trl',
      datasetId: dataset.id,
      config,
      stepPattern: null,
      format: null,
      files: [{ name: path.relative(dir, file!), file: new Blob([readFileSync(file!)]), lastModified: null }],
    });
    expect(series.steps.map((s) => s.step)).toEqual([stepOf(1)]);
    const trainer = await service.trainerScores(series.steps[0]!.runId);
    // The run's (index, sample) order is the questions' order, the order the helper wrote the rows in.
    const rows = trlRows(1);
    expect(predictionsOf(1).map(({ q }) => questions.indexOf(q))).toEqual(
      [...predictionsOf(1).map(({ q }) => questions.indexOf(q))].sort((a, b) => a - b),
    );
    expect(trainer!.rewards).toEqual(
      rows.map((r) => ({
        accuracy_reward: r.accuracy_reward,
        format_reward: Number.isNaN(r.format_reward) ? null : r.format_reward,
        advantage: r.advantage,
      })),
    );
    expect(trainer!.scores).toHaveLength(rows.length);
  }, 600_000);
});
