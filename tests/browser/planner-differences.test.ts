/**
 * The app's "SQLite versions" panel counts planner differences beside result differences: a gold
 * that times out on sql.js 1.17 (SQLite 3.54.1) is re-timed on sql.js 1.8.0 (SQLite 3.39.3),
 * where it is correct. Constructed data (written by SQLite itself in the test): a CTE joined on a
 * condition no index serves, which 3.54 re-runs for every joined row (minutes) and 3.39
 * materialises once (about 0.1 s); the run's timeout is 2 s, far from both. Photographed at
 * 1400×1000 and 390×844.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CO_ROUTINE_GOLD, MATERIALIZED_PRED, plannerDbRoot } from '../helpers/planner-db.ts';
import { browserSkipReason, suiteTitle } from './harness.ts';
import { type AppSession, importDataset, screenshot, startRun, useApp } from './workbench-helpers.ts';

/** questions.json, gold.sql and planner/planner.sqlite (constructed), and a predictions file: their paths. */
function constructed(): { files: string[]; predictions: string } {
  const root = plannerDbRoot();
  const questions = [
    {
      question_id: 0,
      db_id: 'planner',
      question: 'How many pairs?',
      evidence: '',
      SQL: CO_ROUTINE_GOLD,
      difficulty: 'simple',
    },
    {
      question_id: 1,
      db_id: 'planner',
      question: 'How many small rows?',
      evidence: '',
      SQL: 'SELECT count(*) FROM small',
      difficulty: 'simple',
    },
  ];
  writeFileSync(path.join(root, 'questions.json'), JSON.stringify(questions, null, 2));
  writeFileSync(path.join(root, 'gold.sql'), questions.map((q) => `${q.SQL}\t${q.db_id}`).join('\n') + '\n');
  const predictions = path.join(root, 'predictions.json');
  writeFileSync(
    predictions,
    JSON.stringify({
      '0': `${MATERIALIZED_PRED}\t----- bird -----\tplanner`,
      '1': 'SELECT count(*) FROM small\t----- bird -----\tplanner',
    }),
  );
  return {
    files: ['questions.json', 'gold.sql', 'planner/planner.sqlite'].map((f) => path.join(root, f)),
    predictions,
  };
}

describe.skipIf(browserSkipReason())(
  suiteTitle('planner differences in the SQLite versions panel (constructed data)'),
  { timeout: 240_000 },
  () => {
    let { page } = {} as AppSession;
    useApp((s) => ({ page } = s), { hash: '#/datasets' });

    it('a gold that times out on 3.54.1 and is correct on 3.39.3 is counted as a planner difference', async () => {
      await page.setViewportSize({ width: 1400, height: 1000 });
      const { files, predictions } = constructed();
      const imported = await importDataset(page, { kind: 'bird', name: 'Planner (constructed)', files });
      expect(imported.ok, imported.message).toBe(true);
      const run = await startRun(page, {
        datasetName: 'Planner (constructed)',
        predictions,
        name: 'planner',
        timeoutS: 2,
      });
      expect(run.error).toBeNull();
      await page.getByTestId('version-measure').click();
      await page.locator('[data-testid="version-check"][data-measured="true"]').waitFor({ timeout: 120_000 });
      expect(Number(await page.getByTestId('version-planner').getAttribute('data-count'))).toBe(1);
      expect(Number(await page.getByTestId('version-differing').getAttribute('data-count'))).toBe(0);
      const row = page.locator('[data-testid="version-differing-list"] li[data-planner="true"]');
      expect(await row.count()).toBe(1);
      expect(await row.textContent()).toMatch(/EX 0 \(timeout\) on 3\.54\.1, EX 1 on 3\.39\.3/);
      const panel = page.getByTestId('version-check');
      await panel.scrollIntoViewIfNeeded();
      await screenshot(page, 'planner-differences-1400x1000.png');
      await page.setViewportSize({ width: 390, height: 844 });
      await panel.scrollIntoViewIfNeeded();
      await screenshot(page, 'planner-differences-390x844.png');
    });
  },
);
