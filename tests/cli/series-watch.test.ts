/**
 * `series` and `series --watch` run in this process (src/cli/commands/series.ts `run`, as the CLI
 * calls it), the polls driven by the test: `afterPoll` changes the folder between two polls and
 * stops the watch after a given poll, so nothing depends on how long a poll or a pause takes.
 * Step files are made from the real mini-dev prediction files (tests/helpers/series-dumps.ts).
 * - a step file still being written (26 of 52 questions) is re-read once complete and its step
 *   replaced, with a warning naming the file; a half-written BIRD JSON is read once complete;
 * - `.sql` step files are read (the same numbers as the BIRD JSON they were made from);
 * - links are never followed out of the folder or round a loop; each is named once;
 * - the report is built once per run, and once per poll that changed the series, never per step;
 * - the watch holds the same number of abort listeners after any number of polls.
 */
import { execFileSync } from 'node:child_process';
import { getEventListeners } from 'node:events';
import {
  appendFileSync,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createNodeHost } from '../../src/adapters/node/node-host.ts';
import { run, type SeriesRunHooks } from '../../src/cli/commands/series.ts';
import { listStepFiles } from '../../src/cli/commands/series-files.ts';
import { BIRD_SEPARATOR } from '../../src/core/formats/predictions.ts';
import { seriesReport } from '../../src/core/series/stats.ts';
import type { Series } from '../../src/core/series/model.ts';
import { readJson } from '../helpers/cli.ts';
import { DB_ROOT, MINIDEV_GOLD, MINIDEV_QUESTIONS, PREDICTION_FILES, verlLines } from '../helpers/series-dumps.ts';

const tempDir = () => mkdtempSync(path.join(tmpdir(), 'wb-series-watch-'));

/** A --db-root holding only superhero (a copy in a temporary folder): every step scores its 52 questions only. */
function superheroOnly(): string {
  const root = path.join(tempDir(), 'db');
  mkdirSync(path.join(root, 'superhero'), { recursive: true });
  copyFileSync(path.join(DB_ROOT, 'superhero', 'superhero.sqlite'), path.join(root, 'superhero', 'superhero.sqlite'));
  return root;
}

/** Prediction file 0's superhero verl lines, as step `step`. */
const superheroLines = (step: number) =>
  verlLines(0, ['superhero']).map((l) => JSON.stringify({ ...JSON.parse(l), step }));

afterEach(() => {
  vi.restoreAllMocks();
});

/** `series ARGS` in this process; its stdout and stderr captured. */
async function series(
  args: string[],
  hooks: SeriesRunHooks = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stdout += String(chunk);
    return true;
  });
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stderr += String(chunk);
    return true;
  });
  try {
    const code = await run(args, createNodeHost(), hooks);
    return { code, stdout, stderr };
  } finally {
    vi.restoreAllMocks();
  }
}

const common = (dbRoot: string) => [
  '--gold',
  MINIDEV_GOLD,
  '--dataset',
  MINIDEV_QUESTIONS,
  '--db-root',
  dbRoot,
  '--no-cache',
];

/** A report builder that counts its calls (the real one underneath). */
function countingReport(): { count: () => number; seriesReport: (s: Series) => ReturnType<typeof seriesReport> } {
  let n = 0;
  return {
    count: () => n,
    seriesReport: (s) => {
      n++;
      return seriesReport(s);
    },
  };
}

/**
 * A watch stopped after poll `last`; `at[k]` runs after poll k (the folder changed, the outputs
 * checked). Returns the run and the abort listeners on the watch's signal after each poll.
 */
async function watch(
  args: string[],
  last: number,
  at: Record<number, () => void>,
  report = countingReport(),
): Promise<{ code: number; stdout: string; stderr: string; listeners: number[]; reports: number }> {
  const stop = new AbortController();
  const listeners: number[] = [];
  let polls = 0;
  const got = await series([...args, '--watch', '--poll-ms', '100'], {
    stop,
    seriesReport: report.seriesReport,
    afterPoll: (poll) => {
      polls = poll;
      listeners.push(getEventListeners(stop.signal, 'abort').length);
      at[poll]?.();
      if (poll >= last) stop.abort();
    },
  });
  expect(polls).toBe(last);
  return { ...got, listeners, reports: report.count() };
}

const stepsOf = (out: string) =>
  (readJson(out).steps as Array<{ step: number; questions: number; ex: number }>).map((s) => [s.step, s.questions]);

describe('series: one report per run, not per step', () => {
  it('20 steps build the series report once (the outputs and the table come from it) and leave no abort listener', async () => {
    const dir = tempDir();
    const val = path.join(dir, 'val');
    mkdirSync(val);
    const steps = Array.from({ length: 20 }, (_, k) => (k + 1) * 10);
    for (const step of steps)
      writeFileSync(path.join(val, `${step}.jsonl`), superheroLines(step).slice(0, 3).join('\n') + '\n');
    const out = path.join(dir, 'out.json');
    const report = countingReport();
    const stop = new AbortController();
    const got = await series(['--completions', val, ...common(DB_ROOT), '--out', out], {
      stop,
      seriesReport: report.seriesReport,
    });
    // Twenty steps' evaluations left no listener on the run's signal.
    expect(getEventListeners(stop.signal, 'abort')).toHaveLength(0);
    expect(got.code, got.stderr).toBe(0);
    expect(stepsOf(out)).toEqual(steps.map((s) => [s, 3]));
    expect(got.stdout).toMatch(/^\s*200\s+3\s+1\s/m);
    expect(report.count()).toBe(1);
  }, 300_000);
});

describe('series --watch: a step is taken only once complete, and read again when it changes', () => {
  it('a verl step written in two halves (26 then 52 questions) is scored, then re-scored whole with a warning naming the file; one report per poll that changed the series; no abort listener gathers', async () => {
    const dir = tempDir();
    const val = path.join(dir, 'val');
    mkdirSync(val);
    const file = path.join(val, '100.jsonl');
    const lines = superheroLines(100);
    expect(lines).toHaveLength(52);
    writeFileSync(file, lines.slice(0, 26).join('\n') + '\n');
    const out = path.join(dir, 'out.json');
    const got = await watch(['--completions', val, ...common(superheroOnly()), '--out', out], 7, {
      2: () => {
        expect(stepsOf(out)).toEqual([[100, 26]]);
        appendFileSync(file, lines.slice(26).join('\n') + '\n');
      },
      4: () => expect(stepsOf(out)).toEqual([[100, 52]]),
    });
    expect(got.code, got.stderr).toBe(0);
    expect(got.stderr).toContain(`warning: ${file} changed after step 100 was scored: read again`);
    expect(got.stdout.match(/^step 100: /gm)).toHaveLength(2);
    expect(got.stdout).toMatch(/^step 100: EX \d+\.\d\d, pass@1 \d+\.\d\d, 52 questions/m);
    expect(got.stdout).toMatch(/^\s*100\s+52\s+1\s/m);
    expect(got.stderr).toContain('stopped: 1 step in the series');
    // Polls 2 and 4 changed the series: two reports, the final table from the last one.
    expect(got.reports).toBe(2);
    // Seven polls, the same listeners on the watch's signal after each (one per pause would grow by one a poll).
    expect(got.listeners).toHaveLength(7);
    expect(new Set(got.listeners).size, JSON.stringify(got.listeners)).toBe(1);
  }, 300_000);

  it('a half-written BIRD JSON is reported once and read once complete; a .sql step file made from the same predictions gives the same numbers', async () => {
    const dir = tempDir();
    const val = path.join(dir, 'val');
    mkdirSync(val);
    const bird = readFileSync(PREDICTION_FILES[0]!);
    const json = path.join(val, 'predict_step_100.json');
    writeFileSync(json, bird.subarray(0, Math.floor(bird.length / 2)));
    // The same predictions, one SQL per line (a .sql predictions file is positional, as BIRD JSON).
    const preds = JSON.parse(bird.toString('utf8')) as Record<string, string>;
    const sqlLines = Object.keys(preds)
      .sort((a, b) => Number(a) - Number(b))
      .map((k) => preds[k]!.split(BIRD_SEPARATOR)[0]!.replace(/\s+/g, ' ').trim());
    writeFileSync(path.join(val, 'predict_step_200.sql'), sqlLines.join('\n') + '\n');
    const out = path.join(dir, 'out.json');
    const got = await watch(['--completions', val, ...common(superheroOnly()), '--out', out], 6, {
      3: () => {
        expect(stepsOf(out)).toEqual([[200, 52]]);
        writeFileSync(json, bird);
      },
    });
    expect(got.code, got.stderr).toBe(0);
    expect(got.stderr.match(/not complete JSON yet/g), got.stderr).toHaveLength(1);
    expect(got.stderr).toContain(`${json}: not complete JSON yet`);
    const report = readJson(out);
    expect(stepsOf(out)).toEqual([
      [100, 52],
      [200, 52],
    ]);
    expect(report.steps[1].ex).toBe(report.steps[0].ex);
    expect(got.reports).toBe(2);
  }, 300_000);
});

describe('series: step files and links', () => {
  it('lists every format docs/series.md lists (.jsonl, .json, .eval, .sql), nothing hidden, and refuses a FIFO by name without opening it', async () => {
    const dir = tempDir();
    for (const f of [
      'a.jsonl',
      'b.json',
      'c.eval',
      'd.sql',
      'e.txt',
      '.hidden.jsonl',
      path.join('.hid', 'f.jsonl'),
      path.join('sub', 'g.SQL'),
    ]) {
      mkdirSync(path.dirname(path.join(dir, f)), { recursive: true });
      writeFileSync(path.join(dir, f), 'x');
    }
    execFileSync('mkfifo', [path.join(dir, 'fifo.jsonl')]);
    const got = await listStepFiles([dir]);
    expect(got.files.map((f) => f.name)).toEqual(['a.jsonl', 'b.json', 'c.eval', 'd.sql', path.join('sub', 'g.SQL')]);
    expect(got.refused).toEqual([`${path.join(dir, 'fifo.jsonl')}: a FIFO, not a regular file: not read`]);
  });

  it('never follows a link: a folder loop is not entered, a link inside the folder is not read twice, a link outside is refused by name; under --watch each is named once', async () => {
    const dir = tempDir();
    const val = path.join(dir, 'val');
    mkdirSync(path.join(val, 'sub'), { recursive: true });
    writeFileSync(path.join(val, '100.jsonl'), superheroLines(100).slice(0, 4).join('\n') + '\n');
    writeFileSync(path.join(val, 'sub', '200.jsonl'), superheroLines(200).slice(0, 4).join('\n') + '\n');
    const outside = path.join(dir, 'elsewhere');
    mkdirSync(outside);
    writeFileSync(path.join(outside, '300.jsonl'), superheroLines(300).slice(0, 4).join('\n') + '\n');
    symlinkSync('..', path.join(val, 'sub', 'loop'));
    symlinkSync('100.jsonl', path.join(val, 'again.jsonl'));
    symlinkSync(path.join(outside, '300.jsonl'), path.join(val, '300.jsonl'));
    symlinkSync(outside, path.join(val, 'more'));

    const listed = await listStepFiles([val]);
    expect(listed.files.map((f) => f.name)).toEqual(['100.jsonl', path.join('sub', '200.jsonl')]);
    expect(listed.refused).toHaveLength(4);
    expect(listed.refused.join('\n')).toContain(
      `${path.join(val, '300.jsonl')}: refused: a symbolic link to ${path.join(outside, '300.jsonl')}, outside the folder`,
    );
    expect(listed.refused.join('\n')).toContain(
      `${path.join(val, 'again.jsonl')}: a symbolic link to 100.jsonl in the same folder`,
    );
    expect(listed.refused.join('\n')).toContain(`${path.join(val, 'sub', 'loop')}: a symbolic link to the folder`);
    expect(listed.refused.join('\n')).toContain(`${path.join(val, 'more')}: a symbolic link to the folder ${outside}`);

    const out = path.join(dir, 'out.json');
    const got = await watch(['--completions', val, ...common(DB_ROOT), '--out', out], 4, {});
    expect(got.code, got.stderr).toBe(0);
    expect(stepsOf(out)).toEqual([
      [100, 4],
      [200, 4],
    ]);
    expect(got.stderr.split(`${path.join(val, '300.jsonl')}: refused`)).toHaveLength(2);
    expect(got.stderr).not.toContain('error:');
  }, 300_000);
});
