/**
 * `vite build` of this repository in a child process, for the browser tests (global-setup.ts) and
 * the benchmark (bench/browser.ts): production mode, Vitest's variables removed, and
 * --bypass-lock, since each caller builds into its own temporary outDir and another build of
 * this tree at the same time must not fail it.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

export function viteBuild(args: string[]): Promise<void> {
  const env: NodeJS.ProcessEnv = { ...process.env, NODE_ENV: 'production' };
  for (const key of Object.keys(env)) if (key.startsWith('VITEST')) delete env[key];
  const vite = path.join(REPO_ROOT, 'node_modules', 'vite', 'bin', 'vite.js');
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [vite, 'build', ...args, '--emptyOutDir', '--logLevel', 'warn', '--bypass-lock'],
      {
        cwd: REPO_ROOT,
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve() : reject(new Error(`vite build ${args.join(' ')} exited with ${code}:\n${output}`)),
    );
  });
}
