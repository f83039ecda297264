import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runFileJson, toRunFile } from '../../src/core/runfile/export.ts';
import { DEFAULT_RUN_CONFIG, type SampleRecord } from '../../src/core/run/types.ts';
import { runHeader, sampleRecord, unstoredDataset } from '../helpers/run-records.ts';
import { browserSkipReason, suiteTitle } from './harness.ts';
import { type AppSession, screenshot, useApp } from './workbench-helpers.ts';

const N = 2000;
const HOSTILE = 1234;
const DIFFS = ['simple', 'moderate', 'challenging'] as const;

function sample(index: number): SampleRecord {
  const status = index % 17 === 0 ? 'error' : index % 53 === 0 ? 'timeout' : 'ok';
  return sampleRecord({
    index,
    sample: 0,
    questionId: 10_000 + index,
    dbId: `db_${index % 11}`,
    difficulty: DIFFS[index % 3]!,
    ex: status === 'ok' && index % 3 !== 1 ? 1 : 0,
    softF1: status === 'ok' ? (index % 10) / 10 : 0,
    status,
    error: status === 'error' ? `no such column: c${index}` : null,
    mutatedDb: index % 97 === 0,
    extraction: { rule: 'bird-separator', thinkStripped: false },
    predRowCount: status === 'ok' ? 1 : null,
    elapsedMs: index % 40,
    reward: 0,
    goldSql: 'SELECT name FROM t WHERE id = 1',
    sql:
      index === HOSTILE
        ? `SELECT '<img src=x onerror=alert(1)>' AS "<script>alert(2)</script>"`
        : `SELECT name FROM t WHERE id = ${index}`,
  });
}

/** A run of 2,000 samples (more than BIRD dev's 1,534) imported as a run file: the explorer stays small in the DOM and quick. */
describe.skipIf(browserSkipReason())(suiteTitle('the item explorer with 2,000 items'), () => {
  let { server, page } = {} as AppSession;
  useApp((s) => ({ server, page } = s), { hash: '#/runs' });
  const samples = Array.from({ length: N }, (_, i) => sample(i));
  const header = runHeader({
    id: 'big-run',
    name: 'two thousand',
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '2026-01-01T00:00:00.000Z',
    source: { kind: 'replay', predictions: { name: 'p.json', sha256: 'ab', bytes: 3 } },
    dataset: unstoredDataset(),
    subset: { description: 'all', indices: samples.map((s) => s.index) },
    config: DEFAULT_RUN_CONFIG,
    executor: 'test',
  });
  const options = () => page.locator('[data-testid="item-list"] [role="option"]');

  beforeAll(async () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'wb-big-')), 'big.run.json');
    writeFileSync(file, runFileJson(toRunFile(header, samples)));
    await page.getByTestId('import-run').setInputFiles(file);
    expect(await page.getByTestId('import-run-message').textContent()).toContain(
      'Imported run "two thousand" (2000 questions)',
    );
    await page.goto(`${server.url}#/run/big-run/items`);
    await options().first().waitFor();
  });

  it('lists 2,000 items with only the visible rows in the page', async () => {
    expect(await page.getByTestId('filter-count').textContent()).toContain('2,000 of 2,000 items');
    expect(await options().count()).toBeLessThan(60);
    expect(await options().first().getAttribute('aria-setsize')).toBe(String(N));
  });

  it('goes to the last item with End and opens it with Enter; j and k move one item', async () => {
    await page.getByTestId('item-list').focus();
    await page.keyboard.press('End');
    await page.keyboard.press('Enter');
    await page.locator(`[data-testid="item-detail"][data-index="${N - 1}"]`).waitFor();
    await page.keyboard.press('k');
    await page.keyboard.press('k');
    await page.keyboard.press('j');
    await page.keyboard.press('Enter');
    await page.locator(`[data-testid="item-detail"][data-index="${N - 2}"]`).waitFor();
    expect(await page.locator(`#item-${N - 2}\\.0`).isVisible()).toBe(true);
    expect(await options().count()).toBeLessThan(60);
  });

  it('filters by outcome, difficulty and database, and sorts', async () => {
    const count = async () =>
      Number((await page.getByTestId('filter-count').textContent())!.split(' of ')[0]!.replace(/,/g, ''));
    // The difficulty filter offers the run's own levels (BIRD's here), never Spider's.
    const levels = ['simple', 'moderate', 'challenging', 'easy', 'medium', 'hard', 'extra', 'unknown'].filter((d) =>
      samples.some((s) => s.difficulty === d),
    );
    expect(await page.getByTestId('filter-difficulty').locator('option').allTextContents()).toEqual(['all', ...levels]);
    expect(levels).not.toContain('extra');
    await page.getByTestId('filter-outcome').selectOption('error');
    await expect.poll(count).toBe(samples.filter((s) => s.status === 'error').length);
    await page.getByTestId('filter-difficulty').selectOption('moderate');
    await expect.poll(count).toBe(samples.filter((s) => s.status === 'error' && s.difficulty === 'moderate').length);
    await page.getByTestId('filter-db').selectOption('db_3');
    await expect
      .poll(count)
      .toBe(samples.filter((s) => s.status === 'error' && s.difficulty === 'moderate' && s.dbId === 'db_3').length);
    await page.getByRole('button', { name: 'clear filters' }).click();
    await page.getByTestId('filter-sort').selectOption('time');
    await page.getByText('descending').click();
    // The list re-renders after the click: wait for it rather than read the row that was first before.
    await expect.poll(async () => Number(await options().first().getAttribute('data-index')) % 40).toBe(39);
    await page.getByTestId('filter-sort').selectOption('index');
    await page.getByText('descending').click();
  });

  it('searches 2,000 items as the user types', async () => {
    await page.getByTestId('filter-search').fill('onerror');
    await page.waitForFunction(() =>
      document.querySelector('[data-testid="filter-count"]')?.textContent?.includes('1 of 2,000'),
    );
  });

  it('shows markup in predicted SQL as text and creates no element from it', async () => {
    await options().first().click();
    const sql = page.locator(`[data-testid="item-detail"][data-index="${HOSTILE}"] [data-testid="pred-sql"]`);
    expect(await sql.textContent()).toContain(`'<img src=x onerror=alert(1)>' AS "<script>alert(2)</script>"`);
    expect(await page.locator('#app img, #app script, #app iframe').count()).toBe(0);
    expect(await page.getByTestId('item-detail').textContent()).toContain('not stored');
    await screenshot(page, 'workbench-explorer-2000.png');
  });

  it('opens a link to an item beyond the first page in a fresh page, once the whole run is read, and moves on from it', async () => {
    await page.goto(`${server.url}#/run/big-run/items/1500.0`);
    await page.reload();
    await page.locator('[data-testid="item-detail"][data-index="1500"]').waitFor();
    expect(await page.getByTestId('explorer').getAttribute('data-complete')).toBe('true');
    expect(await page.getByTestId('filter-count').textContent()).toContain('2,000 of 2,000 items');
    await page.getByTestId('item-list').focus();
    await page.keyboard.press('j');
    await page.keyboard.press('Enter');
    await page.locator('[data-testid="item-detail"][data-index="1501"]').waitFor();
    expect(page.url()).toContain('/items/1501.0');
  });
});
