/**
 * Rubric authoring in the built app (headless Chromium): a rubric drafted from a question and
 * its reference answer by an OpenAI-compatible drafting model (a loopback TEST DOUBLE with a
 * scripted answer: no weights can run here) opens in the editor, is edited and saved; the REAL
 * stories260K.gguf on the CPU engine drafts junk text, refused with the reason; and a rubric
 * run's per-criterion pass rates (table, CSV, JSONL) equal the core's on the same verdicts
 * computed in Node against the same judge double.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOpenAiEngine } from '../../src/adapters/engines/openai-engine.ts';
import { RAR_DRAFT_V1 } from '../../src/core/rubric/draft.ts';
import { Judge } from '../../src/core/rubric/judge.ts';
import {
  criterionPassRates,
  passRateSample,
  passRatesCsv,
  passRatesJsonl,
  type CriterionPassRate,
} from '../../src/core/rubric/pass-rates.ts';
import { parseRarJsonl } from '../../src/core/rubric/rar-dataset.ts';
import { pairCompletions, replayCompletions, runRar, type RarSample } from '../../src/core/rubric/rar-run.ts';
import { fmt3 } from '../../src/ui/rubric/analysis.ts';
import { ROOT } from '../helpers/cli.ts';
import { sharedData } from '../helpers/shared-data.ts';
import { browserSkipReason, suiteTitle, type PageWatch, type StaticServer } from './harness.ts';
import { startLoopbackOpenAi, type ChatBody, type LoopbackModels } from './loopback-openai.ts';
import { closeAppAfter, downloadFrom, openApp, screenshot } from './workbench-helpers.ts';

const DATASET = path.join(ROOT, 'public/rubrics/example-rar.jsonl');
const COMPLETIONS = path.join(ROOT, 'public/rubrics/example-completions.jsonl');
const rows = parseRarJsonl(readFileSync(DATASET, 'utf8'), 'example-rar.jsonl');

const DRAFTED = [
  ['Calls emergency services', 'Says to call the emergency number at once.', 'essential', 5],
  ['Names a heart attack', 'Identifies the symptoms as a possible heart attack.', 'essential', 5],
  ['Aspirin unless allergic', 'Advises chewing aspirin unless allergic or told not to.', 'important', 4],
  ['No driving', 'Says he must not drive himself to hospital.', 'important', 3],
  ['Rest and company', 'Advises keeping him at rest and staying with him.', 'optional', 2],
  ['CPR if unresponsive', 'Says to start CPR and use an AED if he stops breathing normally.', 'important', 4],
  ['Waits it out', 'Suggests waiting to see whether the pain passes.', 'pitfall', -2],
  ['Nitroglycerin as prescribed', 'Mentions his own prescribed nitroglycerin, taken as directed.', 'optional', 1],
].map(([title, description, category, weight]) => ({ title, description, category, weight }));

/**
 * The double: the drafting prompt gets the criteria above in a fence after a sentence; a
 * criterion is met for a sound answer (not a pitfall) and for a weak one (a pitfall), except
 * Optional criteria, always met; the implicit and Likert prompts get a fixed score.
 */
function respond(body: ChatBody): string {
  const system = body.messages.find((m) => m.role === 'system')?.content ?? '';
  const user = body.messages.find((m) => m.role === 'user')?.content ?? '';
  if (system === RAR_DRAFT_V1.system) return `Here is the rubric.\n\`\`\`json\n${JSON.stringify(DRAFTED)}\n\`\`\``;
  const response = /<response>\n([\s\S]*?)\n<\/response>/.exec(user)?.[1] ?? '';
  const bad = /probably|air bubbles|I do not know/.test(response);
  if (user.includes('<criterion>')) {
    const criterion = /<criterion>\n([\s\S]*?)\n<\/criterion>/.exec(user)?.[1] ?? '';
    const pitfall = /Pitfall/i.test(criterion);
    const met = /Optional Criteria/i.test(criterion) ? true : bad ? pitfall : !pitfall;
    return JSON.stringify({ criteria_met: met, explanation: 'scripted' });
  }
  return `{"score": ${bad ? 2 : 9}, "explanation": "scripted"}`;
}

describe.skipIf(browserSkipReason())(suiteTitle('rubric authoring: drafting from a reference, pass rates'), () => {
  let app: StaticServer;
  let models: LoopbackModels;
  let browser: Browser;
  let page: Page;
  let watch: PageWatch;

  beforeAll(async () => {
    models = await startLoopbackOpenAi({ models: ['drafter'], respond });
    ({ server: app, browser, page, watch } = await openApp());
  });
  closeAppAfter(() => ({ server: app, browser, watch }));
  afterAll(async () => {
    await models?.close();
  });

  it('a rubric drafted by the double parses, opens in the editor, is edited and saved', async () => {
    await page.goto(app.url + '#/rubrics');
    await page.getByTestId('draft-engine').selectOption('openai');
    await page.getByTestId('judge-openai-url').fill(models.url);
    await page.getByTestId('judge-openai-model').fill('drafter');
    await page.getByTestId('draft-question').fill(rows[0]!.question);
    await page.getByTestId('draft-reference').fill(rows[0]!.referenceAnswer!);
    await page.getByTestId('draft-start').click();
    await expect
      .poll(
        async () =>
          (await page
            .getByTestId('draft-ok')
            .textContent()
            .catch(() => '')) ?? '',
        { timeout: 60_000 },
      )
      .toContain(`Drafted ${DRAFTED.length} criteria (prompt rar-draft-v1) into the rubric editor`);
    const editor = page.getByTestId('rubric-editor');
    const titles = await editor
      .getByTestId('crit-title')
      .evaluateAll((els) => els.map((e) => (e as HTMLInputElement).value));
    expect(titles).toEqual(DRAFTED.map((d) => d.title));
    const cats = await editor
      .getByTestId('crit-category')
      .evaluateAll((els) => els.map((e) => (e as HTMLSelectElement).value));
    expect(cats).toEqual(DRAFTED.map((d) => d.category));
    const weights = await editor
      .getByTestId('crit-weight')
      .evaluateAll((els) => els.map((e) => Number((e as HTMLInputElement).value)));
    expect(weights).toEqual(DRAFTED.map((d) => d.weight));
    expect(await page.getByTestId('rubric-id').inputValue()).toBe('drafted-a-58-year-old-man');
    await page.setViewportSize({ width: 1400, height: 1000 });
    await page.getByTestId('draft-ok').scrollIntoViewIfNeeded();
    await screenshot(page, 'rubric-draft-1400.png');
    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByTestId('draft-ok').scrollIntoViewIfNeeded();
    await screenshot(page, 'rubric-draft-390.png');
    await page.getByTestId('rubric-editor').scrollIntoViewIfNeeded();
    await screenshot(page, 'rubric-draft-editor-390.png');
    await page.setViewportSize({ width: 1366, height: 768 });
    // Edited before use: a title reworded and the id changed, then saved.
    await editor.getByTestId('crit-title').nth(3).fill('Does not drive himself');
    await page.getByTestId('rubric-id').fill('chest-pain-drafted');
    await page.getByTestId('rubric-save').click();
    await expect
      .poll(async () => (await page.getByTestId('rubric-saved').textContent()) ?? '')
      .toContain(`(${DRAFTED.length} criteria)`);
    await page.locator('[data-testid="stored-rubric"][data-id="chest-pain-drafted"]').waitFor();
    await page.reload();
    await page.locator('[data-testid="stored-rubric"][data-id="chest-pain-drafted"] button.link').click();
    expect(await page.getByTestId('rubric-editor').getByTestId('crit-title').nth(3).inputValue()).toBe(
      'Does not drive himself',
    );
  });

  it('the REAL stories260K.gguf on the CPU engine drafts junk text: refused with what was expected and what came back', async () => {
    await page.goto(app.url + '#/rubrics');
    await page.reload();
    await page.getByTestId('draft-engine').selectOption('wllama');
    await page.getByTestId('judge-gguf-file').setInputFiles(sharedData('models', 'stories260K.gguf'));
    await page.getByTestId('draft-question').fill('Why is the sky blue?');
    await page
      .getByTestId('draft-reference')
      .fill('Sunlight is scattered by air molecules, blue light the most (Rayleigh scattering).');
    await page.getByTestId('draft-start').click();
    await expect
      .poll(
        async () =>
          (await page
            .getByTestId('draft-error')
            .textContent()
            .catch(() => '')) ?? '',
        { timeout: 180_000 },
      )
      .toMatch(
        /^the drafted rubric was refused: expected one JSON array of 7–20 criteria, each .*; .*\. The engine answered ".+"$/,
      );
    const raw = (await page.getByTestId('draft-raw').locator('pre').textContent()) ?? '';
    expect(raw.length).toBeGreaterThan(0);
    // The message quotes the answer's start as it came (whitespace folded).
    const quoted = /The engine answered "(.*)"$/.exec((await page.getByTestId('draft-error').textContent())!)![1]!;
    expect(raw.replace(/\s+/g, ' ').trim().startsWith(quoted.replace(/…$/, '').replace(/\\"/g, '"'))).toBe(true);
    // Nothing reached the editor: it still holds what it held.
    expect(await page.getByTestId('draft-ok').count()).toBe(0);
    await page.setViewportSize({ width: 1400, height: 1000 });
    await page.getByTestId('draft-panel').scrollIntoViewIfNeeded();
    await screenshot(page, 'rubric-draft-refused-1400.png');
    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByTestId('draft-error').scrollIntoViewIfNeeded();
    await screenshot(page, 'rubric-draft-refused-390.png');
    await page.setViewportSize({ width: 1366, height: 768 });
  });

  it("a rubric run's per-criterion pass rates, CSV and JSONL equal the core's on the same verdicts", async () => {
    // The same run in Node: replayed completions, the real OpenAI engine and judge, the same double.
    const jobs = pairCompletions(readFileSync(COMPLETIONS, 'utf8'), 'example-completions.jsonl', rows);
    const judgeEngine = createOpenAiEngine({ baseUrl: models.url, model: 'drafter' });
    await judgeEngine.load({ id: 'drafter', source: models.url });
    const out: RarSample[] = [];
    await runRar({
      rows,
      samples: 4,
      policy: { kind: 'replay', completions: replayCompletions(jobs) },
      judge: new Judge({ engine: judgeEngine, model: 'drafter' }),
      aggregations: ['explicit', 'implicit', 'likert'],
      explicit: { normalization: 'positive', clip: true, unresolved: 'null' },
      weighting: 'as-given',
      done: new Set(),
      write: async (s) => void out.push(...s),
    });
    const want: CriterionPassRate[] = criterionPassRates(
      out
        .sort((a, b) => a.index - b.index || a.sample - b.sample)
        .map((s) => passRateSample(s.rowId, rows[s.index]!.rubric.items, s.scores)),
    );
    // The double plants both kinds: criteria that tell a question's samples apart and Optional ones every sample passes.
    expect(want.some((r) => r.notDiscriminating === 'all-pass')).toBe(true);
    expect(want.some((r) => r.n >= 2 && r.notDiscriminating === null)).toBe(true);

    await page.goto(app.url + '#/rubric-runs');
    await page.getByTestId('rar-example').click();
    await expect.poll(async () => (await page.getByTestId('rar-message').textContent()) ?? '').toContain('Imported');
    await page.getByTestId('rar-policy-replay').check();
    await page.getByTestId('rar-completions').setInputFiles(COMPLETIONS);
    await page.getByTestId('rar-n').fill('4');
    await page.getByTestId('rar-judge-choice').selectOption('openai');
    await page.getByTestId('judge-openai-url').fill(models.url);
    await page.getByTestId('judge-openai-model').fill('drafter');
    await page.getByTestId('rar-name').fill('pass rates');
    await page.getByTestId('rar-start').click();
    const row = page.locator('[data-testid="rar-runs"] tr[data-name="pass rates"]');
    await expect
      .poll(async () => ((await row.count()) > 0 ? await row.locator('[data-col="status"]').textContent() : ''), {
        timeout: 90_000,
      })
      .toBe('done');
    const table = page.getByTestId('pass-rates');
    await table.waitFor();
    const shown = await table.locator('tbody tr').evaluateAll((trs) =>
      trs.map((tr) => {
        const el = tr as HTMLElement;
        const cell = (c: string) => el.querySelector(`[data-col="${c}"]`)?.textContent?.trim() ?? '';
        return [el.dataset.group, el.dataset.criterion, cell('rate'), cell('passed'), el.dataset.flag];
      }),
    );
    expect(shown).toEqual(
      want.map((r) => [r.group, r.criterion, fmt3(r.rate), `${r.passed} / ${r.n}`, r.notDiscriminating ?? '']),
    );
    expect(await page.getByTestId('pass-rates-flagged').textContent()).toBe(
      String(want.filter((r) => r.notDiscriminating).length),
    );
    const csv = await downloadFrom(page, '[data-testid="pass-rates-csv"]');
    expect(csv.name).toBe('pass_rates.pass-rates.csv');
    expect(csv.text).toBe(passRatesCsv(want));
    const jsonl = await downloadFrom(page, '[data-testid="pass-rates-jsonl"]');
    expect(jsonl.text).toBe(passRatesJsonl(want));

    await page.setViewportSize({ width: 1400, height: 1000 });
    await table.scrollIntoViewIfNeeded();
    await screenshot(page, 'rubric-pass-rates-1400.png');
    await page.setViewportSize({ width: 390, height: 844 });
    await table.scrollIntoViewIfNeeded();
    await screenshot(page, 'rubric-pass-rates-390.png');
    await page.setViewportSize({ width: 1366, height: 768 });
  });
});
