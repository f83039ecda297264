/**
 * The folder-level cycle check of src/core (scripts/check-core-cycles.ts, `npm run
 * check:cycles`, part of `npm run check`): it finds a cycle planted in a temporary tree,
 * names its files, exits non-zero on it, and finds none in src/core.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkCycles, cycleComponents, cycleText, findCycles, folderGraph } from '../../scripts/check-core-cycles.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');

function tree(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'wb-cycles-'));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    writeFileSync(path.join(dir, name), text);
  }
  return dir;
}

const run = (root: string) =>
  spawnSync(process.execPath, ['--import', 'tsx', 'scripts/check-core-cycles.ts', root], {
    cwd: ROOT,
    encoding: 'utf8',
  });

describe('check-core-cycles', () => {
  it('finds a planted three-folder cycle, type-only imports included, and names the files of every edge', () => {
    const dir = tree({
      'types.ts': 'export type Id = number;\n',
      'low/a.ts':
        "import type { Id } from '../types.ts';\nimport { b } from '../mid/b.ts';\nexport const a = (x: Id) => b(x);\n",
      'mid/b.ts': "export { c as b } from '../high/c.ts';\n",
      'high/c.ts': "import type { A } from '../low/types.ts';\nexport const c = (x: number): A => x;\n",
      'low/types.ts': 'export type A = number;\n',
      'solo/d.ts': "import { a } from '../low/a.ts';\nexport const d = a;\n",
    });
    expect([...folderGraph(dir).get('low')!.keys()].sort()).toEqual(['mid', 'types.ts']);
    const { cycles, report } = checkCycles(dir);
    expect(cycles).toEqual([['high', 'low', 'mid', 'high']]);
    expect(report).toContain('high/c.ts imports low/types.ts');
    expect(report).toContain('low/a.ts imports mid/b.ts');
    expect(report).toContain('mid/b.ts imports high/c.ts');
    const cli = run(dir);
    expect(cli.status).toBe(1);
    expect(cli.stderr).toContain('1 folder-level import cycle');
    expect(cli.stderr).toContain('high -> low -> mid -> high');
  });

  it('a tree whose folders import downwards only passes', () => {
    const dir = tree({
      'low/a.ts': 'export const a = 1;\n',
      'high/b.ts': "import { a } from '../low/a.ts';\nimport { x } from './x.ts';\nexport const b = a + x;\n",
      'high/x.ts': 'export const x = 2;\n',
    });
    expect(checkCycles(dir).cycles).toEqual([]);
    expect(run(dir).status).toBe(0);
  });

  it('src/core has no folder-level cycle', () => {
    const { cycles, report } = checkCycles(path.join(ROOT, 'src/core'));
    expect(report).toBe('');
    expect(cycles).toEqual([]);
  });

  it('src/ui: only the context root closes a cycle (it builds every screen state, every screen reads it); the feature folders import one another without one', () => {
    const graph = folderGraph(path.join(ROOT, 'src/ui'));
    // shell, widgets and engine are below every feature: on no cycle even with the root.
    const onCycle = cycleComponents(graph).flat();
    for (const low of ['shell', 'widgets', 'engine']) expect(onCycle).not.toContain(low);
    graph.delete('context');
    for (const edges of graph.values()) edges.delete('context');
    expect(findCycles(graph).map((c) => cycleText(graph, c))).toEqual([]);
  });
});
