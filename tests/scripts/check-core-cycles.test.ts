/**
 * The folder-level cycle check (scripts/check-core-cycles.ts, `npm run check:cycles`, part of
 * `npm run check`): it finds a cycle planted in a temporary tree, names its files, exits
 * non-zero on it, checks every layer and src/ itself by default, and finds none in the repository.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  CYCLE_ROOTS,
  KNOWN_CYCLES,
  checkCycles,
  cycleText,
  findCycles,
  folderGraph,
} from '../../scripts/check-core-cycles.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');

function tree(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'wb-cycles-'));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    writeFileSync(path.join(dir, name), text);
  }
  return dir;
}

const run = (...roots: string[]) =>
  spawnSync(process.execPath, ['--import', 'tsx', 'scripts/check-core-cycles.ts', ...roots], {
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

  it('a ui-like tree whose context root builds a feature state that imports the context back fails, naming both files; the feature-owned shape passes', () => {
    const files = {
      'shell/keyed-state.ts': 'export class KeyedState {}\n',
      'context/workbench.svelte.ts':
        "import { KeyedState } from '../shell/keyed-state.ts';\nexport class Workbench { keyed = new KeyedState(); }\n",
      'generate/generate-state.svelte.ts':
        "import type { Workbench } from '../context/workbench.svelte.ts';\nexport const generateState = (wb: Workbench) => wb;\n",
      'generate/GeneratePage.svelte':
        '<script lang="ts">\n  import { generateState } from \'./generate-state.svelte.ts\';\n</script>\n',
      'main.ts': "import { Workbench } from './context/workbench.svelte.ts';\nexport const wb = new Workbench();\n",
    };
    const clean = tree(files);
    expect(checkCycles(clean).cycles).toEqual([]);
    // The context root builds the feature's state itself: the one import that closes the cycle.
    const planted = tree({
      ...files,
      'context/workbench.svelte.ts':
        "import { KeyedState } from '../shell/keyed-state.ts';\nimport { generateState } from '../generate/generate-state.svelte.ts';\nexport class Workbench { keyed = new KeyedState(); g = generateState; }\n",
    });
    const cli = run(clean, planted);
    expect(cli.status).toBe(1);
    expect(cli.stdout).toContain(`${path.relative(ROOT, clean)}: no folder-level import cycle`);
    expect(cli.stderr).toContain(`${path.relative(ROOT, planted)}: 1 folder-level import cycle`);
    expect(cli.stderr).toContain('context -> generate -> context');
    expect(cli.stderr).toContain('context/workbench.svelte.ts imports generate/generate-state.svelte.ts');
    expect(cli.stderr).toContain('generate/generate-state.svelte.ts imports context/workbench.svelte.ts');
  });

  it('a root that is not a folder is refused by name', () => {
    const cli = run('src/no-such-layer');
    expect(cli.status).toBe(1);
    expect(cli.stderr).toContain('src/no-such-layer: no such folder');
  });

  it('a known cycle passes only while its folders stay the same: one that grows, or an entry that no longer occurs, fails', () => {
    const dir = tree({
      'a/x.ts': "import { y } from '../b/y.ts';\nexport const x = y;\n",
      'b/y.ts': "import type { X } from '../a/t.ts';\nexport const y = 1 as X;\n",
      'a/t.ts': 'export type X = number;\n',
    });
    expect(checkCycles(dir, [['a', 'b']])).toMatchObject({ cycles: [], report: '', known: [['a', 'b']], stale: [] });
    // The cycle grows: a third folder joins it.
    writeFileSync(path.join(dir, 'b/y.ts'), "import { z } from '../c/z.ts';\nexport const y = z;\n");
    mkdirSync(path.join(dir, 'c'));
    writeFileSync(path.join(dir, 'c/z.ts'), "import type { X } from '../a/t.ts';\nexport const z = 1 as X;\n");
    const grown = checkCycles(dir, [['a', 'b']]);
    expect(grown.cycles).toEqual([['a', 'b', 'c', 'a']]);
    expect(grown.stale).toEqual([['a', 'b']]);
    // Broken: the entry no longer occurs.
    writeFileSync(path.join(dir, 'c/z.ts'), 'export const z = 1;\n');
    expect(checkCycles(dir, [['a', 'b']])).toMatchObject({ cycles: [], known: [], stale: [['a', 'b']] });
  });

  it('by default it checks every layer and src/ itself (the layers as nodes), and the repository has no cycle, none known', () => {
    expect([...CYCLE_ROOTS].sort()).toEqual(
      ['src', 'src/adapters', 'src/app', 'src/cli', 'src/core', 'src/report', 'src/ui', 'workers'].sort(),
    );
    expect(KNOWN_CYCLES).toEqual({});
    const cli = run();
    expect(cli.stderr).toBe('');
    expect(cli.status).toBe(0);
    expect(cli.stdout.trim().split('\n')).toEqual(CYCLE_ROOTS.map((r) => `${r}: no folder-level import cycle`));
    // src/ with the layers as nodes: the core imports no other layer.
    expect([...folderGraph(path.join(ROOT, 'src')).get('core')!.keys()]).toEqual([]);
  });

  it('src/ui: the context root imports no feature (each feature builds its own states through its registry), and the shared folders lie below every feature', () => {
    const graph = folderGraph(path.join(ROOT, 'src/ui'));
    expect(findCycles(graph).map((c) => cycleText(graph, c))).toEqual([]);
    for (const low of ['context', 'shell', 'widgets', 'engine'])
      expect([...graph.get(low)!.keys()].filter((to) => !['shell', 'widgets', 'cell-text.ts'].includes(to))).toEqual(
        [],
      );
  });
});
