/**
 * The turns of a replayed SkyRL eval dump (built from the real mini-dev prediction files,
 * tests/helpers/trainer-dumps.ts) in the CLI's files: `harness --run-out` keeps every sample's
 * episode (turns, probes, observations, the trainer's score) and `series --series-out` keeps
 * them in each step's run; both files read back through their own readers with the turns whole.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { skyrlEpisode } from '../../src/core/formats/multi-turn-dump.ts';
import { parseRunFile } from '../../src/core/runfile/run-file.ts';
import { parseSeriesFile } from '../../src/core/series/file.ts';
import type { SampleRecord } from '../../src/core/run/types.ts';
import { runCli } from '../helpers/cli.ts';
import { MINIDEV_ARGS, PREDICTION_FILES } from '../helpers/series-dumps.ts';
import { predictionsOf, skyrlLines, skyrlProbes, writeSkyrlDumps } from '../helpers/trainer-dumps.ts';

const tempDir = () => mkdtempSync(path.join(tmpdir(), 'wb-replay-turns-'));
const LAST = PREDICTION_FILES.length - 1;

/** Each sample of prediction file `i`'s dump carries the turns of its line's response and the line's score. */
function expectTurnsKept(samples: readonly SampleRecord[], i: number) {
  const lines = skyrlLines(i).map((l) => JSON.parse(l) as { output_response: string; score: number });
  const preds = predictionsOf(i);
  expect(samples).toHaveLength(preds.length);
  const byId = new Map(samples.map((s) => [s.questionId, s]));
  preds.forEach(({ q }, k) => {
    const s = byId.get(q.question_id)!;
    const dumped = skyrlEpisode(lines[k]!.output_response).turns;
    const ep = s.episode!;
    expect(ep.turns.map((t) => t.text)).toEqual(dumped.filter((t) => t.role === 'assistant').map((t) => t.text));
    expect(ep.turns.map((t) => t.observation).filter((o) => o !== null)).toEqual(
      dumped.filter((t) => t.role === 'observation').map((t) => t.text),
    );
    expect(ep.turns.map((t) => t.probeSql).filter((p) => p !== null)).toHaveLength(skyrlProbes(k));
    expect(ep).toMatchObject({
      turnsUsed: skyrlProbes(k) + 1,
      finalSql: s.sql,
      endReason: 'solution',
      presetReward: lines[k]!.score,
      replay: { format: 'skyrl', stopReason: 'stop' },
    });
  });
}

describe('the turns of a replayed SkyRL dump in the CLI files', () => {
  it('harness --run-out: every sample keeps its turns and the trainer score; the run file reads back whole', async () => {
    const dir = tempDir();
    const [dump] = writeSkyrlDumps(dir, [LAST]);
    const out = path.join(dir, 'run.json');
    const run = await runCli(['harness', '--completions', dump!, ...MINIDEV_ARGS, '--run-out', out]);
    expect(run.code, run.stderr).toBe(0);
    const file = parseRunFile(readFileSync(out, 'utf8'), out);
    const samples = file.samples.filter((s) => s.status !== 'missing-db');
    expectTurnsKept(samples, LAST);
    // What the file holds is what its reader gives back (no field of the episode is lost).
    const raw = JSON.parse(readFileSync(out, 'utf8')) as { samples: SampleRecord[] };
    expect(file.samples.map((s) => s.episode)).toEqual(raw.samples.map((s) => s.episode));
  }, 600_000);

  it('series --series-out: each step run keeps every sample turns', async () => {
    const dir = tempDir();
    writeSkyrlDumps(dir, [0, LAST]);
    const seriesOut = path.join(dir, 'run.series.json');
    const run = await runCli([
      'series',
      '--completions',
      dir,
      ...MINIDEV_ARGS,
      '--out',
      path.join(dir, 'out.json'),
      '--series-out',
      seriesOut,
    ]);
    expect(run.code, run.stderr).toBe(0);
    const file = parseSeriesFile(readFileSync(seriesOut, 'utf8'), seriesOut);
    expect(file.steps).toHaveLength(2);
    expectTurnsKept(file.steps[0]!.run.samples, 0);
    expectTurnsKept(file.steps[1]!.run.samples, LAST);
  }, 600_000);
});
