/**
 * Outputs are checked before the work and written whole whatever happens to stdout: a closed
 * pipe (`| head -1`) no longer kills the run with an unhandled EPIPE, a folder that cannot be
 * written, a name too long for the temporary file and a full disk fail at once, naming the flag,
 * before any SQL runs (nothing is printed on stdout). Real BIRD mini-dev data.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, runCli, tempFile } from '../helpers/cli.ts';
import { gpt4oEvalArgs, minidevFlags } from '../helpers/shared-data.ts';
import { writeVerlDumps } from '../helpers/series-dumps.ts';

const evalArgs = gpt4oEvalArgs();
const quote = (a: string) => `'${a.replace(/'/g, `'\\''`)}'`;

/** A 1 MiB tmpfs, full: only where this test runs as root with mount allowed (a container here). */
function fullDisk(): string | null {
  if (process.getuid?.() !== 0) return null;
  const dir = mkdtempSync(path.join(tmpdir(), 'wb-full-'));
  if (spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', dir]).status !== 0) return null;
  try {
    writeFileSync(path.join(dir, 'fill'), new Uint8Array(2 * 1024 * 1024));
  } catch {
    // ENOSPC: full, as wanted
  }
  return dir;
}

describe('outputs checked before the work, written whole even when stdout closes', { timeout: 240_000 }, () => {
  it('eval ... --out --run-out | head -1: no EPIPE crash, both outputs written whole, no temporary file left', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'wb-pipe-'));
    const out = path.join(dir, 'r.json');
    const run = path.join(dir, 'r.run.json');
    const cmd = `npm run --silent cli -- ${[...evalArgs, '--out', out, '--run-out', run].map(quote).join(' ')} 2>${quote(path.join(dir, 'stderr'))} | head -1; echo "cli=\${PIPESTATUS[0]}"`;
    const stdout = execFileSync('bash', ['-c', cmd], { cwd: ROOT, encoding: 'utf8' });
    expect(stdout.split('\n')[0]).toMatch(/simple|EX/i); // the first line of the table reached head
    expect(stdout).toMatch(/cli=0/);
    const stderr = readFileSync(path.join(dir, 'stderr'), 'utf8');
    expect(stderr).not.toMatch(/EPIPE|Unhandled/);
    expect(JSON.parse(readFileSync(out, 'utf8')).items.length).toBe(500);
    expect(JSON.parse(readFileSync(run, 'utf8')).samples.length).toBe(500);
    expect(readdirSync(dir).sort()).toEqual(['r.json', 'r.run.json', 'stderr']);
  });

  it('a folder that cannot be written (/sys), and a name too long for its temporary file: refused at once, nothing evaluated', async () => {
    const ro = await runCli([...evalArgs, '--out', '/sys/r.json']);
    expect(ro.code).toBe(2);
    expect(ro.stderr).toMatch(
      /^error: --out: \/sys\/r\.json: the folder \/sys is not writable \(EACCES\): name a file in a folder you can write to\n$/,
    );
    expect(ro.stdout).toBe('');
    const long = path.join(path.dirname(tempFile('x')), `${'r'.repeat(240)}.json`);
    const tooLong = await runCli([...evalArgs, '--run-out', long]);
    expect(tooLong.code).toBe(2);
    expect(tooLong.stderr).toMatch(
      /--run-out: .*r{20,}\.json: the name is too long: the temporary file written beside it \(\d+ characters\) is longer than the file system allows; use a shorter name/,
    );
    expect(tooLong.stdout).toBe('');
    expect(existsSync(long)).toBe(false);
  });

  it('gold-check and series with --out in a folder that cannot be written (/sys): refused at once naming the flag, nothing evaluated', async () => {
    const gold = await runCli(['gold-check', ...minidevFlags(), '--workers', '1', '--out', '/sys/g.json']);
    expect(gold.code).toBe(2);
    expect(gold.stderr).toMatch(
      /^error: --out: \/sys\/g\.json: the folder \/sys is not writable \(EACCES\): name a file in a folder you can write to\n$/,
    );
    expect(gold.stdout).toBe('');
    const dir = mkdtempSync(path.join(tmpdir(), 'wb-series-ro-'));
    writeVerlDumps(path.join(dir, 'val'), [0]);
    const series = (...extra: string[]) =>
      runCli(['series', '--completions', path.join(dir, 'val'), ...minidevFlags(), '--workers', '1', ...extra]);
    for (const flag of ['--out', '--csv', '--parquet', '--series-out']) {
      const r = await series(flag, '/sys/s.out');
      expect(r.code, flag).toBe(2);
      expect(r.stderr).toMatch(
        new RegExp(`^error: ${flag}: /sys/s\\.out: the folder /sys is not writable \\(EACCES\\)`),
      );
      expect(r.stderr).not.toMatch(/step rule|verl/); // refused before any step file was read
      expect(r.stdout).toBe('');
    }
    // The questions table written beside --csv is checked too (here: it would overwrite --out).
    const clash = await series('--out', path.join(dir, 's.questions.csv'), '--csv', path.join(dir, 's.csv'));
    expect(clash.code).toBe(2);
    expect(clash.stderr).toMatch(/--csv: .*s\.questions\.csv is also the file of --out: give each output its own file/);
  });

  const full = fullDisk();
  it.skipIf(!full)(
    'a full disk (a 1 MiB tmpfs, filled): refused at once naming the folder, nothing evaluated',
    async () => {
      const r = await runCli([...evalArgs, '--out', path.join(full!, 'r.json')]);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/--out: .*r\.json: the disk of .* is full/);
      expect(r.stdout).toBe('');
      spawnSync('umount', [full!]);
      mkdirSync(full!, { recursive: true });
    },
  );
});
