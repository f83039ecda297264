/**
 * `vite build` of this repository in a child process, for the browser tests (global-setup.ts) and
 * the benchmark (bench/browser.ts): production mode, Vitest's variables removed, and
 * --bypass-lock, since each caller builds into its own temporary outDir and another build of
 * this tree at the same time must not fail it.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp } from 'node:fs/promises';
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

/**
 * A production build of the app that a caller may copy instead of building it again: the
 * folder named by WORKBENCH_APP_DIST (the browser tests' global setup builds this tree once per
 * run; the node tests that start the bench or the GPU check pass it on), or null to build.
 */
export const APP_DIST_ENV = 'WORKBENCH_APP_DIST';

/**
 * The app's production build into `outDir`: a copy of $WORKBENCH_APP_DIST when it is set, else
 * `vite build`. Returns how the build was made, in words.
 */
export async function buildApp(outDir: string): Promise<string> {
  const prebuilt = process.env[APP_DIST_ENV];
  if (!prebuilt) {
    await viteBuild(['--outDir', outDir]);
    return 'vite build (production)';
  }
  if (!existsSync(path.join(prebuilt, 'index.html')))
    throw new Error(
      `${APP_DIST_ENV}=${prebuilt} holds no index.html: name a production build of the app (vite build --outDir DIR) or unset it to build one`,
    );
  await cp(prebuilt, outDir, { recursive: true });
  return `vite build (production), copied from ${APP_DIST_ENV}`;
}
