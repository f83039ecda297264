/**
 * `buildApp` (tests/browser/vite-build.ts), which the bench and the GPU check use for the app's
 * production build: with WORKBENCH_APP_DIST naming a build, a copy of it (the node tests pass the
 * build their global setup made, so a run builds the app once); naming a folder that is not a
 * build, an error that names the variable and the folder. Without the variable it runs
 * `vite build` (tests/bench/bench-smoke.test.ts and `npm run bench` run that path).
 */
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { APP_DIST_ENV, buildApp } from '../browser/vite-build.ts';

const saved = process.env[APP_DIST_ENV];
afterEach(() => {
  if (saved === undefined) delete process.env[APP_DIST_ENV];
  else process.env[APP_DIST_ENV] = saved;
});

describe('buildApp with WORKBENCH_APP_DIST', () => {
  it('copies the named build, nested folders included, and says so', async () => {
    const built = mkdtempSync(path.join(tmpdir(), 'wb-app-dist-'));
    writeFileSync(path.join(built, 'index.html'), '<!doctype html><title>app</title>');
    mkdirSync(path.join(built, 'assets'));
    writeFileSync(path.join(built, 'assets', 'index-abc.js'), 'console.log(1)');
    process.env[APP_DIST_ENV] = built;
    const out = path.join(mkdtempSync(path.join(tmpdir(), 'wb-app-out-')), 'dist');
    expect(await buildApp(out)).toBe(`vite build (production), copied from ${APP_DIST_ENV}`);
    expect(readFileSync(path.join(out, 'index.html'), 'utf8')).toBe('<!doctype html><title>app</title>');
    expect(readFileSync(path.join(out, 'assets', 'index-abc.js'), 'utf8')).toBe('console.log(1)');
  });

  it('refuses a folder without index.html, naming the variable and the folder', async () => {
    const empty = mkdtempSync(path.join(tmpdir(), 'wb-app-dist-'));
    process.env[APP_DIST_ENV] = empty;
    const out = path.join(mkdtempSync(path.join(tmpdir(), 'wb-app-out-')), 'dist');
    await expect(buildApp(out)).rejects.toThrow(`${APP_DIST_ENV}=${empty} holds no index.html`);
  });
});
