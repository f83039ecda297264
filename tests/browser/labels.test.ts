/**
 * Blind labelling and agreement in the built app (headless Chromium): the example RaR dataset,
 * the example completions replayed and judged by a JUDGE DOUBLE (a test double of an LLM judge
 * on a loopback OpenAI server: scripted, deliberately lenient verdicts: every criterion is met
 * unless the response says "probably"); 30 criterion labels and 7 whole-response labels typed
 * on the keyboard with a reload in the middle (the place is kept); the labels exported, imported
 * into a second browser profile (a fresh context: its own IndexedDB) and merged with another
 * labeller's file; a bad file changes nothing; the agreement tables equal a direct computation.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HumanLabel } from '../../src/core/rubric/labels.ts';
import { fmt3 } from '../../src/ui/rubric/analysis.ts';
import { ROOT, tempFile } from '../helpers/cli.ts';
import { browserSkipReason, suiteTitle, watchPage, type PageWatch } from './harness.ts';
import { startLoopbackOpenAi, type ChatBody, type LoopbackModels } from './loopback-openai.ts';
import { LAPTOP, downloadFrom, screenshot, useApp, type AppSession } from './workbench-helpers.ts';

const COMPLETIONS = path.join(ROOT, 'public/rubrics/example-completions.jsonl');

/** The double's scripted verdict on a criterion of a response. */
const judgeMet = (response: string) => !/probably/.test(response);

function respond(body: ChatBody): string {
  const user = body.messages.find((m) => m.role === 'user')?.content ?? '';
  const response = /<response>\n([\s\S]*?)\n<\/response>/.exec(user)?.[1] ?? '';
  if (user.includes('<criterion>'))
    return JSON.stringify({ criteria_met: judgeMet(response), explanation: 'scripted (lenient double)' });
  if (user.includes('<rubric>')) return `{"score": ${judgeMet(response) ? 9 : 2}, "explanation": "scripted"}`;
  return '{"score": 6, "explanation": "scripted constant"}';
}

interface Labelled {
  question: string;
  sample: number;
  criterion: string;
  response: string;
  value: boolean;
}

/** κ, raw, baseline of (rater, reference) pairs, computed here from the formulas. */
function direct(pairs: Array<[boolean, boolean]>) {
  const n = pairs.length;
  const po = pairs.filter(([a, b]) => a === b).length / n;
  const r1 = pairs.filter(([a]) => a).length / n;
  const h1 = pairs.filter(([, b]) => b).length / n;
  const pe = r1 * h1 + (1 - r1) * (1 - h1);
  return {
    n: String(n),
    raw: fmt3(po),
    // (a κ of 0 computed here may come out as −1e−17: shown as the app shows an exact 0)
    kappa: fmt3(pe === 1 ? null : Math.abs((po - pe) / (1 - pe)) < 1e-12 ? 0 : (po - pe) / (1 - pe)),
    baseline: fmt3(Math.max(h1, 1 - h1)),
    fp: String(pairs.filter(([a, b]) => a && !b).length),
    ff: String(pairs.filter(([a, b]) => !a && b).length),
  };
}

async function row(page: Page, table: string, key: string) {
  const tr = page.locator(`[data-testid="${table}"] tr[data-row="${key}"]`);
  await tr.waitFor({ state: 'attached' }); // per-criterion rows are in a closed <details>
  const cell = async (c: string) => ((await tr.locator(`td[data-col="${c}"]`).textContent()) ?? '').trim();
  return {
    n: await cell('n'),
    raw: await cell('raw'),
    kappa: await cell('kappa'),
    baseline: (await cell('baseline')).split(' ')[0],
    fp: await cell('fp'),
    ff: await cell('ff'),
  };
}

describe.skipIf(browserSkipReason())(suiteTitle('blind labelling, label files and agreement with the judge'), () => {
  let s: AppSession;
  let models: LoopbackModels;
  let second: { context: BrowserContext; page: Page; watch: PageWatch } | null = null;
  useApp((x) => (s = x), { watches: () => [second?.watch] });
  beforeAll(async () => {
    models = await startLoopbackOpenAi({ models: ['judge-double'], respond });
  });
  afterAll(async () => {
    await second?.context.close();
    await models?.close();
  });

  /** The example dataset, the example completions replayed, judged by the double; the run opened. */
  async function judgedRun(page: Page): Promise<void> {
    await page.goto(s.server.url + '#/rubric-runs');
    await page.getByTestId('rar-example').click();
    await expect.poll(async () => (await page.getByTestId('rar-message').textContent()) ?? '').toContain('Imported');
    await page.getByTestId('rar-policy-replay').check();
    await page.getByTestId('rar-completions').setInputFiles(COMPLETIONS);
    await page.getByTestId('rar-judge-choice').selectOption('openai');
    await page.getByTestId('judge-openai-url').fill(models.url);
    await page.getByTestId('judge-openai-model').fill('judge-double');
    await page.getByTestId('rar-name').fill('labelled');
    await page.getByTestId('rar-start').click();
    await page.locator('[data-testid="rar-open"]').waitFor({ timeout: 90_000 });
    await page.getByTestId('label-panel').waitFor();
  }

  /** Reads the card, presses the key, waits for the next card; returns what was labelled. */
  async function labelByKey(page: Page, key: 'y' | 'n' | '1' | '0'): Promise<Labelled> {
    const card = page.getByTestId('label-card');
    const pos = Number(await card.getAttribute('data-position'));
    const item: Labelled = {
      question: (await card.getAttribute('data-question'))!,
      sample: Number(await card.getAttribute('data-sample')),
      criterion: (await card.getAttribute('data-criterion'))!,
      response: (await page.getByTestId('label-response').textContent())!,
      value: key === 'y' || key === '1',
    };
    await page.keyboard.press(key);
    await expect
      .poll(async () => (await card.count()) === 0 || Number(await card.getAttribute('data-position')) === pos + 1)
      .toBe(true);
    return item;
  }

  const KEYS = ['y', 'n', '1', 'y', '0'] as const;
  const criterionLabels: Labelled[] = [];
  const responseLabels: Labelled[] = [];
  let exported = '';

  it('labels 30 criteria by keyboard with a reload in the middle, then 7 whole responses; the agreement equals a direct computation', async () => {
    const { page } = s;
    await judgedRun(page);
    expect(await page.getByTestId('label-card').count()).toBe(0);
    await page.getByTestId('label-name').fill('ann');
    await page.getByTestId('label-start').click();
    await page.getByTestId('label-card').waitFor();
    expect(await page.getByTestId('label-panel').textContent()).not.toContain('scripted'); // the verdict is hidden
    for (let i = 0; i < 15; i++) criterionLabels.push(await labelByKey(page, KEYS[i % KEYS.length]!));
    // A skip moves on without a label; back (k) and forward (→) move without labelling.
    await page.keyboard.press('s');
    await expect.poll(() => page.getByTestId('label-card').getAttribute('data-position')).toBe('16');
    await page.keyboard.press('k');
    await expect.poll(() => page.getByTestId('label-card').getAttribute('data-position')).toBe('15');
    await page.keyboard.press('ArrowRight');
    await expect.poll(() => page.getByTestId('label-card').getAttribute('data-position')).toBe('16');
    // The card moves at once and the place is stored after it: reloaded before the write ends
    // (run 10 of the suite, at load 4-8), the page came back to the place before.
    await expect.poll(() => page.getByTestId('label-card').getAttribute('data-place-stored')).toBe('true');

    await page.reload();
    await page.locator('[data-testid="rar-runs"] tr[data-name="labelled"] button.link').click();
    // The labeller's name is remembered and the place kept: the item after the skipped one.
    await expect.poll(async () => ((await page.getByTestId('label-labeller').textContent()) ?? '').trim()).toBe('ann');
    await expect.poll(() => page.getByTestId('label-card').getAttribute('data-position')).toBe('16');
    // A key pressed while the focus is elsewhere on the page labels nothing; a click on the item gives it the keys.
    await page.locator('[data-testid="rar-runs"] tr[data-name="labelled"] button.link').focus();
    await page.keyboard.press('y');
    await page.keyboard.press('s');
    await page.getByTestId('label-card').click();
    await expect.poll(() => page.getByTestId('label-card').getAttribute('data-position')).toBe('16');
    await expect
      .poll(async () => ((await page.getByTestId('label-progress').textContent()) ?? '').trim())
      .toContain('15 labelled by you');
    for (let i = 15; i < 30; i++) criterionLabels.push(await labelByKey(page, KEYS[i % KEYS.length]!));
    await expect
      .poll(async () => ((await page.getByTestId('label-progress').textContent()) ?? '').trim())
      .toContain('30 labelled by you');
    // 16 + 15: the keys pressed with the focus outside the panel moved nothing.
    expect(await page.getByTestId('label-card').getAttribute('data-position')).toBe('31');

    await page.getByTestId('label-mode-responses').check();
    await expect.poll(() => page.getByTestId('label-card').getAttribute('data-criterion')).toBe('');
    for (let i = 0; i < 7; i++) responseLabels.push(await labelByKey(page, i % 2 ? 'n' : 'y'));
    await page.getByTestId('label-end').waitFor();

    // Judge vs Ann: every criterion label is one pair (the double's verdict, Ann's label).
    const pairs = criterionLabels.map((l): [boolean, boolean] => [judgeMet(l.response), l.value]);
    expect(await row(page, 'agreement-judge', 'overall')).toEqual(direct(pairs));
    // Per criterion: each labelled (question, criterion).
    const byCriterion = new Map<string, Array<[boolean, boolean]>>();
    for (const l of criterionLabels) {
      const k = `${l.question}/${l.criterion}`;
      byCriterion.set(k, [...(byCriterion.get(k) ?? []), [judgeMet(l.response), l.value]]);
    }
    for (const [k, p] of byCriterion) expect(await row(page, 'agreement-judge-criteria', k), k).toEqual(direct(p));
    // Likert is the double's constant 6 → 5/9 ≥ 0.5 passes every response; implicit 9 or 2.
    const likert = responseLabels.map((l): [boolean, boolean] => [true, l.value]);
    expect(await row(page, 'agreement-aggregations', 'likert')).toEqual(direct(likert));
    const implicit = responseLabels.map((l): [boolean, boolean] => [judgeMet(l.response), l.value]);
    expect(await row(page, 'agreement-aggregations', 'implicit')).toEqual(direct(implicit));
    // The threshold is a setting: at 0.6 Likert's 5/9 fails every response.
    await page.getByTestId('agreement-threshold').fill('0.6');
    await page.getByTestId('agreement-threshold').dispatchEvent('change');
    expect(await row(page, 'agreement-aggregations', 'likert')).toEqual(
      direct(responseLabels.map((l): [boolean, boolean] => [false, l.value])),
    );
    await page.getByTestId('agreement-threshold').fill('0.5');
    await page.getByTestId('agreement-threshold').dispatchEvent('change');

    await page.setViewportSize({ width: 1400, height: 1000 });
    await page.getByTestId('label-mode-criteria').check();
    await page.getByTestId('label-panel').scrollIntoViewIfNeeded();
    await screenshot(page, 'labels-card-1400.png');
    await page.getByTestId('label-agreement').scrollIntoViewIfNeeded();
    await screenshot(page, 'labels-agreement-1400.png');
    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByTestId('label-card').scrollIntoViewIfNeeded();
    await screenshot(page, 'labels-card-390.png');
    await page.getByTestId('label-agreement').scrollIntoViewIfNeeded();
    await screenshot(page, 'labels-agreement-390.png');
    await page.setViewportSize({ width: 1366, height: 768 });

    const file = await downloadFrom(page, '[data-testid="label-export"]');
    expect(file.name).toBe('labelled.labels.jsonl');
    exported = file.text;
    const lines = exported
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toHaveLength(37);
    expect(new Set(lines.map((l) => l.labeller))).toEqual(new Set(['ann']));
    expect(lines.filter((l) => l.criterion === null)).toHaveLength(7);
  }, 240_000);

  it('a second profile imports the labels and merges another labeller; a bad file changes nothing; the tables follow', async () => {
    const context = await s.browser.newContext(LAPTOP);
    const page = await context.newPage();
    second = { context, page, watch: watchPage(page) };
    await judgedRun(page);
    expect(await page.getByTestId('agreement-judge-empty').count()).toBe(1);

    const annFile = tempFile('ann.labels.jsonl');
    writeFileSync(annFile, exported);
    await page.getByTestId('label-import').setInputFiles(annFile);
    await expect
      .poll(async () =>
        (
          (await page.locator('[data-testid="label-message"], [data-testid="label-error"]').first().textContent()) ?? ''
        ).trim(),
      )
      .toContain('Imported 37 labels of ann from ann.labels.jsonl: 37 added');
    const annPairs = criterionLabels.map((l): [boolean, boolean] => [judgeMet(l.response), l.value]);
    expect(await row(page, 'agreement-judge', 'overall')).toEqual(direct(annPairs));

    // Bob labels the same 30 criteria, agreeing with Ann except on every fourth; a later label of
    // Ann's (her first item, changed) is in his file too: the later one wins.
    const ann = exported
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as HumanLabel);
    const annCriteria = ann.filter((l) => l.criterion !== null);
    const bob = annCriteria.map((l, i) => ({
      ...l,
      labeller: 'bob',
      value: i % 4 === 0 ? !l.value : l.value,
      at: '2030-01-01T00:00:00.000Z',
    }));
    const annLater = { ...annCriteria[0]!, value: !annCriteria[0]!.value, at: '2030-01-01T00:00:00.000Z' };
    const bobFile = tempFile('bob.labels.jsonl');
    writeFileSync(bobFile, [...bob, annLater].map((l) => JSON.stringify(l)).join('\n') + '\n');

    // A bad file first: its third line has no value; nothing is stored.
    const badFile = tempFile('bad.labels.jsonl');
    const badLines = [...bob.slice(0, 2), { ...bob[2], value: 'maybe' }].map((l) => JSON.stringify(l));
    writeFileSync(badFile, badLines.join('\n') + '\n');
    await page.getByTestId('label-import').setInputFiles(badFile);
    await expect
      .poll(async () => ((await page.getByTestId('label-error').textContent()) ?? '').trim())
      .toContain('bad.labels.jsonl:3: "value" must be true');
    await expect
      .poll(async () => ((await page.getByTestId('label-error').textContent()) ?? '').trim())
      .toContain('Nothing was imported');
    expect(await page.getByTestId('agreement-labellers').count()).toBe(0);
    expect(await row(page, 'agreement-judge', 'overall')).toEqual(direct(annPairs));

    await page.getByTestId('label-import').setInputFiles(bobFile);
    await expect
      .poll(async () =>
        (
          (await page.locator('[data-testid="label-message"], [data-testid="label-error"]').first().textContent()) ?? ''
        ).trim(),
      )
      .toContain(
        'Imported 31 labels of ann, bob from bob.labels.jsonl: 30 added, 1 replaced by a later label, 0 kept as stored',
      );
    const keyOf = (l: { question: unknown; sample: unknown; criterion: unknown }) =>
      JSON.stringify([l.question, l.sample, l.criterion]);
    const changed = keyOf(annLater);
    const annNow = criterionLabels.map((l) => ({ ...l, value: keyOf(l) === changed ? !l.value : l.value }));
    const bobByKey = new Map(bob.map((b) => [keyOf(b), b.value]));
    const bobLabels = criterionLabels.map((l) => ({ ...l, value: bobByKey.get(keyOf(l))! }));
    const judgePairs = [...annNow, ...bobLabels].map((l): [boolean, boolean] => [judgeMet(l.response), l.value]);
    expect(await row(page, 'agreement-judge', 'overall')).toEqual(direct(judgePairs));
    // Bob vs Ann (Ann the reference): on the 30 criteria both labelled.
    const between = annNow.map((a, i): [boolean, boolean] => [bobLabels[i]!.value, a.value]);
    expect(await row(page, 'agreement-labellers', 'ann|bob')).toEqual(direct(between));
    // The false passes list names the items.
    const fps = judgePairs.filter(([j, h]) => j && !h).length;
    expect(await page.locator('[data-testid="agreement-judge-errors"] li[data-kind="false-pass"]').count()).toBe(fps);
  }, 240_000);
});
