import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { classifyFiles } from '../../src/core/import/classify-files.ts';
import {
  databaseDirs,
  detectLayout,
  isGoldCandidate,
  isQuestionCandidate,
  missingDatabases,
} from '../../src/core/import/layout.ts';
import { readSharedText, sharedData } from '../helpers/shared-data.ts';

/** Paths as a folder input gives them (`<folder>/<relative path>`), for a real folder under ../shared/data. */
function folderPaths(name: string): string[] {
  const root = sharedData(name);
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(dir)) {
      const p = join(dir, e);
      if (statSync(p).isDirectory()) walk(p);
      else out.push(`${name}/${relative(root, p)}`);
    }
  };
  walk(root);
  return out.sort();
}

describe('import layout recognition on the real folders', () => {
  it('BIRD: recognised as BIRD; the questions choice lists neither predictions nor dev_tables.json nor duplicates', () => {
    const paths = folderPaths('bird');
    expect(detectLayout(paths)).toMatchObject({ layout: 'bird', kind: 'bird' });
    const questions = paths.filter((p) => isQuestionCandidate(p, databaseDirs(paths)));
    expect(questions).toEqual(['bird/dev/dev.json', 'bird/minidev/mini_dev_sqlite.json']);
    expect(paths.filter(isGoldCandidate)).toEqual(['bird/dev/dev_gold.sql', 'bird/minidev/mini_dev_sqlite_gold.sql']);
  });

  it('Spider: recognised as Spider (not "BIRD"); dev.json and the two gold files, none of its 163 database folders', () => {
    const paths = folderPaths('spider');
    expect(detectLayout(paths)).toMatchObject({
      layout: 'spider',
      kind: 'spider',
      evidence: ['spider/tables.json', 'spider/dev_gold.sql', 'spider/train_gold.sql'],
    });
    expect(paths.filter((p) => isQuestionCandidate(p, databaseDirs(paths)))).toEqual(['spider/dev.json']);
    expect(paths.filter(isGoldCandidate)).toEqual(['spider/dev_gold.sql', 'spider/train_gold.sql']);
  });

  it('KaggleDBQA: recognised; one test file per database, no few-shot file, imported as custom', () => {
    const paths = folderPaths('kaggle-dbqa');
    expect(detectLayout(paths)).toMatchObject({ layout: 'kaggledbqa', kind: 'custom' });
    const q = paths.filter((p) => isQuestionCandidate(p, databaseDirs(paths)));
    expect(q.some((p) => p.endsWith('_fewshot.json') || p.endsWith('KaggleDBQA_tables.json'))).toBe(false);
    expect(q).toContain('kaggle-dbqa/examples/GeoNuclearData_test.json');
  });

  it('a folder with none of these files is not recognised', () => {
    expect(detectLayout(['mine/questions.json', 'mine/shop.sqlite'])).toEqual({
      layout: null,
      kind: 'custom',
      evidence: [],
    });
  });

  it('names the databases mini-dev uses that the folder lacks, with their question counts, before any import', () => {
    const paths = folderPaths('bird');
    const c = classifyFiles(paths);
    const missing = missingDatabases(
      readSharedText('bird', 'minidev', 'mini_dev_sqlite.json'),
      new Set(c.databases.keys()),
    )!;
    // 11 databases in mini-dev, 3 of them here: 8 missing, 360 of the 500 questions.
    expect(missing).toHaveLength(8);
    expect(missing.reduce((n, m) => n + m.questions, 0)).toBe(360);
    expect(missing.map((m) => m.dbId)).not.toContain('superhero');
    expect(missingDatabases('not json', new Set())).toBeNull();
  });
});
