/**
 * The CLI exits non-zero with a summary on stderr when nothing could be scored, and refuses
 * flags that would make a run meaningless before it starts (nothing on stdout).
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';
import { evalArgs, tinyBird, type TinyBird } from './cli-fixture.ts';

let t: TinyBird;
beforeAll(async () => {
  t = await tinyBird();
});

describe('nothing scored is an error', { timeout: 120_000 }, () => {
  it('eval with an empty --db-root: exit 2, stderr says nothing was scored and which databases are missing (was exit 0)', async () => {
    const empty = mkdtempSync(path.join(tmpdir(), 'wb-empty-'));
    const run = await runCli(evalArgs({ ...t, dbRoot: empty }));
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/error: --db-root: nothing was scored: none of the 2 item\(s\)/);
    expect(run.stderr).toMatch(/1 database\(s\) missing .*: tiny \(2 item\(s\)\)/);
  });

  it('eval where every database is unreadable: exit 2, each database and its problem on stderr (was exit 0 with nothing on stderr)', async () => {
    const root = mkdtempSync(path.join(tmpdir(), 'wb-bad-'));
    mkdirSync(path.join(root, 'tiny'));
    writeFileSync(path.join(root, 'tiny', 'tiny.sqlite'), 'not a database at all');
    const run = await runCli(evalArgs({ ...t, dbRoot: root }));
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/nothing was scored/);
    expect(run.stderr).toMatch(/tiny \(2 item\(s\)\) could not be opened: database tiny: not an SQLite 3 file/);
  });

  it('probe with an empty --db-root: exit 2, the missing databases on stderr (was "0 questions probed", exit 0)', async () => {
    const empty = mkdtempSync(path.join(tmpdir(), 'wb-empty-'));
    const run = await runCli(['probe', '--gold', t.gold, '--db-root', empty, '--workers', '1']);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(
      /error: --db-root: nothing was probed: none of the 2 question\(s\) has its database .* \(missing: tiny;/,
    );
  });

  it('eval with one good database still exits 0', async () => {
    const run = await runCli(evalArgs(t));
    expect(run.code).toBe(0);
    expect(run.stderr).toBe('');
  });
});

describe('refused before the run', { timeout: 120_000 }, () => {
  it('eval --reward dividing by zero: refused with nothing computed (was refused only after the run)', async () => {
    const run = await runCli(evalArgs(t, '--reward', 'ex / (format - 1)'));
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(
      /error: --reward: reward formula "ex \/ \(format - 1\)" gives (NaN|-?Infinity) for ex = \d, format = 1.*division by zero/,
    );
  });

  it('eval --workers 1000 and --timeout-s 2147484: refused with the bound named', async () => {
    const w = await runCli(evalArgs(t, '--workers', '1000'));
    expect(w.code).toBe(2);
    expect(w.stdout).toBe('');
    expect(w.stderr).toMatch(/error: --workers: 1000 is more than \d+ \(4 x the \d+ cores of this machine\)/);
    const s = await runCli(evalArgs(t, '--timeout-s', '2147484'));
    expect(s.code).toBe(2);
    expect(s.stderr).toMatch(/error: --timeout-s: 2147484 s is longer than a timer can wait/);
  });

  it('probe: --exploits "" (ran nothing, exit 0), --workers 1000 and --timeout-s 2147484 refused', async () => {
    const probe = (...extra: string[]) =>
      runCli(['probe', '--gold', t.gold, '--db-root', t.dbRoot, '--workers', '1', ...extra]);
    const e = await probe('--exploits', '');
    expect(e.code).toBe(2);
    expect(e.stdout).toBe('');
    expect(e.stderr).toMatch(/error: --exploits: names no exploit, so nothing would run/);
    const w = await probe('--workers', '1000');
    expect(w.stderr).toMatch(/error: --workers: 1000 is more than/);
    const s = await probe('--timeout-s', '2147484');
    expect(s.stderr).toMatch(/error: --timeout-s: 2147484 s is longer than a timer can wait/);
  });
});
