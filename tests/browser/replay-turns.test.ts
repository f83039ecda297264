/**
 * A SkyRL eval dump replayed in the app: the dump (tests/helpers/trainer-dumps.ts, built from the
 * last real mini-dev prediction file) is picked as the predictions file of a new run on BIRD
 * mini-dev; the dashboard's Turns panel counts its episodes and the trainer's mean score, and a
 * sample's trajectory view shows the dump's turns (policy text, probe, observation), the
 * trainer's score and our EX, which equals the Node evaluation of the same SQL. Screenshots of
 * the trajectory view at 1400×1000 and 390×844 go to test-artifacts/.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNodeSqlPool } from '../../src/adapters/node/sql-worker-host.ts';
import { skyrlEpisode } from '../../src/core/formats/multi-turn-dump.ts';
import { parseGoldSql } from '../../src/core/formats/gold.ts';
import { parseQuestions } from '../../src/core/formats/questions.ts';
import { planReplay } from '../../src/core/run/replay.ts';
import { scoreRun } from '../../src/core/run/score-run.ts';
import { DEFAULT_RUN_CONFIG } from '../../src/core/run/types.ts';
import { DB_ROOT, MINIDEV_GOLD, MINIDEV_QUESTIONS, PREDICTION_FILES } from '../helpers/series-dumps.ts';
import { predictionsOf, skyrlLines, skyrlProbes } from '../helpers/trainer-dumps.ts';
import { seriousViolations } from './axe-check.ts';
import { browserSkipReason, suiteTitle } from './harness.ts';
import {
  type AppSession,
  dismissOfflineNote,
  importBirdMiniDev,
  runStored,
  screenshot,
  useApp,
} from './workbench-helpers.ts';

const LAST = PREDICTION_FILES.length - 1;
const lines = skyrlLines(LAST).map((l) => JSON.parse(l) as { output_response: string; score: number });
const preds = predictionsOf(LAST);
/** One sample of each kind: no probe, one probe, two probes (skyrlProbes(k) = k % 3). */
const PICKED = [0, 1, 2, 4];

describe.skipIf(browserSkipReason())(suiteTitle('a replayed SkyRL dump: turns and trainer score'), () => {
  let { server, page } = {} as AppSession;
  useApp((s) => ({ server, page } = s), { hash: '#/runs' });
  let runId = '';
  const pool = createNodeSqlPool({ dbRoot: DB_ROOT, workers: 1 });
  afterAll(() => pool.dispose());

  beforeAll(async () => {
    await page.setViewportSize({ width: 1400, height: 1000 });
    await importBirdMiniDev(page);
    const dir = mkdtempSync(path.join(tmpdir(), 'wb-replay-turns-'));
    const dump = path.join(dir, 'bird.jsonl');
    writeFileSync(dump, skyrlLines(LAST).join('\n') + '\n');
    runId = await runStored(page, 'BIRD mini-dev', dump, 'SkyRL dump');
  }, 600_000);

  it("counts the dump's episodes and the trainer's mean score in the Turns panel", async () => {
    await page.goto(`${server.url}#/run/${runId}`);
    await page.locator('[data-testid="dashboard"][data-loaded="true"]').waitFor();
    const panel = page.getByTestId('turns-panel');
    const count = async (key: string) => (await panel.locator(`[data-count="${key}"]`).textContent())?.trim();
    expect(await count('episodes')).toBe(String(preds.length));
    expect(await count('probes')).toBe(String(preds.reduce((n, _, k) => n + skyrlProbes(k), 0)));
    expect(await count('solution')).toBe(String(preds.length));
    const mean = lines.reduce((s, l) => s + l.score, 0) / lines.length;
    expect(await count('preset-reward')).toBe(mean.toFixed(3));
    expect(await panel.textContent()).toContain("mean trainer's score");
  });

  it("shows a sample's turns as the dump holds them, the trainer's score beside our EX (the Node evaluation of the same SQL)", async () => {
    const gold = parseGoldSql(readFileSync(MINIDEV_GOLD, 'utf8'), 'gold.sql');
    const questions = parseQuestions(readFileSync(MINIDEV_QUESTIONS, 'utf8'), 'mini_dev_sqlite.json');
    const ids = new Set(PICKED.map((k) => preds[k]!.q.question_id));
    const bird = planReplay({
      predictions: { name: 'predict.json', text: readFileSync(PREDICTION_FILES[LAST]!, 'utf8') },
      gold,
      questions,
    }).items.filter((it) => ids.has(it.questionId));
    const ref = (
      await scoreRun(bird, { ...DEFAULT_RUN_CONFIG, metrics: ['ex'], timeoutMs: 30_000 }, { executor: pool })
    ).records;
    for (const k of PICKED) {
      const { q } = preds[k]!;
      const index = questions.findIndex((x) => x.questionId === q.question_id);
      await page.goto(`${server.url}#/run/${runId}/items/${index}.0`);
      const view = page.locator(`[data-testid="item-detail"][data-index="${index}"] [data-testid="trajectory"]`);
      await view.waitFor();
      const dumped = skyrlEpisode(lines[k]!.output_response).turns;
      const texts = dumped.filter((t) => t.role === 'assistant').map((t) => t.text);
      const observations = dumped.filter((t) => t.role === 'observation').map((t) => t.text);
      const turns = view.getByTestId('turn');
      expect(await turns.count()).toBe(skyrlProbes(k) + 1);
      for (let n = 0; n < texts.length; n++) {
        const turn = turns.nth(n);
        expect(await turn.getByTestId('turn-text').textContent()).toBe(texts[n]);
        if (n < observations.length) {
          expect(await turn.getByTestId('turn-observation').textContent()).toBe(observations[n]);
          expect(await turn.getByTestId('turn-probe-not-kept').count()).toBe(1);
        } else expect(await turn.getByTestId('turn-last').count()).toBe(1);
      }
      expect(await view.getByTestId('trajectory-reward').textContent()).toBe(String(lines[k]!.score));
      const ex = ref.find((r) => r.questionId === q.question_id)!.ex;
      expect(await view.getByTestId('trajectory-ex').textContent()).toBe(String(ex));
      expect((await view.getByTestId('trajectory-facts').textContent())?.replace(/\s+/g, ' ')).toContain(
        "trainer's score",
      );
      expect(await view.getByTestId('trajectory-replay').textContent()).toContain(
        'replayed from a skyrl dump, stop reason stop',
      );
    }
    // The screenshots: the episode with two probes.
    const k = 2;
    const index = questions.findIndex((x) => x.questionId === preds[k]!.q.question_id);
    await page.goto(`${server.url}#/run/${runId}/items/${index}.0`);
    const view = page.locator(`[data-testid="item-detail"][data-index="${index}"] [data-testid="trajectory"]`);
    await view.waitFor();
    await dismissOfflineNote(page);
    await view.scrollIntoViewIfNeeded();
    await screenshot(page, 'replay-turns-trajectory-1400x1000.png', true);
    const wide = await seriousViolations(page);
    await page.setViewportSize({ width: 390, height: 844 });
    await view.scrollIntoViewIfNeeded();
    await screenshot(page, 'replay-turns-trajectory-390x844.png', true);
    const phone = await seriousViolations(page);
    const phoneWidth = await page.evaluate(() => document.documentElement.scrollWidth);
    await page.setViewportSize({ width: 1400, height: 1000 });
    expect({ wide, phone, phoneWidth }).toEqual({ wide: [], phone: [], phoneWidth: 390 });
  }, 300_000);
});
