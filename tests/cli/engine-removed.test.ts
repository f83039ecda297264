/**
 * `eval --engine native` (better-sqlite3 in worker threads) was removed: it could not be
 * contained (no authorizer, no memory bound, runaways that cannot be stopped). A command line
 * that asks for it is refused with the reason and where the docs say more; sql.js stays.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseEvalArgs } from '../../src/cli/commands/eval-args.ts';
import { EVAL_USAGE } from '../../src/cli/usage.ts';
import { isWorkbenchError } from '../../src/core/errors.ts';
import { ROOT, runCli, tempFile } from '../helpers/cli.ts';
import { sharedData } from '../helpers/shared-data.ts';

const BASE = ['--predictions', 'p.json', '--gold', 'g.sql', '--db-root', 'dbs'];
const DOC = 'docs/cli-speed.md';
const HEADING = 'Why there is no native engine';

/** The error parseEvalArgs throws for `argv`, or null. */
function parseError(argv: string[]): Error | null {
  try {
    parseEvalArgs(argv);
    return null;
  } catch (err) {
    return err as Error;
  }
}

describe('--engine native is refused: the engine was removed', () => {
  it('names the flag, says it was removed and why, and points to the section of the docs that exists', () => {
    const err = parseError([...BASE, '--engine', 'native']);
    expect(err).not.toBeNull();
    expect(isWorkbenchError(err)).toBe(true);
    expect(err).toMatchObject({ code: 'BAD_OPTION', where: '--engine' });
    expect(err!.message).toMatch(/^--engine: native \(better-sqlite3\) was removed because it cannot be contained/);
    for (const why of [/no authorizer to refuse ATTACH/, /no memory bound/, /runaway query .* cannot be stopped/])
      expect(err!.message).toMatch(why);
    expect(err!.message).toContain('leave out --engine to use sql.js');
    expect(err!.message).toContain(`${DOC}, "${HEADING}"`);
    // The pointer leads somewhere: the section is in the docs.
    expect(readFileSync(path.join(ROOT, DOC), 'utf8')).toContain(`## ${HEADING}`);
  });

  it('is told first, before a missing required flag', () => {
    expect(parseError(['--engine', 'native'])?.message).toMatch(/^--engine: native \(better-sqlite3\) was removed/);
  });

  it('--engine sql.js (and no --engine) still run sql.js; any other name is refused naming sql.js as the only engine', () => {
    expect(parseError([...BASE, '--engine', 'sql.js'])).toBeNull();
    expect(parseError(BASE)).toBeNull();
    const other = parseError([...BASE, '--engine', 'duckdb']);
    expect(other?.message).toBe(`--engine: expected sql.js (the only engine, the app's), got "duckdb"`);
    expect(EVAL_USAGE).toContain('[--engine sql.js]');
    expect(EVAL_USAGE).not.toMatch(/native/);
  });

  it('the CLI exits 2 with the reason on stderr, on real inputs, and writes nothing', async () => {
    const out = tempFile('native.json');
    const run = await runCli([
      'eval',
      '--engine',
      'native',
      '--no-cache',
      '--predictions',
      sharedData('bird', 'predictions', 'TA_output', 'predict_mini_dev_gpt-4-o_cot_SQLite.json'),
      '--gold',
      sharedData('bird', 'minidev', 'mini_dev_sqlite_gold.sql'),
      '--db-root',
      sharedData('bird', 'databases'),
      '--out',
      out,
    ]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/--engine: native \(better-sqlite3\) was removed because it cannot be contained/);
    expect(run.stderr).toContain(HEADING);
    expect(run.stdout).toBe('');
    expect(existsSync(out)).toBe(false);
  }, 120_000);
});
