/**
 * The reference several test files compare a host with, or build on: `series --out` (a real CLI
 * run, its own fresh verdict cache) of the 13 real BIRD mini-dev prediction files as 13 verl
 * dumps (series-dumps.ts `writeVerlDumps`, every step), with the CLI flags `extra` (e.g. a
 * timeout). Computed once per test run: the first file that asks runs the CLI and keeps its JSON
 * in the run's folder (tests/helpers/suite-folder.ts) under the sha256 of the dumps and flags; the
 * others read it (or wait for it while it is computed). Without that folder (a project without
 * the setup) each process computes its own.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect, inject } from 'vitest';
import { readJson, runCli } from './cli.ts';
import { MINIDEV_ARGS, PREDICTION_FILES, writeVerlDumps } from './series-dumps.ts';

/** `series --out`'s JSON (docs/formats.md): steps, questions, buckets, warnings, best_step, step_rule. */
export type SeriesReport = any;

const inProcess = new Map<string, Promise<SeriesReport>>();

/** The 13 dumps written into a new folder, and the key of their bytes with `extra`. */
function dumpsAndKey(extra: readonly string[]): { dumps: string; key: string } {
  const dumps = path.join(mkdtempSync(path.join(tmpdir(), 'wb-series-ref-')), 'val');
  const files = writeVerlDumps(
    dumps,
    PREDICTION_FILES.map((_, i) => i),
  );
  const hash = createHash('sha256').update(JSON.stringify(extra));
  for (const f of files) hash.update(path.basename(f)).update(readFileSync(f));
  return { dumps, key: hash.digest('hex') };
}

async function compute(dumps: string, extra: readonly string[]): Promise<SeriesReport> {
  const out = path.join(path.dirname(dumps), 'cli.json');
  const run = await runCli(['series', '--completions', dumps, ...MINIDEV_ARGS, ...extra, '--out', out]);
  expect(run.code, run.stderr).toBe(0);
  return readJson(out);
}

/** `series --completions <the 13 real steps> <mini-dev> ...extra --out`: its JSON, once per test run. */
export function minidevSeriesReference(extra: readonly string[] = []): Promise<SeriesReport> {
  const { dumps, key } = dumpsAndKey(extra);
  let pending = inProcess.get(key);
  if (!pending) {
    const folder = inject('suiteFolder') as string | undefined;
    pending = folder
      ? keptInRun(path.join(folder, `series-${key}.json`), () => compute(dumps, extra))
      : compute(dumps, extra);
    inProcess.set(key, pending);
  }
  return pending;
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
