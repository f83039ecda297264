/**
 * Vitest global setup: builds the app once (production `vite build`) into a temporary folder
 * that the browser tests serve. The build runs in a child process so that Vitest's environment
 * (NODE_ENV=test, VITEST=...) cannot turn it into a development build. A failed build does not
 * stop unrelated test files: the browser tests report it.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';
import { CHROMIUM_PATH } from './harness.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The built app for the browser tests, or why there is none. */
    browserDist: { dir: string | null; error: string | null };
  }
}

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

function viteBuild(outDir: string): Promise<void> {
  const env: NodeJS.ProcessEnv = { ...process.env, NODE_ENV: 'production' };
  for (const key of Object.keys(env)) if (key.startsWith('VITEST')) delete env[key];
  const vite = path.join(repoRoot, 'node_modules', 'vite', 'bin', 'vite.js');
  return new Promise((resolve, reject) => {
    // Its own temporary outDir, so Vite's lock against two builds of one project is not needed
    // (it fails the tests whenever another build of this tree runs at the same time).
    const child = spawn(process.execPath, [vite, 'build', '--outDir', outDir, '--emptyOutDir', '--logLevel', 'warn', '--bypass-lock'], {
      cwd: repoRoot,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`vite build exited with ${code}:\n${output}`))));
  });
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  // Nothing to build for when the browser tests will skip anyway (no Chromium, not CI).
  if (!existsSync(CHROMIUM_PATH) && !process.env.CI) {
    project.provide('browserDist', { dir: null, error: null });
    return async () => {};
  }
  const dir = await mkdtemp(path.join(tmpdir(), 'workbench-dist-'));
  const t0 = performance.now();
  try {
    await viteBuild(dir);
    project.provide('browserDist', { dir, error: null });
    process.stderr.write(`[browser tests] vite build -> ${dir} in ${Math.round(performance.now() - t0)} ms\n`);
  } catch (err) {
    project.provide('browserDist', { dir: null, error: err instanceof Error ? err.message : String(err) });
  }
  return async () => {
    await rm(dir, { recursive: true, force: true });
  };
}
