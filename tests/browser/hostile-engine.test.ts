import { copyFileSync, mkdirSync, mkdtempSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { NativeDatabase } from '../helpers/native-sqlite.ts';
import { browserSkipReason, suiteTitle } from './harness.ts';
import { type AppSession, importDataset, useApp } from './workbench-helpers.ts';

/**
 * The attacks on the SQL engine, in the built app (the same engine and pool as the CLI):
 * an R-VES run with a writing prediction, a result of large values, a WAL database imported
 * from a folder. The page stays responsive, the run finishes, each item says what happened.
 */
const QUESTIONS = [
  // 0: a DELETE that scores EX 1 against a gold with no rows, so R-VES times it.
  {
    db_id: 'eng',
    question: 'Which keys are above 100?',
    query: 'SELECT x FROM k WHERE x > 100',
    pred: 'DELETE FROM k',
  },
  // 1: would read 0 rows had item 0's timing repetitions left the DELETE behind.
  { db_id: 'eng', question: 'How many keys?', query: 'SELECT 3', pred: 'SELECT count(*) FROM k' },
  // 2: a join without its condition over 1 KB texts: 4,000,000 rows, about 8 GB of text.
  { db_id: 'eng', question: 'Texts?', query: 'SELECT 1', pred: 'SELECT a.s, b.s FROM t a, t b' },
  // 3: the next item scores normally.
  { db_id: 'eng', question: 'How many texts?', query: 'SELECT 2000', pred: 'SELECT count(*) FROM t' },
];

describe.skipIf(browserSkipReason())(suiteTitle('hostile SQL against the engine in the app'), () => {
  let { server, page } = {} as AppSession;
  useApp((s) => ({ server, page } = s), { hash: '#/datasets' });
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'wb-hostile-engine-'));
    mkdirSync(path.join(dir, 'eng'));
    const db = new NativeDatabase(path.join(dir, 'eng', 'eng.sqlite'));
    db.exec(
      'CREATE TABLE k(x INTEGER); INSERT INTO k VALUES (1), (2), (3); CREATE TABLE t(id INTEGER PRIMARY KEY, s TEXT)',
    );
    const ins = db.prepare('INSERT INTO t VALUES (?, ?)');
    db.transaction(() => {
      for (let i = 1; i <= 2000; i++) ins.run(i, String(i).padStart(1000, 'x'));
    })();
    db.close();
    writeFileSync(path.join(dir, 'eng', 'questions.json'), JSON.stringify(QUESTIONS.map(({ pred: _p, ...q }) => q)));
    writeFileSync(path.join(dir, 'preds.sql'), QUESTIONS.map((q) => q.pred).join('\n') + '\n');
  }, 180_000);

  it('a folder whose database has a -wal with committed rows beside it is refused at import, naming the -wal and the checkpoint', async () => {
    const src = path.join(dir, 'wal-src');
    mkdirSync(src);
    const live = new NativeDatabase(path.join(src, 'w.sqlite'));
    live.pragma('journal_mode = WAL');
    live.pragma('wal_autocheckpoint = 0');
    live.exec('CREATE TABLE t(x)');
    live.pragma('wal_checkpoint(TRUNCATE)');
    live.exec('INSERT INTO t VALUES (1), (2), (3)');
    // The folder a user would pick: the database as it is on disk while its writer is open.
    const folder = path.join(dir, 'wal-folder');
    mkdirSync(path.join(folder, 'w'), { recursive: true });
    copyFileSync(path.join(src, 'w.sqlite'), path.join(folder, 'w', 'w.sqlite'));
    copyFileSync(path.join(src, 'w.sqlite-wal'), path.join(folder, 'w', 'w.sqlite-wal'));
    live.close();
    expect(statSync(path.join(folder, 'w', 'w.sqlite-wal')).size).toBeGreaterThan(56);
    writeFileSync(
      path.join(folder, 'questions.json'),
      JSON.stringify([{ db_id: 'w', question: 'How many?', query: 'SELECT count(*) FROM t' }]),
    );

    const r = await importDataset(page, { kind: 'custom', name: 'wal', folder });
    expect(r.ok).toBe(false);
    expect(r.message).toMatch(
      /^Import failed: .*w\/w\.sqlite-wal \([\d,]+ bytes\) may hold committed changes that are not in .*w\/w\.sqlite yet/,
    );
    expect(r.message).toContain('PRAGMA wal_checkpoint(TRUNCATE)');
    expect(await page.getByTestId('dataset-list').locator('li', { hasText: 'wal' }).count()).toBe(0);
  });

  it('an R-VES run with a writing prediction and a result of large values finishes; each item says what happened', async () => {
    const files = [path.join(dir, 'eng', 'questions.json'), path.join(dir, 'eng', 'eng.sqlite')];
    expect((await importDataset(page, { kind: 'custom', name: 'engine attacks', files })).ok).toBe(true);

    await page.getByTestId('nav-runs').click();
    const select = page.getByTestId('run-dataset');
    await select.selectOption(
      (await select.locator('option', { hasText: 'engine attacks' }).first().getAttribute('value'))!,
    );
    await page.getByTestId('run-predictions').setInputFiles(path.join(dir, 'preds.sql'));
    // The form may redraw while the predictions file is read (its check is asynchronous), which
    // once undid a click (a full-suite run: "Clicking the checkbox did not change its state"):
    // tick until it stays ticked.
    const rves = page.getByRole('group', { name: 'Metrics' }).getByLabel(/R-VES/);
    await expect
      .poll(async () => {
        if (!(await rves.isChecked())) await rves.click();
        return rves.isChecked();
      })
      .toBe(true);
    await page.getByTestId('run-name').fill('attacks');
    await page.getByTestId('run-start').click();
    // The page keeps rendering frames while the workers evaluate (the work is off the main thread).
    await page.getByTestId('run-progress').waitFor();
    expect(
      await page.evaluate(() => new Promise<boolean>((resolve) => requestAnimationFrame(() => resolve(true)))),
    ).toBe(true);
    const end = page.locator('[data-testid="dashboard"][data-loaded="true"], [data-testid="run-error"]');
    await end.first().waitFor({ timeout: 180_000 });
    expect(await page.getByTestId('run-error').count()).toBe(0);
    const runId = decodeURIComponent(/#\/run\/([^/]+)$/.exec(page.url())![1]!);

    const shown = async (index: number) => {
      await page.goto(`${server.url}#/run/${encodeURIComponent(runId)}/items/${index}.0`);
      const detail = page.locator(`[data-testid="item-detail"][data-index="${index}"]`);
      await detail.waitFor();
      const error = detail.getByTestId('item-error');
      return {
        status: await detail.getAttribute('data-status'),
        ex: await detail.getAttribute('data-ex'),
        error: (await error.count()) > 0 ? ((await error.textContent()) ?? '').trim() : null,
      };
    };
    expect(await shown(0)).toEqual({ status: 'ok', ex: '1', error: null });
    expect(await shown(1)).toEqual({ status: 'ok', ex: '1', error: null });
    const big = await shown(2);
    expect(big).toMatchObject({ status: 'error', ex: '0' });
    expect(big.error).toMatch(/^prediction: the result's values take more than 256 MiB \(the limit per result;/);
    expect(await shown(3)).toEqual({ status: 'ok', ex: '1', error: null });
  }, 240_000);
});
