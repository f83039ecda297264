import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

export const ROOT = path.resolve(import.meta.dirname, '../..');

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs the CLI exactly as its contract says: `npm run --silent cli -- ...`. Each run gets a
 * cache folder of its own (XDG_CACHE_HOME), so no run takes verdicts from an earlier test's
 * run; tests of the verdict cache name theirs with --cache. `env` adds to the environment.
 */
export function runCli(args: string[], cwd = ROOT, env?: Record<string, string>): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const childEnv = { ...process.env, XDG_CACHE_HOME: mkdtempSync(path.join(tmpdir(), 'wb-cli-cache-')), ...env };
    const child = spawn('npm', ['run', '--silent', 'cli', '--', ...args], {
      cwd,
      env: childEnv,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

export function tempFile(name: string): string {
  return path.join(mkdtempSync(path.join(tmpdir(), 'wb-cli-')), name);
}

export function readJson<T = any>(file: string): T {
  return JSON.parse(readFileSync(file, 'utf8')) as T;
}
