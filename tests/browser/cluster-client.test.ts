/**
 * The OpenAI-compatible engine as a cluster client, from the Generate screen of the built app
 * (headless Chromium): "Requests in flight" set to 8 on the engine panel is what the server
 * sees, so a run keeps more than the former fixed 4 questions going (6 reach the server:
 * Chromium's limit of HTTP/1.1 connections per host). The model is a
 * loopback OpenAI server (test double: no model weights can be served here) that answers
 * each question's gold SQL after 1 s and counts the requests it holds at once.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseQuestions } from '../../src/core/formats/questions.ts';
import { browserSkipReason, builtAppDir, launchChromium, serveStatic, suiteTitle, type StaticServer } from './harness.ts';
import { startLoopbackOpenAi, type LoopbackModels } from './loopback-openai.ts';
import { DEMO_ROOT } from './node-reference.ts';
import { importDataset, laptopPage, officialCells } from './workbench-helpers.ts';

const questions = parseQuestions(readFileSync(path.join(DEMO_ROOT, 'questions.json'), 'utf8'), 'questions.json');

describe.skipIf(browserSkipReason())(suiteTitle('OpenAI-compatible engine: requests in flight set on the panel (loopback server test double)'), () => {
  let server: StaticServer;
  let browser: Browser;
  let page: Page;
  let model: LoopbackModels;

  beforeAll(async () => {
    server = await serveStatic(builtAppDir());
    browser = await launchChromium();
    page = await laptopPage(browser);
    model = await startLoopbackOpenAi({
      models: ['cluster-model'],
      // The gold SQL of the question the prompt asks, so the run also scores EX 1 on each.
      respond: (body) => questions.find((q) => body.messages.at(-1)!.content.includes(q.question))?.goldSql ?? 'SELECT 0',
      delayMs: () => 1000,
    });
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await model?.close();
  });

  it('keeps as many questions in flight as the panel allows, and scores every answer', async () => {
    await page.goto(server.url + '#/datasets');
    const imported = await importDataset(page, {
      kind: 'bird', name: 'Demo library',
      files: ['questions.json', 'gold.sql', 'city_library/city_library.sqlite'].map((f) => path.join(DEMO_ROOT, f)),
    });
    expect(imported.ok, imported.message).toBe(true);
    await page.getByTestId('nav-generate').click();
    await page.getByTestId('generate-page').waitFor();
    await page.locator('input[name="engine"][value="openai"]').check();
    await page.getByTestId('openai-url').fill(model.url);
    await page.getByTestId('openai-model').fill('cluster-model');
    await page.getByTestId('openai-concurrency').fill('8');
    await page.getByTestId('openai-retries').fill('2');
    await page.getByTestId('engine-load').click();
    await page.getByTestId('engine-loaded').filter({ hasText: 'openai · cluster-model' }).waitFor({ timeout: 30_000 });
    await page.getByTestId('gen-subset').selectOption('first');
    await page.getByTestId('gen-first-n').fill('16');
    await page.getByTestId('gen-name').fill('cluster client');
    await page.getByTestId('gen-start').click();
    await page.waitForURL(/#\/run\/[^/]+$/, { timeout: 90_000 });
    expect(model.calls()).toBe(16);
    expect(model.maxInFlight()).toBeGreaterThan(4);
    // Chromium opens at most 6 HTTP/1.1 connections per host: 8 asked, 6 reach the server.
    expect(model.maxInFlight()).toBeLessThanOrEqual(6);
    console.log(`max requests in flight: ${model.maxInFlight()}`);
    // Every answer is its question's gold SQL: EX 100 on the dashboard.
    await expect.poll(async () => (await officialCells(page)).ex?.total, { timeout: 30_000 }).toBe('100.00');
  }, 180_000);
});
