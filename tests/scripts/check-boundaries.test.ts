/**
 * The layer and unused-export check (scripts/check-boundaries.ts, `npm run check:boundaries`,
 * part of `npm run check`): on a temporary tree it fails on a planted wrong-way import and a
 * planted unused export, naming each; it accepts the known wrong-way imports its baseline lists
 * and fails on a baseline entry that no longer occurs; on the repository it passes.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { allowed, checkBoundaries } from '../../scripts/check-boundaries.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');

function tree(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'wb-boundaries-'));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    writeFileSync(path.join(dir, name), text);
  }
  return dir;
}

const run = (...args: string[]) =>
  spawnSync(process.execPath, ['--import', 'tsx', 'scripts/check-boundaries.ts', ...args], {
    cwd: ROOT,
    encoding: 'utf8',
  });

/** A tree whose every import goes the right way and every export is imported. */
const CLEAN = {
  'src/core/a.ts': 'export const a = 1;\nexport type A = number;\n',
  'src/app/service.ts': "import { a, type A } from '../core/a.ts';\nexport const serve = (x: A) => x + a;\n",
  'src/adapters/store.ts': "import { serve } from '../app/service.ts';\nexport const store = () => serve(1);\n",
  'src/ui/main.ts':
    "import { store } from '../adapters/store.ts';\nimport { view } from './view.ts';\nview(store());\n",
  'src/ui/view.ts': "import { serve } from '../app/service.ts';\nexport const view = (n: number) => serve(n);\n",
  'src/cli/main.ts': "import { store } from '../adapters/store.ts';\nstore();\n",
};

describe('check-boundaries', () => {
  it('passes a tree whose imports follow the layers and whose exports are all imported', () => {
    const r = checkBoundaries(tree(CLEAN));
    expect(r).toEqual({ wrongWay: [], known: [], stale: [], unused: [] });
  });

  it('fails on a planted wrong-way import (a type-only one too), naming the file and the layers, and exits 1', () => {
    const dir = tree({
      ...CLEAN,
      'src/ui/view.ts':
        "import { serve } from '../app/service.ts';\nimport type { Store } from '../adapters/types.ts';\nexport const view = (n: number): Store => serve(n);\n",
      'src/adapters/types.ts': 'export type Store = number;\n',
      'src/app/leak.ts': "export { store as leak } from '../adapters/store.ts';\n",
      'src/core/up.ts': "import { leak } from '../app/leak.ts';\nleak();\n",
    });
    const r = checkBoundaries(dir);
    expect(r.wrongWay).toEqual([
      { from: 'src/app/leak.ts', to: 'src/adapters/store.ts' },
      { from: 'src/core/up.ts', to: 'src/app/leak.ts' },
      { from: 'src/ui/view.ts', to: 'src/adapters/types.ts' },
    ]);
    const cli = run(dir);
    expect(cli.status).toBe(1);
    expect(cli.stderr).toContain(
      'wrong-way import: src/ui/view.ts imports src/adapters/types.ts (ui may not import adapters)',
    );
    expect(cli.stderr).toContain('wrong-way import: src/core/up.ts imports src/app/leak.ts (core may not import app)');
  });

  it('fails on a planted unused export and --fix-exports drops its keyword; an export used by a test counts as used', () => {
    const dir = tree({
      ...CLEAN,
      'src/core/a.ts':
        'export const a = 1;\nexport type A = number;\nexport function helper() {\n  return a;\n}\nexport const forTests = 2;\n',
      'tests/a.test.ts': "import { forTests } from '../src/core/a.ts';\nforTests;\n",
    });
    expect(checkBoundaries(dir).unused).toEqual([
      { file: 'src/core/a.ts', name: 'helper', line: 3, fixAt: expect.any(Number) },
    ]);
    const cli = run(dir);
    expect(cli.status).toBe(1);
    expect(cli.stderr).toContain('unused export: src/core/a.ts:3 helper');
    expect(run(dir, '--fix-exports').status).toBe(0);
    expect(readFileSync(path.join(dir, 'src/core/a.ts'), 'utf8')).toContain('\nfunction helper() {');
    expect(run(dir).status).toBe(0);
  });

  it('counts a re-export as an export of its own file: one nothing imports from there is unused', () => {
    const dir = tree({
      ...CLEAN,
      'src/core/again.ts': "export { a as alias } from './a.ts';\nexport type { A } from './a.ts';\n",
      'src/app/user.ts': "import type { A } from '../core/again.ts';\nexport const user = (x: A) => x;\n",
      'src/ui/main.ts':
        "import { store } from '../adapters/store.ts';\nimport { view } from './view.ts';\nimport { user } from '../app/user.ts';\nview(store() + user(1));\n",
    });
    expect(checkBoundaries(dir).unused).toEqual([{ file: 'src/core/again.ts', name: 'alias', line: 1, fixAt: null }]);
  });

  it('accepts the wrong-way imports its baseline lists, and fails on a baseline entry that no longer occurs', () => {
    const dir = tree({
      ...CLEAN,
      'src/ui/view.ts':
        "import { store } from '../adapters/store.ts';\nimport { serve } from '../app/service.ts';\nexport const view = (n: number) => serve(n) + store();\n",
    });
    expect(run(dir).status).toBe(1);
    expect(run(dir, '--write-baseline').status).toBe(0);
    const ok = run(dir);
    expect(ok.status, ok.stderr).toBe(0);
    expect(ok.stdout).toContain('1 known ones');
    writeFileSync(
      path.join(dir, 'src/ui/view.ts'),
      "import { serve } from '../app/service.ts';\nexport const view = (n: number) => serve(n);\n",
    );
    const stale = run(dir);
    expect(stale.status).toBe(1);
    expect(stale.stderr).toContain('lists src/ui/view.ts -> src/adapters/store.ts, which no longer occurs');
  });

  it('the context roots alone may import adapters', () => {
    expect(allowed('src/ui/main.ts', 'src/adapters/x.ts')).toBe(true);
    expect(allowed('src/ui/browser-store.ts', 'src/adapters/x.ts')).toBe(true);
    expect(allowed('src/report/main.ts', 'src/adapters/x.ts')).toBe(true);
    expect(allowed('src/report/report-services.ts', 'src/adapters/x.ts')).toBe(false);
    expect(allowed('src/cli/main.ts', 'src/adapters/x.ts')).toBe(true);
    expect(allowed('src/cli/commands/eval.ts', 'src/adapters/x.ts')).toBe(false);
    expect(allowed('src/app/run-service.ts', 'src/adapters/x.ts')).toBe(false);
    expect(allowed('src/app/run-service.ts', 'src/ui/x.ts')).toBe(false);
    expect(allowed('workers/sql.worker.ts', 'src/adapters/x.ts')).toBe(true);
  });

  it('passes on the repository', () => {
    const r = run();
    expect(r.status, r.stderr).toBe(0);
  });
});
