/**
 * Vitest global setup: builds the app once (production `vite build`) into a temporary folder
 * that the browser tests serve. The build runs in a child process so that Vitest's environment
 * (NODE_ENV=test, VITEST=...) cannot turn it into a development build. A failed build does not
 * stop unrelated test files: the browser tests report it.
 *
 * Two projects list this setup (`node` and `rves-measure`, vite.config.ts), and Vitest runs a
 * project's global setup once per project. A project cannot drop a setup it inherits from the
 * root config (`extends: true` merges the lists), so the build is shared instead: every setup of
 * one Vitest process (they all run in its main thread, one `globalThis`) awaits the same build,
 * and the last teardown removes the folder. A fresh process (a clean checkout, `.ci/run`)
 * builds again.
 *
 * While iterating on one test file, WORKBENCH_APP_DIST=DIR (a production build of this tree,
 * `npx vite build --outDir DIR`) skips the build: the tests serve DIR, which is left in place.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { CHROMIUM_PATH } from './harness.ts';
import { APP_DIST_ENV, viteBuild } from './vite-build.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The built app for the browser tests, or why there is none. */
    browserDist: { dir: string | null; error: string | null };
  }
}

type BrowserDist = { dir: string | null; error: string | null };

/** This process's build, shared by the projects' setups (see above). */
interface SharedBuild {
  dist: Promise<BrowserDist>;
  /** Setups whose teardown has not run yet; the last one removes the folder. */
  users: number;
}
const SHARED = Symbol.for('rlvr-workbench.browser-tests.build');
const shared = globalThis as typeof globalThis & { [SHARED]?: SharedBuild };

async function build(): Promise<BrowserDist> {
  const prebuilt = process.env[APP_DIST_ENV];
  if (prebuilt) {
    if (!existsSync(path.join(prebuilt, 'index.html')))
      return {
        dir: null,
        error: `${APP_DIST_ENV}=${prebuilt} holds no index.html: name a production build of the app (npx vite build --outDir DIR) or unset it to build one`,
      };
    process.stderr.write(`[browser tests] the build in ${APP_DIST_ENV}=${prebuilt} (not rebuilt)\n`);
    return { dir: prebuilt, error: null };
  }
  const dir = await mkdtemp(path.join(tmpdir(), 'workbench-dist-'));
  const t0 = performance.now();
  try {
    await viteBuild(['--outDir', dir]);
    process.stderr.write(`[browser tests] vite build -> ${dir} in ${Math.round(performance.now() - t0)} ms\n`);
    return { dir, error: null };
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    return { dir: null, error: err instanceof Error ? err.message : String(err) };
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  // Nothing to build for when the browser tests will skip anyway (no Chromium, not CI).
  if (!existsSync(CHROMIUM_PATH) && !process.env.CI) {
    project.provide('browserDist', { dir: null, error: null });
    return async () => {};
  }
  const first = shared[SHARED] === undefined;
  const build$ = (shared[SHARED] ??= { dist: build(), users: 0 });
  build$.users++;
  const dist = await build$.dist;
  if (!first && dist.dir)
    process.stderr.write(`[browser tests] project ${project.name}: the build of this run, ${dist.dir}\n`);
  project.provide('browserDist', dist);
  return async () => {
    if (--build$.users > 0) return;
    if (shared[SHARED] === build$) delete shared[SHARED];
    if (dist.dir && dist.dir !== process.env[APP_DIST_ENV]) await rm(dist.dir, { recursive: true, force: true });
  };
}
