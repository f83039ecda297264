/**
 * The browser part of `npm run bench`: the built app in headless Chromium.
 *
 * - A replay evaluation through the app, on the user's path: import Spider dev as a dataset,
 *   start a run with dev_gold.sql as the predictions file, wait for the finished run's dashboard.
 *   Long tasks of the page's main thread are recorded by a PerformanceObserver installed before
 *   the page loads; those that overlap the time from the click on "Start" (its task included) to
 *   the dashboard of the finished run count; the dashboard's drawing after that is reported apart.
 * - IndexedDB: a benchmark page served beside the app (same origin, so the same database)
 *   stores a run of 10,000 samples with the store's own SampleWriter, then a fresh page of the app
 *   opens the run's item explorer; the time from navigation to the first item row in the DOM.
 */
import { cpSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { parseQuestions } from '../src/core/formats/questions.ts';
import { buildApp, viteBuild } from '../tests/browser/vite-build.ts';
import { CHROMIUM_PATH, launchChromium, serveStatic, watchPage } from '../tests/browser/harness.ts';
import { importDataset, startRun } from '../tests/browser/workbench-helpers.ts';
import type { IdbWriteResult } from './browser/idb-write.ts';
import {
  checkPage,
  measureScale,
  openBenchPage,
  reopenRun,
  measureSeriesView,
  SCALE_SAMPLES,
  SCALE_SAMPLES_QUICK,
  SERIES_SCALE,
  SERIES_SCALE_QUICK,
} from './browser-scale.ts';
import { measurePlayground } from './playground.ts';
import { measureReport } from './report.ts';
import { SPIDER_DB_ROOT } from './items.ts';

/** Why the browser part cannot run here, or null. */
export function browserBenchSkipReason(): string | null {
  return existsSync(CHROMIUM_PATH) ? null : `${CHROMIUM_PATH} not found (apt-get install -y chromium)`;
}

/** Spider databases of the quick pass (as in tests/browser/workbench-spider.test.ts). */
const QUICK_DBS = ['concert_singer', 'pets_1', 'car_1', 'flight_2'];
/** Samples of the stored run that the app reopens. */
export const IDB_SAMPLES = 10_000;
/** A long task is one of more than 50 ms; what it takes beyond 50 ms blocks input. */
const LONG_TASK_MS = 50;
/** How long the dashboard of the finished run is watched for long tasks after it shows. */
const AFTER_RUN_MS = 2000;

/** Dev questions, dev_gold.sql and the databases, laid out as a Spider download (`database/<db>/<db>.sqlite`). */
export function spiderFolder(tmp: string, dbs: string[]): string {
  const root = path.join(tmp, 'spider');
  for (const f of ['dev.json', 'dev_gold.sql']) cpSync(path.join(SPIDER_DB_ROOT, f), path.join(root, f));
  for (const db of dbs) {
    mkdirSync(path.join(root, 'database', db), { recursive: true });
    cpSync(path.join(SPIDER_DB_ROOT, db, `${db}.sqlite`), path.join(root, 'database', db, `${db}.sqlite`));
  }
  return root;
}

interface PageTimes {
  longtasks: { start: number; duration: number }[];
  startAt: number | null;
  endAt: number | null;
  firstRowAt: number | null;
}

declare global {
  interface Window {
    __bench?: PageTimes;
  }
}

/**
 * Installed before any script of the page (page.addInitScript): the long-task observer, the
 * time of the click on "Start" and the time the finished run's dashboard (or, for a reopened
 * run, the first item row) is in the DOM, all on the page's clock (performance.now()). Plain
 * JavaScript in a string: a function would be serialised with the helpers tsx adds to it.
 */
const PROBES = `(() => {
  const times = { longtasks: [], startAt: null, endAt: null, firstRowAt: null };
  Object.defineProperty(window, '__bench', { value: times });
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) times.longtasks.push({ start: e.startTime, duration: e.duration });
  }).observe({ type: 'longtask', buffered: true });
  const watchFor = (selector, done) => {
    const mo = new MutationObserver(() => {
      if (!document.querySelector(selector)) return;
      done(performance.now());
      mo.disconnect();
    });
    mo.observe(document, { subtree: true, childList: true, attributes: true, attributeFilter: ['data-loaded'] });
  };
  if (location.hash.endsWith('/items')) {
    watchFor('[data-testid="item-list"] [role="option"]', (at) => { times.firstRowAt ??= at; });
  }
  document.addEventListener('click', (e) => {
    if (times.startAt !== null || !(e.target instanceof Element) || !e.target.closest('[data-testid="run-start"]')) return;
    times.startAt = performance.now();
    watchFor('[data-testid="dashboard"][data-loaded="true"], [data-testid="run-error"]', (at) => { times.endAt ??= at; });
  }, true);
})();`;

export async function pageTimes(page: Page): Promise<PageTimes> {
  return page.evaluate(() => window.__bench!);
}

/** A sample count as the store keeps it (`sampleMeta`), read with the raw IndexedDB API. */
function storedCount(page: Page, runId: string): Promise<number | null> {
  return page.evaluate(
    (id) =>
      new Promise<number | null>((resolve, reject) => {
        const open = indexedDB.open('rlvr-workbench');
        open.onerror = () => reject(open.error);
        open.onsuccess = () => {
          const db = open.result;
          const get = db.transaction('sampleMeta').objectStore('sampleMeta').get(id);
          get.onsuccess = () => {
            db.close();
            const meta = get.result as { count: number; sorted: boolean } | undefined;
            resolve(meta?.sorted ? meta.count : null);
          };
          get.onerror = () => reject(get.error);
        };
      }),
    runId,
  );
}

export async function newContext(browser: Browser): Promise<BrowserContext> {
  const context = await browser.newContext({ viewport: { width: 1366, height: 768 } });
  await context.addInitScript({ content: PROBES });
  return context;
}

export interface BrowserBench {
  keys: Record<string, number>;
  meta: Record<string, unknown>;
}

async function measureEval(browser: Browser, base: string, tmp: string, quick: boolean, log: (m: string) => void) {
  const questions = parseQuestions(readFileSync(path.join(SPIDER_DB_ROOT, 'dev.json'), 'utf8'), 'dev.json');
  const devDbs = [...new Set(questions.map((q) => q.dbId))].sort();
  const present = devDbs.filter((db) => existsSync(path.join(SPIDER_DB_ROOT, db, `${db}.sqlite`)));
  const dbs = quick ? QUICK_DBS : present;
  const folder = spiderFolder(tmp, dbs);
  const context = await newContext(browser);
  try {
    const page = await context.newPage();
    const watch = watchPage(page);
    await page.goto(base + '#/datasets');
    const name = `Spider dev (${dbs.length} dbs)`;
    log(`browser: importing ${name} through the app...`);
    const imported = await importDataset(page, { kind: 'spider', name, folder });
    if (!imported.ok) throw new Error(`the Spider import failed: ${imported.message}`);
    log(`browser: replay run of dev_gold.sql (${quick ? 'questions with a stored database' : 'every question'})...`);
    // The full pass runs every dev question, as a user would; the questions whose database is not
    // in the download (wta_1) end as errors without SQL. The quick pass keeps the 4 databases' questions.
    const run = await startRun(page, {
      datasetName: name,
      predictions: path.join(folder, 'dev_gold.sql'),
      name: 'bench replay',
      onlyStored: quick,
    });
    if (run.error || !run.runId) throw new Error(`the run failed: ${run.error ?? 'no run id in the address'}`);
    // The finished run's dashboard keeps drawing (charts) after it is marked loaded: its long
    // tasks are reported apart, in the AFTER_RUN_MS that follow.
    await page.waitForTimeout(AFTER_RUN_MS);
    checkPage(watch, 'replay run');
    const times = await pageTimes(page);
    if (times.startAt === null || times.endAt === null)
      throw new Error('the click on Start or the end of the run was not seen');
    const items = await storedCount(page, run.runId);
    if (!items) throw new Error(`the finished run ${run.runId} has no sorted samples`);
    // The task of the click itself starts before its listener notes the time: a task counts when
    // it overlaps the run.
    const during = times.longtasks.filter((t) => t.start + t.duration >= times.startAt! && t.start <= times.endAt!);
    const after = times.longtasks.filter((t) => t.start > times.endAt! && t.start <= times.endAt! + AFTER_RUN_MS);
    const seconds = (times.endAt - times.startAt) / 1000;
    const withDb = questions.filter((q) => dbs.includes(q.dbId)).length;
    return {
      keys: {
        browser_eval_items: items,
        browser_eval_items_with_db: Math.min(items, withDb),
        browser_eval_items_per_s: items / seconds,
        browser_eval_ms: seconds * 1000,
        browser_longest_task_ms: Math.max(0, ...during.map((t) => t.duration)),
        browser_total_blocking_ms: during.reduce((s, t) => s + Math.max(0, t.duration - LONG_TASK_MS), 0),
        browser_long_tasks: during.length,
        browser_after_run_longest_task_ms: Math.max(0, ...after.map((t) => t.duration)),
      },
      meta: {
        dataset: name,
        databases: dbs,
        run_id: run.runId,
        // Every long task of the page (import included), relative to the click on Start.
        long_tasks: times.longtasks.map((t) => ({
          start_ms: Math.round(t.start - times.startAt!),
          duration_ms: Math.round(t.duration),
        })),
      },
    };
  } finally {
    await context.close();
  }
}

async function measureIdb(browser: Browser, base: string, log: (m: string) => void) {
  const context = await newContext(browser);
  try {
    const { writer, wWatch } = await openBenchPage(context, base, 'benchIdbWrite');
    log(`browser: storing ${IDB_SAMPLES} samples in IndexedDB...`);
    const w: IdbWriteResult = await writer.evaluate((n) => window.benchIdbWrite!(n), IDB_SAMPLES);
    checkPage(wWatch, 'IndexedDB writes');
    await writer.close();
    if (w.stored !== IDB_SAMPLES) throw new Error(`stored ${w.stored} samples, expected ${IDB_SAMPLES}`);
    log(`browser: reopening the run in the app's item explorer...`);
    const { page, watch } = await reopenRun(context, base, w.runId, IDB_SAMPLES);
    checkPage(watch, 'reopened run');
    const times = await pageTimes(page);
    if (times.firstRowAt === null) throw new Error('the first item row was not seen');
    return {
      keys: {
        idb_write_samples_per_s: IDB_SAMPLES / (w.writeMs / 1000),
        idb_write_ms: w.writeMs,
        idb_sort_blocks_ms: w.sortMs,
        idb_reopen_run_ms: times.firstRowAt,
      },
      meta: {
        idb_samples: IDB_SAMPLES,
        reopen: await page.evaluate(() => {
          const nav = performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming | undefined;
          const res = performance.getEntriesByType('resource') as PerformanceResourceTiming[];
          return {
            response_end_ms: nav?.responseEnd,
            dom_content_loaded_ms: nav?.domContentLoadedEventEnd,
            load_ms: nav?.loadEventEnd,
            resources: res.map((r) => ({
              name: r.name.replace(location.origin, ''),
              start_ms: Math.round(r.startTime),
              end_ms: Math.round(r.responseEnd),
              bytes: r.encodedBodySize,
            })),
            long_tasks: window.__bench!.longtasks.map((t) => ({
              start_ms: Math.round(t.start),
              duration_ms: Math.round(t.duration),
            })),
          };
        }),
      },
    };
  } finally {
    await context.close();
  }
}

/** The median of the rounds' (or repetitions') values. */
export const median = (xs: number[]) => {
  const v = [...xs].sort((a, b) => a - b);
  return v.length % 2 ? v[(v.length - 1) / 2]! : (v[v.length / 2 - 1]! + v[v.length / 2]!) / 2;
};

/** Each key's median over the rounds. */
export function medians(rounds: Record<string, number>[]): Record<string, number> {
  return Object.fromEntries(Object.keys(rounds[0]!).map((k) => [k, median(rounds.map((r) => r[k]!))]));
}

/**
 * Builds the app and the benchmark page into `tmp`, serves them and measures both parts, `rounds`
 * times, each round in fresh browser contexts (empty storage); every key is the median of the
 * rounds, which are all kept in the meta.
 */
export async function measureBrowser(opts: {
  quick: boolean;
  rounds: number;
  tmp: string;
  log: (m: string) => void;
}): Promise<BrowserBench> {
  const { tmp, log } = opts;
  const dist = path.join(tmp, 'dist');
  const t0 = performance.now();
  log('browser: building the app (vite build)...');
  await buildApp(dist);
  await viteBuild([path.join('bench', 'browser'), '--outDir', path.join(dist, '__bench'), '--base', './']);
  const buildMs = performance.now() - t0;
  const server = await serveStatic(dist);
  let browser: Browser | null = null;
  try {
    browser = await launchChromium();
    const evals: Awaited<ReturnType<typeof measureEval>>[] = [];
    const idbs: Awaited<ReturnType<typeof measureIdb>>[] = [];
    const scales: Awaited<ReturnType<typeof measureScale>>[] = [];
    const series: Awaited<ReturnType<typeof measureSeriesView>>[] = [];
    const playgrounds: Awaited<ReturnType<typeof measurePlayground>>[] = [];
    for (let r = 0; r < opts.rounds; r++) {
      log(`browser round ${r + 1}/${opts.rounds}`);
      evals.push(await measureEval(browser, server.url, tmp, opts.quick, log));
      idbs.push(await measureIdb(browser, server.url, log));
      scales.push(await measureScale(browser, server.url, opts.quick ? SCALE_SAMPLES_QUICK : SCALE_SAMPLES, log));
      series.push(await measureSeriesView(browser, server.url, opts.quick ? SERIES_SCALE_QUICK : SERIES_SCALE, log));
      playgrounds.push(await measurePlayground(browser, server.url, log));
    }
    // The report opens from disk, not from the server: its rounds are its own.
    const report = await measureReport(browser, tmp, opts.rounds, log, opts.quick);
    return {
      keys: {
        ...medians(evals.map((e) => e.keys)),
        ...medians(idbs.map((e) => e.keys)),
        ...medians(scales.map((e) => e.keys)),
        ...report.keys,
        ...medians(series.map((e) => e.keys)),
        ...medians(playgrounds.map((e) => e.keys)),
      },
      meta: {
        build_ms: buildMs,
        chromium: browser.version(),
        report: report.meta,
        rounds: evals.map((e, i) => ({
          eval: { ...e.keys, ...e.meta },
          idb: { ...idbs[i]!.keys, ...idbs[i]!.meta },
          scale: { ...scales[i]!.keys, ...scales[i]!.meta },
          series: { ...series[i]!.keys, ...series[i]!.meta },
          playground: { ...playgrounds[i]!.keys, ...playgrounds[i]!.meta },
        })),
      },
    };
  } finally {
    await browser?.close();
    await server.close();
  }
}
