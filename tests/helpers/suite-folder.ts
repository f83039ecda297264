/**
 * Vitest global setup of the `unit`, `data` and `node` projects: one temporary folder per test
 * run, given to the test files as `inject('suiteFolder')` and removed at the end. References
 * that several files compare with (tests/helpers/eval-reference.ts, series-reference.ts) are
 * computed once per run and kept there; a new run starts empty, so nothing computed by older
 * code is ever read.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** This run's folder for shared references. */
    suiteFolder: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const dir = await mkdtemp(path.join(tmpdir(), 'wb-suite-'));
  project.provide('suiteFolder', dir);
  return () => rm(dir, { recursive: true, force: true });
}
