import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { RunFile, SampleRecord } from '../../src/core/run/types.ts';
import { NativeDatabase, type NativeDb } from '../helpers/native-sqlite.ts';
import { minidevQuestions, sharedData } from '../helpers/shared-data.ts';
import { browserSkipReason, suiteTitle } from './harness.ts';
import {
  type AppSession,
  dismissOfflineNote,
  downloadFrom,
  importDataset,
  screenshot,
  startRun,
  useApp,
} from './workbench-helpers.ts';

/**
 * The WAL case of the verdict cache in the app (IndexedDB, Chromium): the app stores a database
 * by the sha256 of its bytes at import, and refuses a folder whose database has a `-wal` with
 * committed frames. So a database changed in its `-wal` after a cached run can never be scored
 * from the cache with the old verdicts: its import is refused (nothing stored changes, the first
 * run's verdicts stay right for the bytes they came from), and once the changes are folded into
 * the main file the copy is other bytes, with verdicts of its own.
 */

/** The change, committed into the `-wal` only: one more superhero, with an id no question names otherwise. */
const CHANGE = "INSERT INTO superhero (id, superhero_name) VALUES (100000, 'WAL hero')";

/** Questions on mini-dev's superhero database (custom format) and a prediction for each, by position. */
function questions(): Array<{ db_id: string; question: string; query: string; pred: string }> {
  const mini = (id: number) => {
    const q = minidevQuestions().find((x) => x.question_id === id)!;
    return { db_id: 'superhero', question: q.question, query: q.SQL };
  };
  return [
    // Mini-dev's own gold as its prediction: EX 1 on both versions.
    { ...mini(717), pred: mini(717).query },
    // Another mini-dev question, a prediction that differs from its gold.
    { ...mini(724), pred: "SELECT superhero_name FROM superhero WHERE superhero_name LIKE 'A%'" },
    // EX 1 on the database as imported (750 rows), EX 0 once the change is in.
    {
      db_id: 'superhero',
      question: 'How many superheroes?',
      query: 'SELECT COUNT(*) FROM superhero',
      pred: 'SELECT 750',
    },
    // EX 0 on the database as imported (no such row), EX 1 once the change is in.
    {
      db_id: 'superhero',
      question: 'Which superhero has the id 100000?',
      query: 'SELECT superhero_name FROM superhero WHERE id = 100000',
      pred: "SELECT 'WAL hero'",
    },
  ];
}

/** A dataset folder (custom format: questions.json and superhero/superhero.sqlite) with `db` as its database. */
function datasetFolder(db: string): string {
  const folder = mkdtempSync(path.join(tmpdir(), 'wb-vcache-wal-'));
  mkdirSync(path.join(folder, 'superhero'));
  copyFileSync(db, path.join(folder, 'superhero', 'superhero.sqlite'));
  writeFileSync(path.join(folder, 'questions.json'), JSON.stringify(questions().map(({ pred: _p, ...q }) => q)));
  return folder;
}

/** Per-item verdicts without how they were obtained (`goldReused`, the time of the execution). */
const verdicts = (samples: readonly SampleRecord[]) =>
  samples
    .map(({ goldReused: _g, elapsedMs: _e, ...rest }) => rest)
    .sort((a, b) => a.index - b.index || a.sample - b.sample);

describe.skipIf(browserSkipReason())(
  suiteTitle('the verdict cache and a database changed in its -wal, in the app'),
  () => {
    let { page } = {} as AppSession;
    useApp((s) => ({ page } = s), { hash: '#/datasets' });
    let dir: string;
    let folder: string;
    let predictions: string;
    /** The writer's working copy: WAL mode, the change committed in its -wal, not checkpointed. */
    let live: NativeDb;
    let first: RunFile;

    beforeAll(() => {
      dir = mkdtempSync(path.join(tmpdir(), 'wb-vcache-wal-src-'));
      predictions = path.join(dir, 'preds.sql');
      writeFileSync(
        predictions,
        questions()
          .map((q) => q.pred)
          .join('\n') + '\n',
      );
      const working = path.join(dir, 'superhero.sqlite');
      copyFileSync(sharedData('bird', 'databases', 'superhero', 'superhero.sqlite'), working);
      folder = datasetFolder(working);
    });

    async function run(datasetName: string, name: string): Promise<RunFile> {
      const started = await startRun(page, { datasetName, predictions, name, onlyStored: true });
      expect(started.error).toBeNull();
      await page.getByTestId('nav-runs').click();
      const exported = await downloadFrom(page, `[data-run-id="${started.runId}"] [data-testid="export-run"]`);
      return JSON.parse(exported.text) as RunFile;
    }

    const datasetsShown = async () => {
      await page.getByTestId('nav-datasets').click();
      await page.getByTestId('dataset-list').waitFor();
      return (await page.getByTestId('dataset-list').locator('li').allInnerTexts()).map((t) => t.replace(/\s+/g, ' '));
    };

    it('a cached run, then the same folder with committed changes in its -wal: refused by name, nothing stored changes, a re-run from the cache equals the first', async () => {
      expect((await importDataset(page, { kind: 'custom', name: 'Alpha heroes', folder })).ok).toBe(true);
      first = await run('Alpha heroes', 'alpha, first');
      expect(first.samples.map((s) => [s.index, s.ex, s.status])).toEqual([
        [0, 1, 'ok'],
        [1, 0, 'ok'],
        [2, 1, 'ok'],
        [3, 0, 'ok'],
      ]);
      expect(first.run.executions).toMatchObject({ fromCache: 0 });

      // The writer commits the change in WAL mode without a checkpoint; the folder is copied as it
      // is on disk while the writer is open (closing it would fold the -wal into the file).
      live = new NativeDatabase(path.join(dir, 'superhero.sqlite'));
      live.pragma('journal_mode = WAL');
      live.pragma('wal_autocheckpoint = 0');
      live.pragma('wal_checkpoint(TRUNCATE)');
      live.exec(CHANGE);
      for (const f of ['superhero.sqlite', 'superhero.sqlite-wal'])
        copyFileSync(path.join(dir, f), path.join(folder, 'superhero', f));
      expect(statSync(path.join(folder, 'superhero', 'superhero.sqlite-wal')).size).toBeGreaterThan(56);

      const before = await datasetsShown();
      expect(before).toHaveLength(1);
      expect(before[0]).toContain('Alpha heroes');
      const refused = await importDataset(page, { kind: 'custom', name: 'Alpha heroes again', folder });
      expect(refused.ok).toBe(false);
      expect(refused.message).toMatch(
        /^Import failed: .*superhero\/superhero\.sqlite-wal \([\d,]+ bytes\) may hold committed changes that are not in .*superhero\/superhero\.sqlite yet/,
      );
      expect(refused.message).toContain('PRAGMA wal_checkpoint(TRUNCATE)');
      expect(refused.message).toMatch(/import the folder again$/);
      await dismissOfflineNote(page);
      for (const [width, height] of [
        [1400, 1000],
        [390, 844],
      ] as const) {
        await page.setViewportSize({ width, height });
        await page.getByTestId('import-error').scrollIntoViewIfNeeded();
        await screenshot(page, `verdict-cache-wal-refused-${width}.png`);
      }
      await page.setViewportSize({ width: 1366, height: 768 });
      expect(await datasetsShown()).toEqual(before);

      // The first dataset and its run are as they were; a re-run takes every verdict from the cache.
      await page.getByTestId('nav-runs').click();
      const stored = await downloadFrom(page, `[data-run-id="${first.run.id}"] [data-testid="export-run"]`);
      expect(JSON.parse(stored.text)).toEqual(first);
      const again = await run('Alpha heroes', 'alpha, again');
      expect(again.run.executions).toMatchObject({ fromCache: 4, executed: 0 });
      expect(verdicts(again.samples)).toEqual(verdicts(first.samples));
    });

    it('the changes checkpointed into the main file, imported as a new dataset: new verdicts, none from the cache, equal to a run without it', async () => {
      // Closing the writer folds its -wal into the main file (and removes the -wal).
      live.close();
      expect(() => statSync(path.join(dir, 'superhero.sqlite-wal'))).toThrow();
      const folded = datasetFolder(path.join(dir, 'superhero.sqlite'));
      expect(readFileSync(path.join(folded, 'superhero', 'superhero.sqlite'))).not.toEqual(
        readFileSync(sharedData('bird', 'databases', 'superhero', 'superhero.sqlite')),
      );
      expect((await importDataset(page, { kind: 'custom', name: 'Folded copy', folder: folded })).ok).toBe(true);

      const cached = await run('Folded copy', 'folded, with the cache');
      expect(cached.run.executions).toMatchObject({ fromCache: 0, executed: 4 });
      // The verdicts of the changed bytes: the two questions the change decides flip.
      expect(cached.samples.map((s) => [s.index, s.ex, s.status])).toEqual([
        [0, 1, 'ok'],
        [1, 0, 'ok'],
        [2, 0, 'ok'],
        [3, 1, 'ok'],
      ]);

      await page.getByTestId('nav-runs').click();
      await page.getByTestId('run-verdict-cache').uncheck();
      try {
        const uncached = await run('Folded copy', 'folded, without the cache');
        expect(uncached.run.config.verdictCache).toBe(false);
        expect(uncached.run.executions).toMatchObject({ fromCache: 0 });
        expect(verdicts(cached.samples)).toEqual(verdicts(uncached.samples));
      } finally {
        await page.getByTestId('nav-runs').click();
        await page.getByTestId('run-verdict-cache').check();
      }
    });
  },
);
