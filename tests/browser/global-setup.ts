/**
 * Vitest global setup: builds the app once (production `vite build`) into a temporary folder
 * that the browser tests serve. The build runs in a child process so that Vitest's environment
 * (NODE_ENV=test, VITEST=...) cannot turn it into a development build. A failed build does not
 * stop unrelated test files: the browser tests report it.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { CHROMIUM_PATH } from './harness.ts';
import { viteBuild } from './vite-build.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The built app for the browser tests, or why there is none. */
    browserDist: { dir: string | null; error: string | null };
  }
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
    await viteBuild(['--outDir', dir]);
    project.provide('browserDist', { dir, error: null });
    process.stderr.write(`[browser tests] vite build -> ${dir} in ${Math.round(performance.now() - t0)} ms\n`);
  } catch (err) {
    project.provide('browserDist', { dir: null, error: err instanceof Error ? err.message : String(err) });
  }
  return async () => {
    await rm(dir, { recursive: true, force: true });
  };
}
