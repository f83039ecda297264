/**
 * The reference several test files compare a host with: the sample verdicts of `eval
 * --no-cache` of one BIRD mini-dev predictions file on the databases here (a real CLI run).
 * Computed once per test run: the first file that asks runs the CLI and keeps the result in the
 * run's folder (tests/helpers/suite-folder.ts) under the sha256 of the predictions file; the
 * others read it (or wait for it while it is computed). Without that folder (a project without
 * the setup) each process computes its own.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect, inject } from 'vitest';
import { readJson, runCli } from './cli.ts';
import { MINIDEV_ARGS, SLOW_QUESTION } from './series-dumps.ts';

export interface EvalVerdicts {
  /** EX in percent over the scored samples. */
  ex: number;
  /** (index, ex) of each scored sample, in the run's order. */
  verdicts: Array<[number, number]>;
  /** Each scored sample's question, SQL and status, in the run's order. */
  samples: Array<{ index: number; questionId: number; sql: string; status: string; ex: number }>;
}

const inProcess = new Map<string, Promise<EvalVerdicts>>();

async function compute(file: string): Promise<EvalVerdicts> {
  const out = path.join(mkdtempSync(path.join(tmpdir(), 'wb-eval-ref-')), 'run.json');
  const run = await runCli(['eval', '--predictions', file, ...MINIDEV_ARGS, '--no-cache', '--run-out', out]);
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

/** `eval --no-cache` of `file` on mini-dev: its scored samples' verdicts and EX, once per test run. */
export function minidevEvalVerdicts(file: string): Promise<EvalVerdicts> {
  const key = createHash('sha256').update(readFileSync(file)).digest('hex');
  let pending = inProcess.get(key);
  if (!pending) {
    const folder = inject('suiteFolder') as string | undefined;
    pending = folder ? keptInRun(file, path.join(folder, `eval-verdicts-${key}.json`)) : compute(file);
    inProcess.set(key, pending);
  }
  return pending;
}

/**
 * The reference kept at `kept`: read when there; else computed by the one test file that takes
 * the lock (written whole, then renamed), the others waiting for it. A file whose wait ends
 * without it (the computing file failed: `.failed`, or a bound its run cannot reach) computes its own.
 */
async function keptInRun(file: string, kept: string): Promise<EvalVerdicts> {
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
    return compute(file);
  }
  try {
    const got = await compute(file);
    const tmp = `${kept}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify(got));
    renameSync(tmp, kept);
    return got;
  } catch (err) {
    writeFileSync(`${kept}.failed`, String(err));
    throw err;
  }
}

/**
 * `minidevEvalVerdicts(file)` on the questions of the 13-step training runs (series-dumps.ts
 * DUMPED): the BIRD file is run whole (its pairing is by position), SLOW_QUESTION is then left
 * out of the verdicts and of EX.
 */
export async function minidevDumpedVerdicts(file: string): Promise<EvalVerdicts> {
  const all = await minidevEvalVerdicts(file);
  const samples = all.samples.filter((s) => s.questionId !== SLOW_QUESTION);
  return {
    ex: (samples.filter((s) => s.ex === 1).length / samples.length) * 100,
    verdicts: samples.map((s) => [s.index, s.ex] as [number, number]),
    samples,
  };
}
