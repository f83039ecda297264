/**
 * The reference several test files compare a host with, or build on: `series --out` (a real CLI
 * run, its own fresh verdict cache) of the 13 real BIRD mini-dev prediction files as 13 verl
 * dumps (series-dumps.ts `writeVerlDumps`, every step, the DUMPED questions), with the CLI flags `extra` (e.g. a
 * timeout). Computed once per test run: the dumps and the CLI's JSON are kept in the run's folder
 * (tests/helpers/suite-folder.ts) under the sha256 of the dumps and flags; the first file that
 * asks runs the CLI, the others read its JSON (or wait for it while it is computed). A host
 * compared with it reads the same dump files (a step's wall time is its file's mtime). Without
 * that folder (a project without the setup) each process computes its own.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect, inject } from 'vitest';
import { readJson, runCli } from './cli.ts';
import { DUMPED, MINIDEV_ARGS, PREDICTION_FILES, stepOf, verlLines, writeVerlDumps } from './series-dumps.ts';

/** `series --out`'s JSON (docs/formats.md): steps, questions, buckets, warnings, best_step, step_rule. */
export type SeriesReport = any;

/** The dumps the reference was computed on (the app must read these files: a step's wall time is its file's mtime), and the report. */
export interface SeriesReference {
  dumps: string;
  report: Promise<SeriesReport>;
}

const inProcess = new Map<string, SeriesReference>();

/** The 13 dumps' lines by file name, and their key with `extra`. */
function stepsAndKey(extra: readonly string[]): { key: string } {
  const hash = createHash('sha256').update(JSON.stringify(extra));
  PREDICTION_FILES.forEach((_, i) => hash.update(`${stepOf(i)}.jsonl`).update(verlLines(i, DUMPED).join('\n')));
  return { key: hash.digest('hex') };
}

/** The dumps in `dumps`, written whole (into a sibling, then renamed); one written first by another process stays. */
function writeDumpsOnce(dumps: string): void {
  if (existsSync(dumps)) return;
  const tmp = `${dumps}.${process.pid}.tmp`;
  writeVerlDumps(
    tmp,
    PREDICTION_FILES.map((_, i) => i),
    DUMPED,
  );
  try {
    renameSync(tmp, dumps);
  } catch (err) {
    if (!existsSync(dumps)) throw err;
  }
}

async function compute(dumps: string, extra: readonly string[]): Promise<SeriesReport> {
  const out = path.join(mkdtempSync(path.join(tmpdir(), 'wb-series-ref-out-')), 'cli.json');
  const run = await runCli(['series', '--completions', dumps, ...MINIDEV_ARGS, ...extra, '--out', out]);
  expect(run.code, run.stderr).toBe(0);
  return readJson(out);
}

/**
 * `series --completions <the 13 real steps> <mini-dev> ...extra --out`: the dumps (written now)
 * and its JSON (once per test run; the CLI may still be running when this returns).
 */
export function minidevSeriesReference(extra: readonly string[] = []): SeriesReference {
  const { key } = stepsAndKey(extra);
  let ref = inProcess.get(key);
  if (!ref) {
    const suite = inject('suiteFolder') as string | undefined;
    const folder = suite ? path.join(suite, `series-${key}`) : mkdtempSync(path.join(tmpdir(), 'wb-series-ref-'));
    mkdirSync(folder, { recursive: true });
    const dumps = path.join(folder, 'val');
    writeDumpsOnce(dumps);
    const report = suite
      ? keptInRun(path.join(folder, 'cli.json'), () => compute(dumps, extra))
      : compute(dumps, extra);
    // Awaited by the caller; a failure is reported there.
    report.catch(() => undefined);
    ref = { dumps, report };
    inProcess.set(key, ref);
  }
  return ref;
}
/**
 * The value kept at `kept`: read when there; else computed by the one test file that takes the
 * lock (written whole, then renamed), the others waiting for it. A file whose wait ends without
 * it (the computing file failed: `.failed`, or a bound its run cannot reach) computes its own.
 */
async function keptInRun(kept: string, make: () => Promise<SeriesReport>): Promise<SeriesReport> {
  const read = () => JSON.parse(readFileSync(kept, 'utf8')) as SeriesReport;
  if (existsSync(kept)) return read();
  let mine = true;
  try {
    writeFileSync(`${kept}.lock`, String(process.pid), { flag: 'wx' });
  } catch {
    mine = false;
  }
  if (!mine) {
    for (let t = 0; t < 4 * 1800 && !existsSync(kept) && !existsSync(`${kept}.failed`); t++)
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
