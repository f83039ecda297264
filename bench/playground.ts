/**
 * `browser_playground_typing_longest_task_ms`: the reward playground on the embedded
 * demo's first question, in a fresh profile. Its gold SQL is typed into the editor key by key
 * (5 ms apart: every keystroke schedules an attempt, which runs in the page's SQL worker, and
 * cancels the one before), then the bench waits until the verdict of the whole text shows and
 * 500 ms more. The key is the longest main-thread task from the first keystroke to then (the
 * page's `longtask` observer, installed before its first script); the tasks are in the meta.
 */
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { DEMO_DATASET_NAME } from '../src/ui/home/demo-library.svelte.ts';
import { launchChromium, serveStatic, waitForDemo, watchPage } from '../tests/browser/harness.ts';
import { viteBuild } from '../tests/browser/vite-build.ts';
import { playgroundSettled } from '../tests/browser/workbench-helpers.ts';
import { medians, newContext } from './browser.ts';
import { checkPage, longestSince, SETTLE_MS } from './browser-scale.ts';

export async function measurePlayground(browser: Browser, base: string, log: (m: string) => void) {
  const context = await newContext(browser);
  try {
    const page = await context.newPage();
    const watch = watchPage(page);
    await page.goto(base + '#/');
    await waitForDemo(page, 300_000);
    await page.evaluate(() => (location.hash = '#/playground'));
    await page.getByTestId('pg-dataset').selectOption({ label: DEMO_DATASET_NAME });
    await playgroundSettled(page);
    const sql = (await page.getByTestId('pg-gold-sql').textContent())!.trim();
    log(`browser: typing ${sql.length} characters into the playground...`);
    const editor = page.getByTestId('pg-editor');
    await editor.fill('');
    await page.waitForTimeout(SETTLE_MS);
    const from = await page.evaluate(() => performance.now());
    await editor.pressSequentially(sql, { delay: 5 });
    await playgroundSettled(page);
    await page.waitForTimeout(SETTLE_MS);
    const got = await longestSince(page, from);
    const ex = await page.getByTestId('attempt-verdict').getAttribute('data-ex');
    if (ex !== '1') throw new Error(`the playground: the typed gold SQL scored EX ${ex}, not 1`);
    checkPage(watch, 'playground');
    return {
      keys: { browser_playground_typing_longest_task_ms: got.longest },
      meta: { playground_typed_chars: sql.length, playground_long_tasks: got.tasks },
    };
  } finally {
    await context.close();
  }
}

/** `npm run bench -- --only playground [--rounds N]`: the app built into `tmp`, served, measured `rounds` times (the median). */
export async function measurePlaygroundOnly(tmp: string, rounds: number, log: (m: string) => void) {
  const dist = path.join(tmp, 'dist');
  log('browser: building the app (vite build)...');
  await viteBuild(['--outDir', dist]);
  const server = await serveStatic(dist);
  const browser = await launchChromium();
  try {
    const got: Awaited<ReturnType<typeof measurePlayground>>[] = [];
    for (let r = 0; r < rounds; r++) got.push(await measurePlayground(browser, server.url, log));
    return { keys: medians(got.map((g) => g.keys)), meta: { rounds: got.map((g) => ({ ...g.keys, ...g.meta })) } };
  } finally {
    await browser.close();
    await server.close();
  }
}
