/**
 * The judge checks in the app (Rubric runs screen, headless Chromium) against the BIASED JUDGE
 * DOUBLE (tests/rubric/helpers/judge-checks-fixture.ts: a test double of an LLM judge on a
 * loopback OpenAI server, with planted faults): a run of the fixture dataset is stored, then the
 * checks panel finds exactly the planted 10 % flips and the planted position bias, and every
 * aggregation's preferred-vs-perturbed numbers equal a direct count.
 */
import { writeFileSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AGGREGATION_IDS } from '../../src/core/rubric/aggregations.ts';
import { samplePairs, type CheckSample } from '../../src/core/rubric/judge-checks.ts';
import { parseRarJsonl } from '../../src/core/rubric/rar-dataset.ts';
import { pairCompletions } from '../../src/core/rubric/rar-run.ts';
import { tempFile } from '../helpers/cli.ts';
import {
  completionLines,
  datasetLines,
  flipKey,
  pairKey,
  quality,
  startBiasedJudgeDouble,
  type BiasedJudgeDouble,
} from '../rubric/helpers/judge-checks-fixture.ts';
import { browserSkipReason, suiteTitle, type PageWatch, type StaticServer } from './harness.ts';
import { closeAppAfter, dismissOfflineNote, openApp, screenshot } from './workbench-helpers.ts';

const jsonl = (rows: readonly unknown[]) => rows.map((r) => JSON.stringify(r)).join('\n') + '\n';
const rows = parseRarJsonl(jsonl(datasetLines()), 'checks-fixture.jsonl');
const samples: CheckSample[] = pairCompletions(jsonl(completionLines()), 'completions.jsonl', rows).map((j) => ({
  row: j.row.id,
  index: j.row.index,
  sample: j.sample,
  question: j.row.question,
  reference: j.row.referenceAnswer,
  rubric: j.row.rubric,
  response: j.completion,
}));
/** Every tenth (sample, criterion) flips on its second ask; every fourth pair of a row's samples follows position A. */
const allCriteria = samples.flatMap((s) => s.rubric.items.map((item) => ({ s, item })));
const plantedFlips = allCriteria.filter((_, n) => n % 10 === 3);
const swapPairs = samplePairs(samples);
const plantedBias = swapPairs.filter((_, n) => n % 4 === 1);

describe.skipIf(browserSkipReason())(suiteTitle('judge checks in the app, against a biased judge double'), () => {
  let app: StaticServer;
  let judge: BiasedJudgeDouble;
  let browser: Browser;
  let page: Page;
  let watch: PageWatch;

  beforeAll(async () => {
    judge = await startBiasedJudgeDouble({
      flips: new Set(plantedFlips.map(({ s, item }) => flipKey(s.response, item.title))),
      biasedPairs: new Set(plantedBias.map((p) => pairKey(p.x, p.y))),
    });
    ({ server: app, browser, page, watch } = await openApp());
  });
  // The double serves no /v1/models (the app accepts such a server): the browser logs that one 404.
  closeAppAfter(() => ({ server: app, browser, watch }), { expected: /status of 404 \(Not Found\)/ });
  afterAll(async () => {
    await judge?.close();
  });

  it('finds the planted flips and position bias; preferred-vs-perturbed equals a direct count', async () => {
    const dataset = tempFile('checks-fixture.jsonl');
    writeFileSync(dataset, jsonl(datasetLines()));
    const completions = tempFile('checks-completions.jsonl');
    writeFileSync(completions, jsonl(completionLines()));
    await page.goto(app.url + '#/rubric-runs');
    await page.getByTestId('rar-file').setInputFiles(dataset);
    await expect
      .poll(async () => (await page.getByTestId('rar-message').textContent()) ?? '')
      .toContain('5 questions, 40 criteria');
    await page.getByTestId('rar-policy-replay').check();
    await page.getByTestId('rar-completions').setInputFiles(completions);
    await page.getByTestId('rar-n').fill('3');
    await page.getByTestId('rar-judge-choice').selectOption('openai');
    await page.getByTestId('judge-openai-url').fill(judge.url.replace(/\/v1$/, ''));
    await page.getByTestId('judge-openai-model').fill('biased-double');
    await page.getByTestId('rar-name').fill('checked');
    await page.getByTestId('rar-start').click();
    const row = page.locator('[data-testid="rar-runs"] tr[data-name="checked"]');
    await expect
      .poll(async () => ((await row.count()) > 0 ? await row.locator('[data-col="status"]').textContent() : ''), {
        timeout: 90_000,
      })
      .toBe('done');
    await page.getByTestId('judge-checks').waitFor();

    await page.getByTestId('checks-repeat').fill('3');
    await page.getByTestId('checks-start').click();
    const overall = page.getByTestId('checks-repeat-overall');
    await overall.waitFor({ timeout: 120_000 });
    expect(await page.getByTestId('checks-error').count()).toBe(0);

    // Repeat: exactly the planted 12 of 120 (sample, criterion) pairs flip, per criterion as planted.
    expect(allCriteria).toHaveLength(120);
    expect(plantedFlips).toHaveLength(12);
    expect([await overall.getAttribute('data-flipped'), await overall.getAttribute('data-n')]).toEqual(['12', '120']);
    expect(await overall.textContent()).toContain('10.0 %');
    const perCriterion = await page
      .locator('[data-testid="checks-repeat-criteria"] tbody tr')
      .evaluateAll((trs) =>
        trs.map((tr) => [
          (tr as HTMLElement).dataset.group,
          (tr as HTMLElement).dataset.criterion,
          tr.querySelector('[data-col="flipped"]')!.textContent!.trim(),
        ]),
      );
    expect(perCriterion).toEqual(
      rows.flatMap((r) =>
        r.rubric.items.map((item) => [
          r.id,
          item.id,
          `${plantedFlips.filter(({ s, item: i }) => s.index === r.index && i.id === item.id).length} / 3`,
        ]),
      ),
    );

    // Swap: direct count over the pairs: a planted pair gets A in both orders, the others go by quality.
    const verdicts = swapPairs.flatMap((p) => {
      if (plantedBias.includes(p)) return ['A', 'A'];
      const w = (a: string, b: string) => (quality(a) > quality(b) ? 'A' : quality(a) < quality(b) ? 'B' : 'tie');
      return [w(p.x, p.y), w(p.y, p.x)];
    });
    const firstWins = verdicts.filter((v) => v === 'A').length;
    const decisive = verdicts.filter((v) => v !== 'tie').length;
    const swap = page.getByTestId('checks-swap-result');
    expect(await swap.locator('[data-col="resolved"]').textContent()).toBe(
      `${swapPairs.length} of ${swapPairs.length}`,
    );
    expect(await swap.locator('[data-col="flip-share"]').textContent()).toBe(
      `${((100 * plantedBias.length) / swapPairs.length).toFixed(1)} % (${plantedBias.length})`,
    );
    expect(await swap.locator('[data-col="first-rate"]').textContent()).toBe(
      `${(firstWins / decisive).toFixed(3)} (${firstWins} of ${decisive} A/B verdicts)`,
    );
    expect(await swap.locator('[data-col="follows"]').textContent()).toBe(`${plantedBias.length} / 0`);

    // Preferred vs perturbed: the double's perturbation drops each reference's first (Essential)
    // token, so every aggregation but two ranks the reference higher on all 5 pairs; Likert is a
    // constant (5 ties, rate 0) and rule × judge has no rule reward (5 without both rewards).
    const perturbed = await page
      .locator('[data-testid="checks-perturbed"] tbody tr')
      .evaluateAll((trs) =>
        trs.map((tr) => [
          (tr as HTMLElement).dataset.aggregation,
          [...tr.querySelectorAll('td')].map((td) => td.textContent!.trim()),
        ]),
      );
    expect(Object.fromEntries(perturbed)).toEqual(
      Object.fromEntries(
        AGGREGATION_IDS.map((id) => [
          id,
          id === 'likert'
            ? ['0.000 (0 / 5)', '5', '0', '0']
            : id === 'rule-x-judge'
              ? ['— (0 / 0)', '0', '0', '5']
              : ['1.000 (5 / 5)', '0', '0', '0'],
        ]),
      ),
    );

    await dismissOfflineNote(page);
    const painted = () =>
      page.evaluate(() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done))));
    await page.setViewportSize({ width: 1400, height: 1000 });
    await page.getByTestId('judge-checks').scrollIntoViewIfNeeded();
    await painted();
    await screenshot(page, 'judge-checks-1400.png');
    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByTestId('checks-swap-result').scrollIntoViewIfNeeded();
    await painted();
    await screenshot(page, 'judge-checks-390.png');
    await page.setViewportSize({ width: 1366, height: 768 });
  });
});
