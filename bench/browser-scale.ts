/**
 * The browser keys at RL scale, through the built app in headless Chromium:
 *
 * - `idb_write_samples_per_s_100k`: the benchmark page (bench/browser/idb-write.ts) stores a run
 *   of 100,032 samples (1,563 questions x 64; `--quick`: 12,800), with the store's own SampleWriter as a replay run does;
 * - `idb_reopen_run_ms_100k`: a fresh page of the app opens that run's item explorer, from
 *   navigation to the first item row in the DOM;
 * - `browser_rl_view_longest_task_ms_100k`: from the Runs page, the app goes to the run's RL view;
 *   the longest main-thread task (PerformanceObserver `longtask`, installed before the page
 *   loads) from the route change to the statistics on screen, and 500 ms after (the Runs page
 *   freshly loaded and settled first, so the app's start-up is not counted). The Compare view
 *   of that run against a second one is measured the same way (reported beside it).
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { watchPage, type PageWatch } from '../tests/browser/harness.ts';
import { newContext, pageTimes } from './browser.ts';
import type { IdbWriteResult } from './browser/idb-write.ts';

export const SCALE_PER_QUESTION = 64;
/** 1,563 questions x 64 (a whole number of questions, so every one has n = 64); `--quick`: 200 x 64. */
export const SCALE_SAMPLES = 1563 * SCALE_PER_QUESTION;
export const SCALE_SAMPLES_QUICK = 200 * SCALE_PER_QUESTION;
export const SETTLE_MS = 500;

export function checkPage(watch: PageWatch, what: string): void {
  if (watch.problems.length > 0) throw new Error(`${what}: the page reported problems: ${watch.problems.join('; ')}`);
}

/** The benchmark page (bench/browser/) in `context`, once its `fn` is defined; its problems watched. */
export async function openBenchPage(
  context: BrowserContext,
  base: string,
  fn: 'benchIdbWrite' | 'benchSeriesWrite',
): Promise<{ writer: Page; wWatch: PageWatch }> {
  const writer = await context.newPage();
  const wWatch = watchPage(writer);
  await writer.goto(base + '__bench/index.html');
  await writer.waitForFunction((name) => typeof window[name] === 'function', fn);
  return { writer, wWatch };
}

/**
 * A fresh page of the app on stored run `runId`'s item explorer, once its first row is there;
 * throws unless the explorer lists `n` items.
 */
export async function reopenRun(
  context: BrowserContext,
  base: string,
  runId: string,
  n: number,
): Promise<{ page: Page; watch: PageWatch }> {
  const page = await context.newPage();
  const watch = watchPage(page);
  await page.goto(`${base}#/run/${encodeURIComponent(runId)}/items`);
  await page.locator('[data-testid="item-list"] [role="option"]').first().waitFor({ timeout: 60_000 });
  const setsize = await page.locator('[data-testid="item-list"] [role="option"]').first().getAttribute('aria-setsize');
  if (setsize !== String(n)) throw new Error(`the reopened run lists ${setsize} items, expected ${n}`);
  return { page, watch };
}

/** Longest task overlapping [from, to] on the page's clock. */
export async function longestSince(
  page: Page,
  from: number,
): Promise<{ longest: number; tasks: { start_ms: number; duration_ms: number }[] }> {
  const times = await pageTimes(page);
  const tasks = times.longtasks.filter((t) => t.start + t.duration >= from);
  return {
    longest: Math.max(0, ...tasks.map((t) => t.duration)),
    tasks: tasks.map((t) => ({ start_ms: Math.round(t.start - from), duration_ms: Math.round(t.duration) })),
  };
}

/** Goes from the settled Runs page to `hash`, waits for `selector`; the long tasks since the route change. */
export async function viaRoute(page: Page, base: string, hash: string, selector: string) {
  // A fresh document: the explorer measured before leaves 100,000 samples for the collector.
  await page.goto(base + '#/runs');
  await page.reload();
  await page.locator('main').first().waitFor();
  await page.waitForTimeout(1500);
  const from = await page.evaluate((h) => {
    const t = performance.now();
    location.hash = h;
    return t;
  }, hash);
  await page.locator(selector).first().waitFor({ timeout: 180_000 });
  const shownMs = (await page.evaluate(() => performance.now())) - from;
  await page.waitForTimeout(SETTLE_MS);
  return { ...(await longestSince(page, from)), shownMs };
}

export async function measureScale(browser: Browser, base: string, n: number, log: (m: string) => void) {
  const context = await newContext(browser);
  try {
    const { writer, wWatch } = await openBenchPage(context, base, 'benchIdbWrite');
    log(`browser: storing 2 runs of ${n} samples (${SCALE_PER_QUESTION} per question) in IndexedDB...`);
    const w: IdbWriteResult = await writer.evaluate(
      ([count, per]) => window.benchIdbWrite!(count!, per),
      [n, SCALE_PER_QUESTION],
    );
    const w2: IdbWriteResult = await writer.evaluate(
      ([count, per]) => window.benchIdbWrite!(count!, per),
      [n, SCALE_PER_QUESTION],
    );
    checkPage(wWatch, 'IndexedDB writes');
    await writer.close();
    if (w.stored !== n || w2.stored !== n)
      throw new Error(`stored ${w.stored} and ${w2.stored} samples, expected ${n}`);

    log(`browser: reopening the ${n}-sample run in the item explorer...`);
    const { page, watch } = await reopenRun(context, base, w.runId, n);
    const reopen = await pageTimes(page);
    if (reopen.firstRowAt === null) throw new Error('the first item row was not seen');
    await page.locator('[data-testid="explorer"][data-complete="true"]').waitFor({ timeout: 120_000 });
    const completeMs = await page.evaluate(() => performance.now());
    // The app's start-up comes before the first row; what follows is reading and indexing the whole run.
    const explorerLongest = Math.max(
      0,
      ...(await pageTimes(page)).longtasks
        .filter((t) => t.start + t.duration >= reopen.firstRowAt!)
        .map((t) => t.duration),
    );

    log(`browser: the RL view of the ${n}-sample run...`);
    const rl = await viaRoute(
      page,
      base,
      `#/run/${encodeURIComponent(w.runId)}/rl`,
      '[data-testid="rl-page"][data-loaded="true"]',
    );
    log(`browser: the Compare view of two ${n}-sample runs...`);
    const cmp = await viaRoute(
      page,
      base,
      `#/compare/${encodeURIComponent(w.runId)}/${encodeURIComponent(w2.runId)}`,
      '[data-testid="compare-page"][data-ready="true"] [data-testid="compare-result"][data-drawn="true"] [data-testid="compare-questions"][data-drawn="true"]',
    );
    checkPage(watch, 'RL and Compare views');
    return {
      keys: {
        idb_write_samples_per_s_100k: n / (w.writeMs / 1000),
        idb_sort_blocks_ms_100k: w.sortMs,
        idb_reopen_run_ms_100k: reopen.firstRowAt,
        browser_explorer_complete_ms_100k: completeMs,
        browser_explorer_longest_task_ms_100k: explorerLongest,
        browser_rl_view_longest_task_ms_100k: rl.longest,
        browser_rl_view_shown_ms_100k: rl.shownMs,
        browser_compare_view_longest_task_ms_100k: cmp.longest,
        browser_compare_view_shown_ms_100k: cmp.shownMs,
      },
      meta: {
        scale_samples: n,
        scale_per_question: SCALE_PER_QUESTION,
        rl_long_tasks: rl.tasks,
        compare_long_tasks: cmp.tasks,
        explorer_long_tasks: reopen.longtasks.map((t) => ({
          start_ms: Math.round(t.start),
          duration_ms: Math.round(t.duration),
        })),
      },
    };
  } finally {
    await context.close();
  }
}

/** The synthetic training run of 40 steps x 1,534 questions x 8 samples (490,880); `--quick`: 10 x 200 x 8. */
export const SERIES_SCALE = { steps: 40, questions: 1534, perQuestion: 8 };
export const SERIES_SCALE_QUICK = { steps: 10, questions: 200, perQuestion: 8 };
export const SERIES_VIEW_SELECTOR = '[data-testid="series-page"][data-loaded="true"]';

/**
 * From the settled Runs page to the series view (`#/series/<id>`): curves, table and grid drawn,
 * then the question grid scrolled (20 wheel turns over it, 60 ms apart) and 500 ms after; the
 * long tasks since the route change.
 */
export async function seriesViaRoute(page: Page, base: string, seriesId: string) {
  await page.goto(base + '#/runs');
  await page.reload();
  await page.locator('main').first().waitFor();
  await page.waitForTimeout(1500);
  const from = await page.evaluate(
    (h) => {
      const t = performance.now();
      location.hash = h;
      return t;
    },
    `#/series/${encodeURIComponent(seriesId)}`,
  );
  await page.locator(SERIES_VIEW_SELECTOR).waitFor({ timeout: 300_000 });
  const shownMs = (await page.evaluate(() => performance.now())) - from;
  const grid = page.getByTestId('question-grid');
  await grid.scrollIntoViewIfNeeded();
  const box = (await grid.boundingBox())!;
  await page.mouse.move(box.x + box.width / 2, box.y + Math.min(box.height / 2, 200));
  for (let i = 0; i < 20; i++) {
    await page.mouse.wheel(0, 900);
    await page.waitForTimeout(60);
  }
  await page.waitForTimeout(SETTLE_MS);
  return { ...(await longestSince(page, from)), shownMs };
}

/** `browser_series_view_longest_task_ms`: the series view of a stored synthetic training run. */
export async function measureSeriesView(
  browser: Browser,
  base: string,
  scale: typeof SERIES_SCALE,
  log: (m: string) => void,
) {
  const context = await newContext(browser);
  try {
    const { writer, wWatch } = await openBenchPage(context, base, 'benchSeriesWrite');
    log(
      `browser: storing a training run of ${scale.steps} steps x ${scale.questions} questions x ${scale.perQuestion}...`,
    );
    const w = await writer.evaluate(
      ([s, q, n]) => window.benchSeriesWrite!(s!, q!, n!),
      [scale.steps, scale.questions, scale.perQuestion],
    );
    checkPage(wWatch, 'series writes');
    await writer.close();
    const page = await context.newPage();
    const watch = watchPage(page);
    log(`browser: the series view of ${w.samples} samples...`);
    const got = await seriesViaRoute(page, base, w.seriesId);
    checkPage(watch, 'series view');
    return {
      keys: { browser_series_view_longest_task_ms: got.longest, browser_series_view_shown_ms: got.shownMs },
      meta: { series_samples: w.samples, series_steps: w.steps, series_long_tasks: got.tasks },
    };
  } finally {
    await context.close();
  }
}
