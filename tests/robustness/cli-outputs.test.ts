/**
 * Output paths are checked before any work starts (nothing on stdout: no table was computed),
 * with the flag and the folder or input named; an output that is an input, or inside
 * --db-root, is refused and the input keeps its bytes.
 */
import { readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { rubricArgs, runCli } from '../helpers/cli.ts';
import { evalArgs, tinyBird, type TinyBird } from './cli-fixture.ts';
import { syntheticRunFile, syntheticSamples, writeRunFile } from './synthetic-run.ts';

let t: TinyBird;
let runFile: string;
beforeAll(async () => {
  t = await tinyBird();
  runFile = path.join(t.dir, 'run.json');
  writeRunFile(runFile, syntheticRunFile(syntheticSamples({ questions: 3, samples: 2, seed: 1 })));
});

/** Each refusal: exit 2, nothing computed, the message names the flag; the inputs are unchanged. */
async function refused(args: string[], flag: string, text: RegExp) {
  const before = [t.gold, t.predictions, t.db, runFile].map((f) => readFileSync(f));
  const run = await runCli(args);
  expect(run.code).toBe(2);
  expect(run.stdout).toBe('');
  expect(run.stderr).toContain(`error: ${flag}: `);
  expect(run.stderr).toMatch(text);
  expect(run.stderr).not.toMatch(/ENOENT|\n\s+at /);
  [t.gold, t.predictions, t.db, runFile].forEach((f, i) => expect(readFileSync(f).equals(before[i]!), f).toBe(true));
}

describe('outputs checked before any work', { timeout: 120_000 }, () => {
  it('eval --out in a folder that does not exist: the flag and the folder named, before the evaluation (was a raw ENOENT after it)', async () => {
    const missing = path.join(t.dir, 'no-such-folder');
    await refused(
      evalArgs(t, '--out', path.join(missing, 'report.json')),
      '--out',
      new RegExp(`the folder ${missing} of .* does not exist`),
    );
  });

  it('eval --run-out naming the gold file (through ../): refused, the gold file keeps its bytes (was overwritten)', async () => {
    const sneaky = path.join(t.dir, 'dbs', '..', 'gold.sql');
    await refused(evalArgs(t, '--run-out', sneaky), '--run-out', /is the --gold input/);
  });

  it('eval --out naming the database itself, or a symlink to the predictions: refused', async () => {
    await refused(evalArgs(t, '--out', t.db), '--out', /is a database file inside --db-root .* only read/);
    const link = path.join(t.dir, 'link.json');
    symlinkSync(t.predictions, link);
    await refused(evalArgs(t, '--out', link), '--out', /is the --predictions input/);
    // an SQLite file under --db-root, whatever its name
    const renamed = path.join(t.dbRoot, 'tiny', 'copy.bin');
    writeFileSync(renamed, readFileSync(t.db));
    await refused(evalArgs(t, '--out', renamed), '--out', /is a database file inside --db-root/);
  });

  it('eval --out and --run-out naming the same file: refused', async () => {
    const f = path.join(t.dir, 'same.json');
    await refused(evalArgs(t, '--out', f, '--run-out', f), '--run-out', /also the file of --out/);
  });

  it('stats --csv in a missing folder and stats --out naming the run file: refused before the statistics', async () => {
    await refused(['stats', '--run', runFile, '--csv', path.join(t.dir, 'nope', 'p.csv')], '--csv', /does not exist/);
    await refused(['stats', '--run', runFile, '--out', runFile], '--out', /is the --run input/);
    // a run file without question texts: --frontier-jsonl is refused before the statistics (it used to be after the table)
    await refused(
      ['stats', '--run', runFile, '--frontier-jsonl', path.join(t.dir, 'f.jsonl')],
      '--frontier-jsonl',
      /needs the question texts/,
    );
  });

  it('compare --out naming RUN_A, and probe --out inside --db-root: refused', async () => {
    await refused(['compare', runFile, runFile, '--out', runFile], '--out', /is the RUN_A input/);
    await refused(['probe', '--gold', t.gold, '--db-root', t.dbRoot, '--out', t.db], '--out', /inside --db-root/);
    // a new file named like a database, where the next run would read it as one
    await refused(
      ['probe', '--gold', t.gold, '--db-root', t.dbRoot, '--out', path.join(t.dbRoot, 'tiny', 'tiny.sqlite-wal')],
      '--out',
      /inside --db-root/,
    );
  });

  it('rubric --out naming the completions file: refused before the judge is asked', async () => {
    const completions = path.join(t.dir, 'completions.jsonl');
    writeFileSync(completions, '{"id": "x", "completion": "y"}\n');
    const dataset = path.join(t.dir, 'rar.jsonl');
    writeFileSync(dataset, '{}\n');
    const before = readFileSync(completions);
    const run = await runCli(rubricArgs({ dataset, completions }, '--out', completions));
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/error: --out: .* is the --completions input/);
    expect(readFileSync(completions).equals(before)).toBe(true);
  });

  it('a valid --out in an existing folder (even beside the databases) is written, and replaces an older file', async () => {
    const out = path.join(t.dbRoot, 'r.json');
    writeFileSync(out, 'old');
    const run = await runCli(evalArgs(t, '--out', out));
    expect(run.code).toBe(0);
    expect(JSON.parse(readFileSync(out, 'utf8')).summary.count).toBe(2);
  });
});
