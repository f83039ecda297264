/**
 * Outputs are written through a temporary file and a rename: a process killed with SIGINT
 * in the middle of writing a large output leaves the previous output whole (or the new one
 * whole), never a truncated file, and removes its temporary file.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempPathFor, writeFileAtomic } from '../../src/cli/atomic-write.ts';
import { ROOT } from '../helpers/cli.ts';

describe('atomic output writes', () => {
  it('replaces an existing output with the complete new text and leaves no temporary file', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'wb-atomic-'));
    const out = path.join(dir, 'report.json');
    writeFileSync(out, 'old');
    await writeFileAtomic(out, '{"new": true}\n');
    expect(readFileSync(out, 'utf8')).toBe('{"new": true}\n');
    expect(readdirSync(dir)).toEqual(['report.json']);
    expect(path.dirname(tempPathFor(out))).toBe(dir);
  });

  it('a failed write (the output is a folder) keeps nothing half-written', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'wb-atomic-'));
    await expect(writeFileAtomic(dir, 'x')).rejects.toThrow();
    expect(readdirSync(path.dirname(dir)).some((f) => f.startsWith(`.${path.basename(dir)}.`))).toBe(false);
  });

  it('SIGINT while a 300 MB output is being written: the old output stays whole (or the new one is whole), the temporary file is removed', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'wb-atomic-'));
    const out = path.join(dir, 'big.json');
    const old = JSON.stringify({ old: 'x'.repeat(1000) });
    writeFileSync(out, old);
    const script = path.join(dir, 'writer.mts');
    writeFileSync(
      script,
      [
        `import { writeFileAtomic } from ${JSON.stringify(path.join(ROOT, 'src/cli/atomic-write.ts'))};`,
        `const text = JSON.stringify({ data: 'y'.repeat(300 * 1024 * 1024) });`,
        `process.stdout.write('writing\\n');`,
        `await writeFileAtomic(${JSON.stringify(out)}, text);`,
        `process.stdout.write('done\\n');`,
      ].join('\n'),
    );
    const child = spawn(process.execPath, ['--import', 'tsx', script], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let stdout = '';
    child.stdout.on('data', (d) => (stdout += d));
    const closed = new Promise<number | null>((resolve) => child.on('close', (c, sig) => resolve(sig ? -1 : c)));
    // Interrupt as soon as the temporary file exists, i.e. while the new text is being written.
    const tempSeen = await new Promise<boolean>((resolve) => {
      const poll = setInterval(() => {
        if (readdirSync(dir).some((f) => f.endsWith('.tmp'))) {
          clearInterval(poll);
          child.kill('SIGINT');
          resolve(true);
        } else if (child.exitCode !== null) {
          clearInterval(poll);
          resolve(false);
        }
      }, 2);
    });
    const code = await closed;
    expect(tempSeen).toBe(true);
    const now = readFileSync(out, 'utf8');
    if (stdout.includes('done')) expect(JSON.parse(now).data).toHaveLength(300 * 1024 * 1024);
    else {
      expect(code).not.toBe(0);
      expect(now).toBe(old);
    }
    expect(readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
    expect(existsSync(out)).toBe(true);
  }, 120_000);
});
