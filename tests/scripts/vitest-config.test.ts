/**
 * The suite's vitest settings (vite.config.ts) that keep runs from repeating work.
 */
import { describe, expect, it } from 'vitest';

describe('the browser projects’ pre-bundled dependencies', () => {
  it('browser-engines pre-bundles all that the browser project does (its tests import the store and its workers too): none found mid-run, which reloads the page and runs the file again', async () => {
    const config = (await import('../../vite.config.ts')).default as {
      test: { projects: Array<{ test: { name: string }; optimizeDeps?: { include?: string[] } }> };
    };
    const include = (name: string) => config.test.projects.find((p) => p.test.name === name)?.optimizeDeps?.include;
    expect(include('browser')?.length).toBeGreaterThan(0);
    expect(include('browser-engines')).toEqual(expect.arrayContaining(include('browser')!));
  });
});
