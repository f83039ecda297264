/**
 * The reference several test files compare a host with: the sample verdicts of `eval
 * --no-cache` of one BIRD mini-dev predictions file on the databases here (a real CLI run).
 * Computed once per test run: the first file that asks runs the CLI and keeps the result in the
 * run's folder (tests/helpers/suite-folder.ts) under the sha256 of the predictions as run; the
 * others read it (or wait for it while it is computed). Without that folder (a project without
 * the setup) each process computes its own.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect, inject } from 'vitest';
import { readJson, runCli } from './cli.ts';
import { BIRD_SEPARATOR } from '../../src/core/formats/predictions.ts';
import { MINIDEV_ARGS, questions, SLOW_QUESTION } from './series-dumps.ts';

export interface EvalVerdicts {
  /** EX in percent over the scored samples. */
  ex: number;
  /** (index, ex) of each scored sample, in the run's order. */
  verdicts: Array<[number, number]>;
  /** Each scored sample's question, SQL and status, in the run's order. */
  samples: Array<{ index: number; questionId: number; sql: string; status: string; ex: number }>;
}

const inProcess = new Map<string, Promise<EvalVerdicts>>();

/**
 * `eval --no-cache --no-version-check` of the predictions `text` (named as `file`): its verdicts
 * are the main engine's, which the version check does not change.
 */
async function compute(file: string, text: string): Promise<EvalVerdicts> {
  const dir = mkdtempSync(path.join(tmpdir(), 'wb-eval-ref-'));
  const [preds, out] = [path.join(dir, path.basename(file)), path.join(dir, 'run.json')];
  writeFileSync(preds, text);
  const run = await runCli([
    'eval',
    '--predictions',
    preds,
    ...MINIDEV_ARGS,
    '--no-cache',
    '--no-version-check',
    '--run-out',
    out,
  ]);
  expect(run.code, run.stderr).toBe(0);
  const scored = readJson(out).samples.filter((s: { status: string }) => s.status !== 'missing-db');
  return {
    ex: (scored.filter((s: { ex: number }) => s.ex === 1).length / scored.length) * 100,
    verdicts: scored.map((s: { index: number; ex: number }) => [s.index, s.ex] as [number, number]),
    samples: scored.map(({ index, questionId, sql, status, ex }: EvalVerdicts['samples'][number]) => ({
      index,
      questionId,
      sql,
      status,
      ex,
    })),
  };
}

/**
 * `eval --no-cache` of BIRD mini-dev predictions `file` on the questions of the 13-step training
 * runs (series-dumps.ts DUMPED), once per test run: its scored samples' verdicts and EX. The file
 * is run with the answer to SLOW_QUESTION blanked (no SQL, nothing executed: a BIRD file pairs by
 * position, so it stays), and that question is then left out of the verdicts and of EX.
 */
export function minidevDumpedVerdicts(file: string): Promise<EvalVerdicts> {
  const preds = JSON.parse(readFileSync(file, 'utf8')) as Record<string, string>;
  const slow = String(questions.findIndex((q) => q.question_id === SLOW_QUESTION));
  preds[slow] = BIRD_SEPARATOR + preds[slow]!.split(BIRD_SEPARATOR)[1]!;
  const text = JSON.stringify(preds);
  const key = createHash('sha256').update(text).digest('hex');
  let pending = inProcess.get(key);
  if (!pending) {
    const folder = inject('suiteFolder') as string | undefined;
    pending = folder
      ? keptInRun(path.join(folder, `eval-verdicts-${key}.json`), () => compute(file, text))
      : compute(file, text);
    inProcess.set(key, pending);
  }
  return pending.then(({ samples: all }) => {
    const samples = all.filter((s) => s.questionId !== SLOW_QUESTION);
    return {
      ex: (samples.filter((s) => s.ex === 1).length / samples.length) * 100,
      verdicts: samples.map((s) => [s.index, s.ex] as [number, number]),
      samples,
    };
  });
}

/**
 * The reference kept at `kept`: read when there; else computed by the one test file that takes
 * the lock (written whole, then renamed), the others waiting for it. A file whose wait ends
 * without it (the computing file failed: `.failed`, or a bound its run cannot reach) computes its own.
 */
async function keptInRun(kept: string, make: () => Promise<EvalVerdicts>): Promise<EvalVerdicts> {
  const read = () => JSON.parse(readFileSync(kept, 'utf8')) as EvalVerdicts;
  if (existsSync(kept)) return read();
  let mine = true;
  try {
    writeFileSync(`${kept}.lock`, String(process.pid), { flag: 'wx' });
  } catch {
    mine = false;
  }
  if (!mine) {
    for (let t = 0; t < 4 * 900 && !existsSync(kept) && !existsSync(`${kept}.failed`); t++)
      await new Promise((r) => setTimeout(r, 250));
    if (existsSync(kept)) return read();
    return make();
  }
  try {
    const got = await make();
    const tmp = `${kept}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify(got));
    renameSync(tmp, kept);
    return got;
  } catch (err) {
    writeFileSync(`${kept}.failed`, String(err));
    throw err;
  }
}
