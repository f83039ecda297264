import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'vitest';
import { ROOT, runCommand, type CliRun } from './run-command.ts';
import { datasetFlags, minidevFiles, type DatasetFiles } from './shared-data.ts';

export { ROOT, runCommand, type CliRun };

/** What `npm run cli` runs (package.json's `cli` script: `node scripts/cli.mjs`). */
export const CLI_SCRIPT = path.join(ROOT, 'scripts', 'cli.mjs');

/** A fresh cache folder (XDG_CACHE_HOME) for one CLI run, then `env`. */
function cliEnv(env?: Record<string, string>): NodeJS.ProcessEnv {
  return { ...process.env, XDG_CACHE_HOME: mkdtempSync(path.join(tmpdir(), 'wb-cli-cache-')), ...env };
}

/**
 * Runs the CLI as its contract, `npm run --silent cli -- ...`, runs it: `node scripts/cli.mjs
 * ...` in the repository root, without starting npm first (npm's start costs more CPU than most
 * commands under test, hundreds of times a suite); tests/cli/npm-run-cli.test.ts checks that the
 * npm route gives the same exit code and output. Each run gets a cache folder of its own
 * (XDG_CACHE_HOME), so no run takes verdicts from an earlier test's run; tests of the verdict
 * cache name theirs with --cache. `env` adds to the environment.
 */
export function runCli(args: string[], cwd = ROOT, env?: Record<string, string>): Promise<CliRun> {
  return runCommand(process.execPath, [CLI_SCRIPT, ...args], { cwd, env: cliEnv(env) });
}

/** The CLI through npm exactly as the README writes it: `npm run --silent cli -- ...` (cwd: the repository root). */
export function runCliThroughNpm(args: string[], env?: Record<string, string>): Promise<CliRun> {
  return runCommand('npm', ['run', '--silent', 'cli', '--', ...args], { cwd: ROOT, env: cliEnv(env) });
}

export function tempFile(name: string): string {
  return path.join(mkdtempSync(path.join(tmpdir(), 'wb-cli-')), name);
}

/** A temporary JSON Lines file of `rows`, one JSON value a line. */
export function jsonlFile(name: string, rows: readonly unknown[]): string {
  const file = tempFile(name);
  writeFileSync(file, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
  return file;
}

/**
 * A temporary copy (`name`) of a BIRD predictions file with its keys sorted as text ("0", "1",
 * "10", ..., "19", "2", ...), as a tool that sorts JSON keys writes it.
 */
export function keysSortedAsText(file: string, name = 'sorted.json'): string {
  const obj = JSON.parse(readFileSync(file, 'utf8')) as Record<string, string>;
  const out = tempFile(name);
  const entries = Object.keys(obj)
    .sort()
    .map((k) => `${JSON.stringify(k)}: ${JSON.stringify(obj[k])}`);
  writeFileSync(out, '{' + entries.join(',\n') + '}');
  return out;
}

export function readJson<T = any>(file: string): T {
  return JSON.parse(readFileSync(file, 'utf8')) as T;
}

/** The files an `eval` reads; `dataset` left out when absent or null. */
export interface EvalFiles extends Partial<DatasetFiles> {
  predictions: string;
  gold: string;
  dbRoot: string;
}

/** `eval` of `files`, then `extra`, its JSON report written to a temporary file (`out`). */
export async function evalToReport(files: EvalFiles, ...extra: string[]): Promise<CliRun & { out: string }> {
  const out = tempFile('eval.json');
  const flags = datasetFlags({ gold: files.gold, dataset: files.dataset ?? null, dbRoot: files.dbRoot });
  const run = await runCli(['eval', '--predictions', files.predictions, ...flags, '--out', out, ...extra]);
  return { ...run, out };
}

/**
 * `eval` of a predictions file on BIRD mini-dev with the databases here, its JSON report written
 * to a temporary file (`out`); the test fails unless it exits 0 and prints no error line.
 */
export async function evalMinidev<R = any>(
  predictions: string,
  extra: string[] = [],
): Promise<{ run: CliRun; out: string; report: R }> {
  const { out, ...run } = await evalToReport({ predictions, ...minidevFiles() }, ...extra);
  expect(run.stderr).not.toMatch(/^error/m);
  expect(run.code).toBe(0);
  return { run, out, report: readJson<R>(out) };
}

/** A judge URL where nothing listens: for `rubric` runs refused before the judge is asked. */
export const NO_JUDGE_URL = 'http://127.0.0.1:9/v1';

/**
 * `rubric` of a completions file against a RaR dataset, judged at `judgeUrl` (default: nowhere)
 * by `judgeModel` (default "m"), then `extra`: CLI arguments.
 */
export function rubricArgs(
  files: { dataset: string; completions: string; judgeUrl?: string; judgeModel?: string },
  ...extra: string[]
): string[] {
  return [
    'rubric',
    '--dataset',
    files.dataset,
    '--completions',
    files.completions,
    '--judge-url',
    files.judgeUrl ?? NO_JUDGE_URL,
    '--judge-model',
    files.judgeModel ?? 'm',
    ...extra,
  ];
}
