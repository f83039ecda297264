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

/** Runs the CLI exactly as its contract says: `npm run --silent cli -- ...`. */
export function runCli(args: string[], cwd = ROOT, env?: Record<string, string>): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn('npm', ['run', '--silent', 'cli', '--', ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'], env: env ? { ...process.env, ...env } : process.env });
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
