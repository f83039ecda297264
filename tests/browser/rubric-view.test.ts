import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOpenAiEngine } from '../../src/adapters/engines/openai-engine.ts';
import { reaggregate, summarizeRubricScores } from '../../src/core/rubric/aggregate.ts';
import { Judge } from '../../src/core/rubric/judge.ts';
import { applyWeighting, validateRubric, type Rubric } from '../../src/core/rubric/model.ts';
import { criterionPassRates, passRateSample } from '../../src/core/rubric/pass-rates.ts';
import { scoreSample } from '../../src/core/rubric/score.ts';
import { DEFAULT_EXPLICIT_OPTIONS, type RubricScores } from '../../src/core/rubric/scores.ts';
import { BIRD_RUBRIC } from '../../src/core/rubric/bird-rubric.ts';
import initSqlJs from 'sql.js';
import { agreement, exMatrix, fmt3 } from '../../src/ui/rubric/analysis.ts';
import { sampleToScore } from '../../src/app/rubric-scoring-service.ts';
import { browserSkipReason, suiteTitle } from './harness.ts';
import { seriousViolations } from './axe-check.ts';
import { startLoopbackOpenAi } from './loopback-openai.ts';
import { DEMO_ROOT, demoSamplesInNode } from './node-reference.ts';
import { screenshot, startRun, importDemoLibrary, useApp } from './workbench-helpers.ts';

const MODEL = 'tiny-judge';

/**
 * A deterministic judge speaking the OpenAI protocol on loopback: criterion answers depend on
 * the response (met when it aggregates), and a response with ORDER BY first gets a malformed
 * answer (greedy attempt), then a well-formed one on the retry; implicit and Likert scores
 * depend on the prompt's length.
 */
function judgeAnswer(system: string, user: string, temperature: number): string {
  const response = /<response>([\s\S]*?)<\/response>/i.exec(user)?.[1] ?? user;
  if (system.includes('one rubric criterion')) {
    if (/ORDER BY/i.test(response) && temperature === 0) return 'criteria met: yes';
    const met = /\b(COUNT|SUM|AVG)\s*\(/i.test(response);
    return JSON.stringify({
      criteria_met: met,
      explanation: met ? 'the query aggregates as asked' : 'no aggregate in the query',
    });
  }
  const score = 1 + ((user.length * (system.includes('against a rubric') ? 1 : 7)) % 10);
  return JSON.stringify({ score, explanation: `test score ${score}` });
}

function startJudge() {
  return startLoopbackOpenAi({
    models: [MODEL],
    respond: (body) => {
      const system = body.messages.find((m) => m.role === 'system')?.content ?? '';
      const user = body.messages
        .filter((m) => m.role === 'user')
        .map((m) => m.content)
        .join('\n');
      return judgeAnswer(system, user, body.temperature ?? 0);
    },
  });
}

/** The rubric the test types into the editor, as the core reads it. */
const RUBRIC: Rubric = validateRubric({
  id: 'demo-rubric',
  title: 'Demo SQL rubric',
  items: [
    {
      id: 'judge-agg',
      title: 'Aggregates when asked',
      description: 'Uses COUNT, SUM or AVG when the question asks how many or how much.',
      category: 'important',
      weight: 0.7,
      check: { kind: 'judge' },
    },
    {
      id: 'matches-gold',
      title: 'Result matches gold',
      description: 'The query returns the same set of rows as the gold query (official EX).',
      category: 'essential',
      weight: 1,
      check: { kind: 'sql', name: 'matches-gold' },
    },
    {
      id: 'executes',
      title: 'Executes without error',
      description: '',
      category: 'important',
      weight: 0.7,
      check: { kind: 'sql', name: 'executes' },
    },
    {
      id: 'no-star',
      title: 'Avoids SELECT *',
      description: '',
      category: 'pitfall',
      weight: 0.9,
      check: { kind: 'regex', pattern: '^(?!.*SELECT\\s+\\*)', flags: 'is', target: 'sql' },
    },
  ],
});

describe.skipIf(browserSkipReason())(suiteTitle('the rubric screen'), () => {
  let judge: Awaited<ReturnType<typeof startJudge>>;
  let page: Page;
  // The app's CSP allows connections to its own origin only; the judge is on another port.
  useApp((s) => ({ page } = s), {
    context: { viewport: { width: 1366, height: 768 }, bypassCSP: true },
    hash: '#/datasets',
  });
  let reference: Map<string, { ex: 0 | 1; scores: RubricScores }>;

  /** The same samples scored in Node with the core and the same judge server. */
  async function nodeReference(): Promise<Map<string, { ex: 0 | 1; scores: RubricScores }>> {
    const samples = await demoSamplesInNode('predictions.json', { timeoutS: 30 });
    const engine = createOpenAiEngine({ baseUrl: judge.url, model: MODEL, maxRetries: 0 });
    await engine.load({ id: MODEL, source: judge.url });
    const j = new Judge({ engine, model: MODEL });
    const out = new Map<string, { ex: 0 | 1; scores: RubricScores }>();
    for (const { sample, question } of samples) {
      out.set(`${sample.index}.0`, {
        ex: sample.ex,
        scores: await scoreSample(RUBRIC, sampleToScore(sample, question), { judge: j }),
      });
    }
    await engine.unload();
    return out;
  }

  beforeAll(async () => {
    judge = await startJudge();
    const ref = nodeReference();
    await importDemoLibrary(page);
    const run = await startRun(page, {
      datasetName: 'Demo library',
      predictions: path.join(DEMO_ROOT, 'predictions.json'),
      name: 'demo for rubrics',
    });
    expect(run.error).toBeNull();
    reference = await ref;
  });

  afterAll(async () => {
    await judge?.close();
  });

  const crit = (i: number, field: string) => page.locator(`[data-testid="criterion-${i}"] [data-testid="${field}"]`);

  it('edits a rubric: validation messages from the core, presets, reorder, saved in IndexedDB', async () => {
    await page.getByTestId('nav-rubrics').click();
    await page.getByTestId('rubric-editor').waitFor();
    // The editor opens on the EX-only rubric: one "result matches gold" item.
    expect(await crit(0, 'crit-sql').inputValue()).toBe('matches-gold');
    await page.getByTestId('rubric-id').fill('demo-rubric');
    await page.getByTestId('rubric-title').fill('Demo SQL rubric');

    await page.getByTestId('rubric-add').click();
    expect(await page.getByTestId('rubric-error').textContent()).toContain('item "c2": missing "title"');
    await expect.poll(() => page.getByTestId('rubric-save').isDisabled()).toBe(true);
    await crit(1, 'crit-id').fill('executes');
    await crit(1, 'crit-title').fill('Executes without error');
    await crit(1, 'crit-category').selectOption('important');
    expect(await crit(1, 'crit-weight').inputValue()).toBe('0.7');
    await crit(1, 'crit-kind').selectOption('sql');
    await crit(1, 'crit-sql').selectOption('executes');

    await page.getByTestId('rubric-add').click();
    await crit(2, 'crit-id').fill('no-star');
    await crit(2, 'crit-title').fill('Avoids SELECT *');
    await crit(2, 'crit-category').selectOption('pitfall');
    await crit(2, 'crit-kind').selectOption('regex');
    await crit(2, 'crit-pattern').fill('(');
    expect(await page.getByTestId('rubric-error').textContent()).toContain('does not compile');
    await crit(2, 'crit-pattern').fill('^(?!.*SELECT\\s+\\*)');
    await crit(2, 'crit-flags').fill('g');
    expect(await page.getByTestId('rubric-error').textContent()).toContain(
      'g and y make a test depend on the previous one',
    );
    await crit(2, 'crit-flags').fill('is');
    await crit(2, 'crit-weight').fill('-0.9');
    await page.getByTestId('rubric-preset').selectOption('rar-integers');
    expect(await crit(2, 'crit-weight').inputValue()).toBe('-2');
    expect(await crit(0, 'crit-weight').inputValue()).toBe('5');
    await page.getByTestId('rubric-preset').selectOption('paper');
    await crit(2, 'crit-weight').fill('0.9');

    await page.getByTestId('rubric-add').click();
    await crit(3, 'crit-id').fill('judge-agg');
    await crit(3, 'crit-title').fill('Aggregates when asked');
    await crit(3, 'crit-description').fill('Uses COUNT, SUM or AVG when the question asks how many or how much.');
    await crit(3, 'crit-category').selectOption('important');
    // Reorder: the judge item to the top.
    for (let i = 3; i > 0; i--) await crit(i, 'crit-up').click();
    expect(await crit(0, 'crit-id').inputValue()).toBe('judge-agg');
    expect(await page.getByTestId('rubric-error').count()).toBe(0);
    await page.getByTestId('rubric-save').click();
    expect(await page.getByTestId('rubric-saved').textContent()).toContain(
      'Saved rubric "Demo SQL rubric" (4 criteria)',
    );
    await page.locator('[data-testid="stored-rubric"][data-id="demo-rubric"]').waitFor();
    // Stored in its own database, as the core reads it.
    const stored = await page.evaluate(
      () =>
        new Promise<unknown>((resolve, reject) => {
          const open = indexedDB.open('rlvr-workbench-rubrics');
          open.onerror = () => reject(open.error);
          open.onsuccess = () => {
            const get = open.result.transaction('rubrics').objectStore('rubrics').get('demo-rubric');
            get.onsuccess = () => {
              resolve(get.result);
              open.result.close();
            };
          };
        }),
    );
    expect((stored as { rubric: Rubric }).rubric).toEqual(RUBRIC);
  });

  it('scores the stored run with a judge on loopback: per-criterion verdicts and aggregates equal the core in Node', async () => {
    const runSelect = page.getByTestId('score-run');
    await runSelect.selectOption({ label: 'demo for rubrics (Demo library)' });
    await page.getByTestId('judge-choice').selectOption('openai');
    await page.getByTestId('judge-openai-url').fill(judge.url);
    await page.getByTestId('judge-openai-model').fill(MODEL);
    const t0 = Date.now();
    await page.getByTestId('score-start').click();
    await page
      .locator('[data-testid="rubric-summary"], [data-testid="score-error"]')
      .first()
      .waitFor({ timeout: 300_000 });
    expect(await page.getByTestId('score-error').count()).toBe(0);
    console.log(`rubric view: 20 samples scored in ${Date.now() - t0} ms, ${judge.calls()} judge calls so far`);
    expect(await page.getByTestId('judge-stats').textContent()).toMatch(
      /Judge: [1-9]\d* call\(s\), 0 answer\(s\) from the cache, [1-9]\d* malformed/,
    );
    expect(await page.getByTestId('score-written').textContent()).toContain(
      `Written into the run's ${reference.size} samples`,
    );

    const rows = page.locator('[data-testid="sample-verdicts"] tbody tr');
    expect(await rows.count()).toBe(reference.size);
    const shown = await page.$$eval('[data-testid="sample-verdicts"] tbody tr', (trs) =>
      trs.map((tr) => ({
        key: (tr as HTMLElement).dataset.key!,
        ex: tr.querySelector('[data-col="ex"]')!.textContent!.trim(),
        items: Object.fromEntries(
          [...tr.querySelectorAll<HTMLElement>('td[data-item]')].map((td) => [
            td.dataset.item!,
            { met: td.dataset.met!, status: td.dataset.status!, text: td.textContent!.trim() },
          ]),
        ),
        agg: Object.fromEntries(
          [...tr.querySelectorAll<HTMLElement>('td[data-agg]')].map((td) => [td.dataset.agg!, td.textContent!.trim()]),
        ),
        others: Object.fromEntries(
          [...tr.querySelectorAll<HTMLElement>('dd[data-aggregation]')].map((dd) => [
            dd.dataset.aggregation!,
            dd.firstChild?.textContent?.trim() ?? '',
          ]),
        ),
      })),
    );
    for (const row of shown) {
      const ref = reference.get(row.key)!;
      // The registry's aggregations on a SQL run, computed here: rule × judge = EX × explicit
      // (0 when EX = 0, whatever the judge said); veto = 0 when a resolved Essential fails or a
      // pitfall triggers (met when its weight is negative, unmet otherwise), else explicit; one
      // sample per question, so group-rank has nothing to rank against.
      const explicit = ref.scores.explicit?.score ?? null;
      const met = new Map(ref.scores.criteria.map((v) => [v.id, v.met]));
      const vetoed = RUBRIC.items.some((it) => {
        const m = met.get(it.id);
        if (m === null || m === undefined) return false;
        if (it.category === 'essential') return !m;
        return it.category === 'pitfall' && (it.weight < 0 ? m : !m);
      });
      expect(row.others, row.key).toMatchObject({
        'rule-x-judge': fmt3(ref.ex === 0 ? 0 : explicit),
        veto: fmt3(vetoed ? 0 : explicit),
        'group-rank': '—',
      });
      expect(row.ex, row.key).toBe(String(ref.ex));
      for (const v of ref.scores.criteria) {
        expect(row.items[v.id], `${row.key} ${v.id}`).toMatchObject({ met: String(v.met), status: v.status });
        expect(row.items[v.id]!.text).toContain(v.explanation);
      }
      expect(row.agg, row.key).toEqual({
        explicit: fmt3(ref.scores.explicit?.score),
        implicit: fmt3(ref.scores.implicit?.score),
        likert: fmt3(ref.scores.likert?.score),
      });
    }
    // "Result matches gold" is exactly EX.
    for (const row of shown) expect(row.items['matches-gold']!.met).toBe(row.ex === '1' ? 'true' : 'false');

    const all = [...reference.values()];
    const summary = summarizeRubricScores(all.map((r) => r.scores));
    for (const k of ['explicit', 'implicit', 'likert'] as const) {
      expect(
        await page.locator(`[data-testid="rubric-means"] td[data-agg="${k}"][data-col="mean"]`).textContent(),
      ).toBe(fmt3(summary[k].mean));
      expect(await page.locator(`[data-testid="rubric-means"] td[data-agg="${k}"][data-col="n"]`).textContent()).toBe(
        String(summary[k].n),
      );
    }
    const ag = agreement(
      all.map((r) => r.scores.explicit?.score ?? null),
      all.map((r) => r.scores.implicit?.score ?? null),
    );
    expect(await page.locator('[data-testid="agreement"] [data-value="pearson"]').textContent()).toBe(fmt3(ag.pearson));
    expect(await page.locator('[data-testid="agreement"] [data-value="pass"]').textContent()).toBe(
      fmt3(ag.passAgreement),
    );

    // Per-criterion pass rates over the run's samples: equal to the core's on the Node verdicts.
    const rates = criterionPassRates(all.map((r) => passRateSample(RUBRIC.id, RUBRIC.items, r.scores)));
    const shownRates = await page
      .locator('[data-testid="pass-rates"] tbody tr')
      .evaluateAll((trs) =>
        trs.map((tr) => [
          (tr as HTMLElement).dataset.criterion,
          tr.querySelector('[data-col="rate"]')!.textContent!.trim(),
          tr.querySelector('[data-col="passed"]')!.textContent!.trim(),
          (tr as HTMLElement).dataset.flag,
        ]),
      );
    expect(shownRates).toEqual(
      rates.map((r) => [r.criterion, fmt3(r.rate), `${r.passed} / ${r.n}`, r.notDiscriminating ?? '']),
    );

    const keys = [...reference.keys()];
    const m = exMatrix(
      keys.map((key) => ({
        key,
        ex: reference.get(key)!.ex,
        score: reference.get(key)!.scores.implicit?.score ?? null,
      })),
    );
    const cell = (c: string) => page.locator(`[data-testid="ex-matrix"] td[data-cell="${c}"]`).textContent();
    expect([
      await cell('pass-right'),
      await cell('pass-wrong'),
      await cell('fail-right'),
      await cell('fail-wrong'),
    ]).toEqual([m.passRight, m.passWrong, m.failRight, m.failWrong].map(String));
    expect(
      await page
        .locator('[data-testid="rewarded-wrong"] a')
        .evaluateAll((as) => as.map((a) => (a as HTMLElement).dataset.key)),
    ).toEqual(m.rewardedWrong);
    expect(m.passWrong + m.passRight + m.failRight + m.failWrong).toBe(keys.length);
    await page.getByTestId('only-rewarded-wrong').check();
    expect(await rows.evaluateAll((trs) => trs.map((tr) => (tr as HTMLElement).dataset.key))).toEqual(m.rewardedWrong);
    await page.getByTestId('only-rewarded-wrong').uncheck();
    expect(await rows.count()).toBe(keys.length);
    await page.locator('canvas').first().waitFor();
    await screenshot(page, 'rubric-view.png', true);
    for (const [width, height] of [
      [1400, 1000],
      [390, 844],
    ] as const) {
      await page.setViewportSize({ width, height });
      await page.locator('[data-testid="rubric-means"]').scrollIntoViewIfNeeded();
      await screenshot(page, `rubric-aggregations-${width}x${height}.png`);
      await page.locator('[data-testid="pass-rates"]').scrollIntoViewIfNeeded();
      await screenshot(page, `rubric-pass-rates-sql-${width}x${height}.png`);
    }
    await page.setViewportSize({ width: 1366, height: 768 });
  });

  it('scores again from the IndexedDB judge cache without a judge call', async () => {
    const before = judge.calls();
    await page.getByTestId('score-start').click();
    await expect
      .poll(async () => (await page.getByTestId('judge-stats').textContent()) ?? '', { timeout: 300_000 })
      .toMatch(/Judge: 0 call\(s\), [1-9]\d* answer\(s\) from the cache/);
    expect(judge.calls()).toBe(before);
  });

  it("re-aggregates with the RaR datasets' integer weights from the stored verdicts, without a judge call", async () => {
    const before = judge.calls();
    await page.getByTestId('rubric-preset').selectOption('rar-integers');
    await page.getByTestId('reaggregate').click();
    const weighted = applyWeighting(RUBRIC, 'rar-integers');
    const expected = new Map(
      [...reference].map(([k, r]) => [
        k,
        fmt3(reaggregate(r.scores, weighted.items, DEFAULT_EXPLICIT_OPTIONS).explicit?.score),
      ]),
    );
    await expect
      .poll(() =>
        page.$$eval('[data-testid="sample-verdicts"] tbody tr', (trs) =>
          Object.fromEntries(
            trs.map((tr) => [
              (tr as HTMLElement).dataset.key!,
              tr.querySelector('[data-agg="explicit"]')!.textContent!.trim(),
            ]),
          ),
        ),
      )
      .toEqual(Object.fromEntries(expected));
    // The weights changed the score of at least one sample (else this checks nothing).
    expect([...expected].some(([k, v]) => v !== fmt3(reference.get(k)!.scores.explicit?.score))).toBe(true);
    expect(await page.locator('[data-testid="sample-verdicts"] thead').textContent()).toContain('essential · 5');
    expect(judge.calls()).toBe(before);
  });

  it("the built-in BIRD rubric without a judge: schema-only and column-count are decided on the stored run, equal to the core with the demo database's schema", async () => {
    const samples = await demoSamplesInNode('predictions.json', { timeoutS: 30 });
    const SQL = await initSqlJs();
    const db = new SQL.Database(await readFile(path.join(DEMO_ROOT, 'city_library', 'city_library.sqlite')));
    const schema: Record<string, string[]> = {};
    for (const [t] of db.exec("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")[0]!
      .values) {
      schema[String(t)] = db
        .exec(`SELECT name FROM pragma_table_info('${String(t)}')`)[0]!
        .values.map((r) => String(r[0]));
    }
    db.close();
    const expected = new Map<string, RubricScores>();
    for (const { sample, question } of samples) {
      expected.set(
        `${sample.index}.0`,
        await scoreSample(BIRD_RUBRIC, sampleToScore(sample, question, schema), { aggregations: ['explicit'] }),
      );
    }

    await page.getByRole('button', { name: BIRD_RUBRIC.title }).click();
    await page.getByTestId('judge-choice').selectOption('none');
    await page.getByTestId('score-start').click();
    await expect
      .poll(
        async () =>
          (await page
            .getByTestId('score-written')
            .textContent()
            .catch(() => '')) ?? '',
        { timeout: 60_000 },
      )
      .toContain(BIRD_RUBRIC.title);
    const shown = await page.$$eval('[data-testid="sample-verdicts"] tbody tr', (trs) =>
      trs.map((tr) => ({
        key: (tr as HTMLElement).dataset.key!,
        items: Object.fromEntries(
          [...tr.querySelectorAll<HTMLElement>('td[data-item]')].map((td) => [
            td.dataset.item!,
            { met: td.dataset.met!, status: td.dataset.status! },
          ]),
        ),
      })),
    );
    expect(shown).toHaveLength(expected.size);
    let decided = 0;
    for (const row of shown) {
      const ref = expected.get(row.key)!;
      for (const id of ['matches-gold', 'executes', 'schema-only', 'column-count', 'evidence-formula', 'no-write']) {
        const v = ref.criteria.find((c) => c.id === id)!;
        expect(row.items[id], `${row.key} ${id}`).toEqual({ met: String(v.met), status: v.status });
      }
      if (row.items['schema-only']!.status === 'ok' && row.items['column-count']!.status === 'ok') decided += 1;
    }
    // Both checks are decided on every sample whose database is there (a prediction that failed
    // returned no columns: column-count not met), none is left "not applicable".
    expect(decided).toBe(samples.filter(({ sample }) => sample.status !== 'missing-db').length);
    expect(decided).toBeGreaterThan(0);
    // Without a judge the defaults leave judge criteria out of the explicit score: the programmatic
    // criteria give one, equal to the core's with the same option (before, every score was empty).
    expect(await page.getByTestId('explicit-unresolved').inputValue()).toBe('skip');
    expect(await page.getByTestId('no-judge-note').textContent()).toContain('left out of the explicit score');
    const explicit = await page.$$eval('[data-testid="sample-verdicts"] tbody tr', (trs) =>
      Object.fromEntries(
        trs.map((tr) => [
          (tr as HTMLElement).dataset.key!,
          tr.querySelector('[data-agg="explicit"]')!.textContent!.trim(),
        ]),
      ),
    );
    const skip = { ...DEFAULT_EXPLICIT_OPTIONS, unresolved: 'skip' as const };
    expect(explicit).toEqual(
      Object.fromEntries(
        [...expected].map(([k, sc]) => [k, fmt3(reaggregate(sc, BIRD_RUBRIC.items, skip).explicit?.score)]),
      ),
    );
    expect(Object.values(explicit).filter((v) => /^\d/.test(v)).length).toBeGreaterThan(0);
    // The results came into view when scoring ended (they are below the editor).
    await expect
      .poll(() => page.getByTestId('rubric-results').evaluate((el) => Math.round(el.getBoundingClientRect().top)))
      .toBeLessThan(400);
    // "Judge vs EX" with no judge says so, and never claims what "the judge" rewards.
    expect(await page.getByTestId('no-judge').isVisible()).toBe(true);
    expect(await page.getByTestId('rewarded-wrong').textContent()).toMatch(/^\s*The rubric score rewards/);
    // With no implicit score (no judge), "Judge vs EX" compares the explicit one with EX.
    expect(await page.getByTestId('matrix-score').inputValue()).toBe('explicit');
    await screenshot(page, 'rubric-no-judge-1400x1000.png', true);
    expect(await seriousViolations(page)).toEqual([]);
  });
  it('says when every judge answer so far was unparseable (a loopback judge that never answers in the format)', async () => {
    const garbage = await startLoopbackOpenAi({
      models: ['garbage-judge'],
      respond: () => 'I would rather not grade this query.',
    });
    try {
      await page.getByRole('button', { name: 'Demo SQL rubric', exact: true }).click();
      await page.getByTestId('judge-choice').selectOption('openai');
      await page.getByTestId('judge-openai-url').fill(garbage.url);
      await page.getByTestId('judge-openai-model').fill('garbage-judge');
      await page.getByTestId('score-start').click();
      await expect
        .poll(
          async () =>
            (await page
              .getByTestId('score-progress')
              .textContent()
              .catch(() => '')) ?? '',
          { timeout: 60_000 },
        )
        .toMatch(/every judge answer so far \(\d+\) was unparseable/);
      expect(garbage.calls()).toBeGreaterThan(0);
      await page.getByRole('button', { name: 'Cancel' }).click();
      await page.getByTestId('score-error').waitFor();
    } finally {
      await garbage.close();
    }
  });
});
