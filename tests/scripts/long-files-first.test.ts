/**
 * The suite's file order (tests/helpers/long-files-first.ts, vite.config.ts `sequence.sequencer`):
 * the longest files first across projects, from vitest's results cache when it has a file, else
 * from tests/helpers/file-durations.json; unknown files after them in vitest's order; the files of
 * a project without isolation together at the end; groups (groupOrder) kept apart.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TestSpecification, Vitest } from 'vitest/node';
import LongFilesFirstSequencer, { longFilesFirst } from '../helpers/long-files-first.ts';
import fileDurations from '../helpers/file-durations.json' with { type: 'json' };

const ROOT = path.resolve(import.meta.dirname, '../..');

/** Test double: the few fields of vitest's context and specifications the sequencer reads. */
function fakeRun(cached: Record<string, number>, sizes: Record<string, number>) {
  const ctx = {
    config: { root: ROOT, shard: undefined },
    cache: {
      getFileTestResults: (key: string) =>
        key in cached ? { duration: cached[key]! * 1000, failed: false } : undefined,
      getFileStats: (key: string) => ({ size: sizes[key] ?? 1 }),
    },
  } as unknown as Vitest;
  const projects = new Map<string, object>();
  const spec = (project: string, file: string, opts: { isolate?: boolean; groupOrder?: number } = {}) => {
    const p = projects.get(project) ?? {
      name: project,
      config: { isolate: opts.isolate ?? true, sequence: { groupOrder: opts.groupOrder ?? 0 } },
    };
    projects.set(project, p);
    return { project: p, moduleId: path.join(ROOT, file) } as unknown as TestSpecification;
  };
  return { ctx, spec };
}

const names = (specs: TestSpecification[]) => specs.map((s) => `${s.project.name}:${path.relative(ROOT, s.moduleId)}`);

describe('long files first', () => {
  it('orders by seconds, longest first, stable among equals and unknowns, shared ones last', () => {
    const secs: Record<string, number | undefined> = { a: 5, b: undefined, c: 50, d: 5, e: undefined, f: 70 };
    const shared = new Set(['f', 'g']);
    expect(
      longFilesFirst(
        ['a', 'b', 'g', 'c', 'd', 'e', 'f'],
        (x) => secs[x],
        (x) => shared.has(x),
      ),
    ).toEqual(['c', 'a', 'd', 'b', 'e', 'g', 'f']);
  });

  it('puts the committed long files of every project first, the cache overriding the committed seconds', async () => {
    const { ctx, spec } = fakeRun(
      { 'node:tests/b/small.test.ts': 400 },
      { 'data:tests/d/unknown-big.test.ts': 9000, 'data:tests/d/unknown-small.test.ts': 10 },
    );
    const sequencer = new LongFilesFirstSequencer(ctx);
    (sequencer as unknown as { durations: Record<string, number> }).durations = {
      'data:tests/d/long.test.ts': 300,
      'node:tests/b/long.test.ts': 250,
      'node:tests/b/small.test.ts': 5,
      'unit:tests/u/known.test.ts': 100,
    };
    const sorted = await sequencer.sort([
      spec('unit', 'tests/u/a.test.ts', { isolate: false }),
      spec('unit', 'tests/u/known.test.ts', { isolate: false }),
      spec('data', 'tests/d/unknown-small.test.ts'),
      spec('node', 'tests/b/small.test.ts'),
      spec('data', 'tests/d/unknown-big.test.ts'),
      spec('node', 'tests/b/long.test.ts'),
      spec('data', 'tests/d/long.test.ts'),
    ]);
    expect(names(sorted)).toEqual([
      'node:tests/b/small.test.ts', // 400 s in this machine's cache
      'data:tests/d/long.test.ts',
      'node:tests/b/long.test.ts',
      'data:tests/d/unknown-big.test.ts', // unknown: vitest's order, larger first
      'data:tests/d/unknown-small.test.ts',
      // The project without isolation: together, last, in vitest's order (its seconds unused).
      'unit:tests/u/a.test.ts',
      'unit:tests/u/known.test.ts',
    ]);
  });

  it('keeps groups (sequence.groupOrder) apart and in their order', async () => {
    const { ctx, spec } = fakeRun({}, {});
    const sequencer = new LongFilesFirstSequencer(ctx);
    (sequencer as unknown as { durations: Record<string, number> }).durations = { 'late:tests/l/x.test.ts': 999 };
    const sorted = await sequencer.sort([
      spec('late', 'tests/l/x.test.ts', { groupOrder: 1 }),
      spec('early', 'tests/e/y.test.ts', { groupOrder: 0 }),
    ]);
    expect(names(sorted)).toEqual(['early:tests/e/y.test.ts', 'late:tests/l/x.test.ts']);
  });

  it('names only files that exist, in projects the suite has, with positive seconds', () => {
    const projects = ['unit', 'data', 'node', 'browser', 'browser-engines'];
    const entries = Object.entries(fileDurations as Record<string, number>);
    expect(entries.length).toBeGreaterThan(10);
    for (const [key, seconds] of entries) {
      const [project, file] = key.split(':') as [string, string];
      expect(projects, key).toContain(project);
      expect(existsSync(path.join(ROOT, file)), key).toBe(true);
      expect(seconds, key).toBeGreaterThan(0);
    }
  });
});
