import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { IMPLEMENTED_KEYS, NOT_YET_MEASURED } from '../../bench/keys.ts';
import { ROOT } from '../helpers/cli.ts';

// Keeps `npm run bench` working: the quick pass runs end to end and writes every implemented
// key as a finite number. Nothing here is timed: the values depend on the machine.
describe('npm run bench -- --quick', () => {
  it('writes every implemented key as a finite number and lists the keys not yet measured', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'wb-bench-smoke-'));
    const out = path.join(dir, 'bench.json');
    const run = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
      const child = spawn('npm', ['run', '--silent', 'bench', '--', '--quick', '--out', out], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => (stdout += d));
      child.stderr.on('data', (d) => (stderr += d));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, stdout, stderr }));
    });
    expect(run.code, run.stderr).toBe(0);
    const got = JSON.parse(readFileSync(out, 'utf8')) as Record<string, unknown>;
    rmSync(dir, { recursive: true, force: true });
    for (const key of IMPLEMENTED_KEYS) {
      expect(typeof got[key], key).toBe('number');
      expect(Number.isFinite(got[key]), key).toBe(true);
    }
    expect(got.eval_items as number).toBeGreaterThan(0);
    expect(got.not_yet_measured).toEqual([...NOT_YET_MEASURED]);
    for (const key of NOT_YET_MEASURED) expect(got, key).not.toHaveProperty(key);
    // The printed table names every key, measured or not.
    for (const key of [...IMPLEMENTED_KEYS, ...NOT_YET_MEASURED]) expect(run.stdout).toContain(key);
  }, 600_000);
});
