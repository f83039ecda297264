/**
 * The Generate screen end to end in the built app (headless Chromium): the embedded demo
 * dataset imported through the Datasets page, the REAL stories260K.gguf picked with the file
 * input and loaded on the CPU engine, a run of the first 3 questions started from the page,
 * live progress seen, the finished run opened in the dashboard; then the page is reloaded and
 * the run is still listed, and the explorer shows each sample's prompt and completion (a
 * story: extraction rule `none`, EX 0).
 */
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { sharedData } from '../helpers/shared-data.ts';
import { browserSkipReason, suiteTitle } from './harness.ts';
import { DEMO_ROOT } from './node-reference.ts';
import { type AppSession, closeAppAfter, importDataset, openApp, screenshot } from './workbench-helpers.ts';

describe.skipIf(browserSkipReason())(suiteTitle('Generate screen with the real GGUF model on the CPU engine'), () => {
  let { server, browser, page, watch } = {} as AppSession;

  beforeAll(async () => {
    ({ server, browser, page, watch } = await openApp());
  });
  closeAppAfter(() => ({ server, browser, watch }));

  it('generates 3 questions, stores each sample with its prompt and completion, and shows the run after a reload', async () => {
    const t0 = Date.now();
    await page.goto(server.url + '#/datasets');
    const imported = await importDataset(page, {
      kind: 'bird', name: 'Demo library',
      files: ['questions.json', 'gold.sql', 'city_library/city_library.sqlite'].map((f) => path.join(DEMO_ROOT, f)),
    });
    expect(imported.ok, imported.message).toBe(true);

    await page.getByTestId('nav-generate').click();
    await page.getByTestId('generate-page').waitFor();
    await page.getByTestId('gguf-file').setInputFiles(sharedData('models', 'stories260K.gguf'));
    await page.getByTestId('engine-load').click();
    await expect.poll(async () => (await page.getByTestId('engine-loaded').textContent()) ?? '', { timeout: 60_000 }).toContain('wllama · stories260K.gguf');
    // The device llama.cpp actually used, read from its log, with the fallback reason; and the machine check's advice.
    const device = page.getByTestId('engine-device');
    expect(await device.getAttribute('data-device')).toBe('cpu');
    expect(await device.textContent()).toMatch(/Ran on: CPU — .*(WebGPU|adapter|shader-f16)/);
    expect(await page.getByTestId('engine-advice').getAttribute('data-advice')).toBe('gguf-cpu');

    await page.getByTestId('gen-subset').selectOption('first');
    await page.getByTestId('gen-first-n').fill('3');
    await page.getByTestId('gen-max-tokens').fill('16');
    await page.getByTestId('gen-preview').click();
    await expect.poll(async () => (await page.getByTestId('gen-preview-text').textContent()) ?? '', { timeout: 30_000 }).toContain('CREATE TABLE');
    expect(await page.getByTestId('gen-preview-note').textContent()).toMatch(/tokens \(the engine's tokenizer\) of 2032 available/);
    await screenshot(page, 'generation-page.png', true);
    await page.getByTestId('gen-name').fill('stories on the demo');
    await page.getByTestId('gen-start').click();
    await page.getByTestId('gen-progress').waitFor({ timeout: 30_000 });

    // A finished run opens in the dashboard.
    await page.waitForURL(/#\/run\/[^/]+$/, { timeout: 90_000 });
    const runId = decodeURIComponent(page.url().split('#/run/')[1]!);
    await screenshot(page, 'generation-dashboard.png');

    await page.reload();
    await page.getByTestId('nav-runs').click();
    await expect.poll(async () => (await page.locator('main').textContent()) ?? '', { timeout: 30_000 }).toContain('stories on the demo');

    for (const index of [0, 1, 2]) {
      await page.goto(`${server.url}#/run/${encodeURIComponent(runId)}/items/${index}.0`);
      const detail = page.getByTestId('item-detail');
      await detail.waitFor();
      expect(await detail.getAttribute('data-ex')).toBe('0');
      const prompt = page.getByTestId('sample-prompt');
      await prompt.locator('summary').click();
      const text = ((await prompt.textContent()) ?? '').replace(/\s+/g, ' ');
      expect(text).toContain('CREATE TABLE');
      expect(text).toMatch(/bird-minidev-v1, \d+ tokens/);
      expect(text).toMatch(/wllama · stories260K\.gguf · \d+ tokens in, \d+ out · \d+ ms · (stop|length) · seed 0/);
      expect(await detail.textContent()).toContain('Completion the SQL was extracted from (none)');
    }
    await screenshot(page, 'generation-explorer.png');
    console.log(`generate screen: ${Date.now() - t0} ms (import, load, 3 samples, reload, explorer)`);
  });

  it('pauses from the page, and after a reload resumes with the model picked again, without duplicate samples', async () => {
    const t0 = Date.now();
    await page.goto(server.url + '#/generate');
    await page.getByTestId('gguf-file').setInputFiles(sharedData('models', 'stories260K.gguf'));
    await page.getByTestId('engine-load').click();
    await expect.poll(async () => (await page.getByTestId('engine-loaded').textContent()) ?? '', { timeout: 60_000 }).toContain('stories260K.gguf');
    await page.getByTestId('gen-subset').selectOption('first');
    await page.getByTestId('gen-first-n').fill('3');
    await page.getByTestId('gen-n').fill('2');
    await page.getByTestId('gen-temperature').fill('0.8');
    await page.getByTestId('gen-max-tokens').fill('48');
    await page.getByTestId('gen-name').fill('paused stories');
    await page.getByTestId('gen-start').click();
    await expect.poll(async () => Number((await page.getByTestId('gen-done').textContent().catch(() => '0')) ?? 0), { timeout: 60_000 }).toBeGreaterThanOrEqual(2);
    await page.getByTestId('gen-pause').click();
    const finished = page.getByTestId('gen-finished');
    await finished.waitFor({ timeout: 30_000 });
    expect(await finished.getAttribute('data-outcome')).toBe('paused');

    await page.reload();
    await page.getByTestId('generate-page').waitFor();
    await page.getByTestId('gen-unfinished').waitFor({ timeout: 15_000 });
    expect(await page.getByTestId('gen-unfinished').textContent()).toContain('paused stories');
    await page.getByTestId('gguf-file').setInputFiles(sharedData('models', 'stories260K.gguf'));
    await page.getByTestId('engine-load').click();
    await expect.poll(async () => (await page.getByTestId('engine-loaded').textContent()) ?? '', { timeout: 60_000 }).toContain('stories260K.gguf');
    await page.getByTestId('gen-resume').first().click();
    await page.waitForURL(/#\/run\/[^/]+$/, { timeout: 90_000 });
    const runId = decodeURIComponent(page.url().split('#/run/')[1]!);

    const keys = await page.evaluate(async (id) => {
      const db = await new Promise<IDBDatabase>((resolve, reject) => {
        const r = indexedDB.open('rlvr-workbench');
        r.onsuccess = () => resolve(r.result);
        r.onerror = () => reject(r.error);
      });
      const blocks = await new Promise<Array<{ runId: string; samples: Array<{ index: number; sample: number }> }>>((resolve, reject) => {
        const r = db.transaction('sampleBlocks').objectStore('sampleBlocks').getAll();
        r.onsuccess = () => resolve(r.result);
        r.onerror = () => reject(r.error);
      });
      db.close();
      return blocks.filter((b) => b.runId === id).flatMap((b) => b.samples.map((s) => `${s.index}/${s.sample}`));
    }, runId);
    expect(keys).toEqual(['0/0', '0/1', '1/0', '1/1', '2/0', '2/1']);
    console.log(`pause, reload, resume: ${Date.now() - t0} ms`);
  });
});
