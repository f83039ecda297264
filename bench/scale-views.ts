/**
 * `npm run bench:scale -- [--samples N] [--reps R] [--views explorer,rl,compare,series] [--out FILE]`: the app's views on two stored
 * runs of N samples (default 500,000; 64 per question), and the series view on a stored training
 * run of 40 steps x 1,534 questions x 8 samples (490,880; its grid scrolled), each view opened R times (default 10)
 * from a freshly loaded Runs page, as a user goes there: the longest main-thread task
 * (PerformanceObserver `longtask`) from the route change to the view drawn, and 500 ms after.
 * The target is for no task over 50 ms at 500,000 samples; `npm run bench` measures the same at
 * 100,032 samples once per round (bench/browser-scale.ts), this measures the spread.
 *
 * Keys per view (explorer, rl, compare): `scale_<view>_longest_task_ms_max` and `_median` over
 * the repetitions, `scale_<view>_reps_over_50ms`, `scale_<view>_shown_ms_median`. Every
 * repetition's long tasks are in the meta.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { viteBuild } from '../tests/browser/vite-build.ts';
import { launchChromium, serveStatic, watchPage } from '../tests/browser/harness.ts';
import { browserBenchSkipReason, median, newContext } from './browser.ts';
import { SCALE_PER_QUESTION, SERIES_SCALE, seriesViaRoute, viaRoute } from './browser-scale.ts';

const VIEWS = ['explorer', 'rl', 'compare', 'series'] as const;
type View = (typeof VIEWS)[number];

interface Args {
  samples: number;
  reps: number;
  views: View[];
  out: string | null;
}

function fail(msg: string): never {
  process.stderr.write(`bench:scale: ${msg}\n`);
  process.exit(2);
}

function parseArgs(argv: string[]): Args {
  const args: Args = { samples: 500_000, reps: 10, views: [...VIEWS], out: null };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const int = (name: string) => {
      const v = Number(argv[++i]);
      if (!Number.isInteger(v) || v < 1) fail(`${name} needs a positive integer`);
      return v;
    };
    if (a === '--samples') args.samples = int('--samples');
    else if (a === '--reps') args.reps = int('--reps');
    else if (a === '--views') {
      const list = (argv[++i] ?? '').split(',');
      const bad = list.filter((v) => !(VIEWS as readonly string[]).includes(v));
      if (bad.length > 0 || list.length === 0)
        fail(`--views takes a comma-separated list of ${VIEWS.join(', ')} (got ${bad.join(', ') || 'nothing'})`);
      args.views = list as View[];
    } else if (a === '--out') args.out = argv[++i] ?? fail('--out needs a file');
    else if (a === '--help' || a === '-h') {
      process.stdout.write(
        'usage: npm run bench:scale -- [--samples N] [--reps R] [--views explorer,rl,compare,series] [--out FILE]\n',
      );
      process.exit(0);
    } else fail(`unknown argument ${a}`);
  }
  return args;
}

const log = (m: string) => process.stderr.write(`[bench:scale] ${m}\n`);

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const skip = browserBenchSkipReason();
  if (skip) fail(skip);
  const questions = Math.ceil(args.samples / SCALE_PER_QUESTION);
  const n = questions * SCALE_PER_QUESTION;
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'bench-scale-'));
  const dist = path.join(tmp, 'dist');
  log('building the app (vite build)...');
  await viteBuild(['--outDir', dist]);
  await viteBuild([path.join('bench', 'browser'), '--outDir', path.join(dist, '__bench'), '--base', './']);
  const server = await serveStatic(dist);
  const browser = await launchChromium();
  try {
    const context = await newContext(browser);
    const writer = await context.newPage();
    await writer.goto(server.url + '__bench/index.html');
    await writer.waitForFunction(() => typeof window.benchIdbWrite === 'function');
    const runViews = args.views.some((v) => v !== 'series');
    const a = { runId: '', stored: n };
    const b = { runId: '', stored: n };
    if (runViews) {
      log(`storing 2 runs of ${n} samples (${questions} questions x ${SCALE_PER_QUESTION})...`);
      Object.assign(
        a,
        await writer.evaluate(([count, per]) => window.benchIdbWrite!(count!, per), [n, SCALE_PER_QUESTION]),
      );
      Object.assign(
        b,
        await writer.evaluate(([count, per]) => window.benchIdbWrite!(count!, per), [n, SCALE_PER_QUESTION]),
      );
    }
    let seriesId = '';
    if (args.views.includes('series')) {
      const { steps, questions: q, perQuestion } = SERIES_SCALE;
      log(`storing a training run of ${steps} steps x ${q} questions x ${perQuestion}...`);
      seriesId = (await writer.evaluate(([s, qq, p]) => window.benchSeriesWrite!(s!, qq!, p!), [steps, q, perQuestion]))
        .seriesId;
    }
    await writer.close();
    if (a.stored !== n || b.stored !== n) fail(`stored ${a.stored} and ${b.stored} samples, expected ${n}`);
    const page = await context.newPage();
    const watch = watchPage(page);
    const views: Record<Exclude<View, 'series'>, [string, string]> = {
      explorer: [
        `#/run/${encodeURIComponent(a.runId)}/items`,
        '[data-testid="explorer"][data-complete="true"] [data-testid="item-list"] [role="option"]',
      ],
      rl: [`#/run/${encodeURIComponent(a.runId)}/rl`, '[data-testid="rl-page"][data-loaded="true"]'],
      compare: [
        `#/compare/${encodeURIComponent(a.runId)}/${encodeURIComponent(b.runId)}`,
        '[data-testid="compare-page"][data-ready="true"] [data-testid="compare-result"][data-drawn="true"] [data-testid="compare-questions"][data-drawn="true"]',
      ],
    };
    const keys: Record<string, number> = {};
    const reps: Record<string, { shown_ms: number; long_tasks_ms: number[] }[]> = {};
    for (const view of args.views) {
      reps[view] = [];
      for (let r = 0; r < args.reps; r++) {
        const got =
          view === 'series'
            ? await seriesViaRoute(page, server.url, seriesId)
            : await viaRoute(page, server.url, views[view][0], views[view][1]);
        const tasks = got.tasks.map((t) => t.duration_ms);
        reps[view].push({ shown_ms: Math.round(got.shownMs), long_tasks_ms: tasks });
        log(
          `${view} ${r + 1}/${args.reps}: shown in ${Math.round(got.shownMs)} ms, long tasks [${got.tasks.map((t) => `${t.duration_ms} at ${t.start_ms}`).join(', ')}] ms (at: ms after the route change)`,
        );
      }
      const longest = reps[view].map((x) => Math.max(0, ...x.long_tasks_ms));
      keys[`scale_${view}_longest_task_ms_max`] = Math.max(...longest);
      keys[`scale_${view}_longest_task_ms_median`] = median(longest);
      keys[`scale_${view}_reps_over_50ms`] = longest.filter((x) => x > 50).length;
      keys[`scale_${view}_shown_ms_median`] = median(reps[view].map((x) => x.shown_ms));
    }
    if (watch.problems.length > 0) fail(`the page reported problems: ${watch.problems.join('; ')}`);
    const report = {
      keys,
      meta: {
        samples: n,
        questions,
        series: args.views.includes('series') ? SERIES_SCALE : null,
        per_question: SCALE_PER_QUESTION,
        reps: args.reps,
        load_average: os.loadavg(),
        chromium: browser.version(),
        runs: reps,
      },
    };
    const text = JSON.stringify(report, null, 1) + '\n';
    if (args.out) writeFileSync(args.out, text);
    process.stdout.write(text);
  } finally {
    await browser.close();
    await server.close();
    rmSync(tmp, { recursive: true, force: true });
  }
}

await main();
