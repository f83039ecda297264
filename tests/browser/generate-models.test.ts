/**
 * The Generate screen's own-models and template panels in the built app (headless Chromium):
 * - a local MLC model folder of small fake files, picked with the folder input, is imported
 *   into WebLLM's Cache API with no network; the cache listing shows it with its size (the
 *   bytes web-llm keeps under webllm/model); it is deleted with the in-page confirm;
 * - a custom checkpoint served by a loopback server (127.0.0.1, CORS) that lacks a weight
 *   shard is added; the preflight names the missing file and its URL in plain words, and the
 *   record survives a reload;
 * - "Edit as new template" on the official mini-dev template: a draft without {{question}} is
 *   refused with the reason; a valid one is saved as my-bird-minidev-v1, selected, used by the
 *   prompt preview and by a one-question run (the real stories260K.gguf on the CPU engine),
 *   whose stored sample names it; kept after a reload; editing it again makes my-bird-minidev-v2.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sharedData } from '../helpers/shared-data.ts';
import { browserSkipReason, suiteTitle, type PageWatch, type StaticServer } from './harness.ts';

import { closeAppAfter, openApp, screenshot, importDemoLibrary } from './workbench-helpers.ts';

const MODEL = 'fake-coder-q4f32_1-MLC';

/** A folder shaped like an MLC model (not loadable): returns its path and the bytes web-llm's model cache will hold. */
function fakeModelFolder(root: string): { dir: string; modelBytes: number } {
  const dir = path.join(root, MODEL);
  mkdirSync(dir, { recursive: true });
  const files: Record<string, string | Buffer> = {
    'mlc-chat-config.json': JSON.stringify({
      model_type: 'qwen2',
      quantization: 'q4f32_1',
      context_window_size: 2048,
      tokenizer_files: ['tokenizer.json', 'vocab.json'],
    }),
    'tensor-cache.json': JSON.stringify({
      metadata: { ParamSize: 2, ParamBytes: 3000 },
      records: [
        { dataPath: 'params_shard_0.bin', format: 'raw-shard', nbytes: 1000, records: [] },
        { dataPath: 'params_shard_1.bin', format: 'raw-shard', nbytes: 2000, records: [] },
      ],
    }),
    'params_shard_0.bin': Buffer.alloc(1000, 1),
    'params_shard_1.bin': Buffer.alloc(2000, 2),
    'tokenizer.json': JSON.stringify({ model: { type: 'BPE', vocab: { a: 0 } } }),
    'vocab.json': '{"a":0}',
    'fake-coder-q4f32_1-webgpu.wasm': Buffer.from([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0]),
  };
  for (const [name, body] of Object.entries(files)) writeFileSync(path.join(dir, name), body);
  const inModelCache = ['tensor-cache.json', 'params_shard_0.bin', 'params_shard_1.bin', 'tokenizer.json'];
  return { dir, modelBytes: inModelCache.reduce((n, f) => n + Buffer.byteLength(files[f]!), 0) };
}

/** A loopback model server with CORS that has every file of /ckpt but params_shard_1.bin. */
async function partialModelServer(): Promise<{ server: Server; url: string }> {
  const files: Record<string, string> = {
    'mlc-chat-config.json': JSON.stringify({
      quantization: 'q4f32_1',
      context_window_size: 4096,
      tokenizer_files: ['tokenizer.json'],
    }),
    'tensor-cache.json': JSON.stringify({
      records: [
        { dataPath: 'params_shard_0.bin', nbytes: 10 },
        { dataPath: 'params_shard_1.bin', nbytes: 10 },
      ],
    }),
    'params_shard_0.bin': '0123456789',
    'tokenizer.json': '{}',
  };
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const cors = {
      'Access-Control-Allow-Origin': '*',
      'Access-Control-Allow-Headers': 'range',
      'Cache-Control': 'no-store',
    };
    const m = /^\/ckpt\/resolve\/main\/(.+)$/.exec(url.pathname);
    const body = m ? files[m[1]!] : url.pathname === '/lib/fake-webgpu.wasm' ? 'wasm' : undefined;
    if (req.method === 'OPTIONS') return void res.writeHead(204, cors).end();
    if (body === undefined) return void res.writeHead(404, { ...cors, 'Content-Type': 'text/plain' }).end('not found');
    res
      .writeHead(200, {
        ...cors,
        'Content-Type': 'application/octet-stream',
        'Content-Length': Buffer.byteLength(body),
      })
      .end(req.method === 'HEAD' ? undefined : body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/` };
}

describe.skipIf(browserSkipReason())(
  suiteTitle('Generate screen: own models, the WebLLM cache and edited templates'),
  () => {
    let server: StaticServer;
    let models: { server: Server; url: string };
    let browser: Browser;
    let page: Page;
    let watch: PageWatch;
    let tmp: string;

    beforeAll(async () => {
      tmp = mkdtempSync(path.join(os.tmpdir(), 'generate-models-'));
      models = await partialModelServer();
      ({ server, browser, page, watch } = await openApp());
    });
    // The preflight's requests for the missing shard are logged by Chromium as failed loads.
    closeAppAfter(() => ({ server, browser, watch }), {
      expected: /Failed to load resource: the server responded with a status of 404/,
    });
    afterAll(async () => {
      await new Promise((r) => models?.server.close(r));
      if (tmp) rmSync(tmp, { recursive: true, force: true });
    });

    const openGenerate = async () => {
      await page.getByTestId('nav-generate').click();
      await page.getByTestId('generate-page').waitFor();
      await page.locator('input[name="engine"][value="webllm"]').check();
      await page.getByTestId('models-panel').waitFor();
    };

    it('imports a local MLC folder into the cache without network, lists it with its size, and deletes it', async () => {
      const { dir, modelBytes } = fakeModelFolder(tmp);
      await page.goto(server.url + '#/generate');
      await openGenerate();
      await expect.poll(() => page.getByTestId('cached-empty').count(), { timeout: 10_000 }).toBe(1);

      // Requests of the page and its workers while importing (the service worker's background
      // precache is not the page's doing).
      const fetched: string[] = [];
      const onRequest = (r: { url(): string }) => fetched.push(r.url());
      page.on('request', onRequest);
      await page.getByTestId('import-model-folder').setInputFiles(dir);
      await expect
        .poll(async () => (await page.getByTestId('import-model-done').textContent()) ?? '', { timeout: 15_000 })
        .toContain(`Imported "${MODEL}"`);
      page.off('request', onRequest);
      expect(
        fetched.filter((u) => !u.startsWith(server.url + 'assets/')),
        "the import fetched nothing but the app's own code",
      ).toEqual([]);
      expect(await page.getByTestId('import-model-progress').textContent()).toMatch(/3\.\d KiB of 3\.\d KiB/);

      const row = page.locator(`[data-testid="cached-models"] li[data-id="${MODEL}"]`);
      await row.waitFor();
      expect(Number(await row.getAttribute('data-bytes'))).toBe(modelBytes);
      expect(await row.getAttribute('data-files-url')).toBe(`https://local-import.invalid/${MODEL}/resolve/main/`);
      expect(await row.textContent()).toContain('in 4 files');
      expect(await row.textContent()).toContain('imported from disk');
      // Selected for loading, under "Your own".
      expect(await page.getByTestId('webllm-model').inputValue()).toBe(MODEL);
      await screenshot(page, 'generate-models-imported.png', true);

      await row.getByTestId('cached-delete').click();
      await row.getByTestId('cached-delete-confirm').click();
      await page.getByTestId('cached-empty').waitFor({ timeout: 10_000 });
      const left = await page.evaluate(async () => {
        let n = 0;
        for (const name of ['webllm/model', 'webllm/config', 'webllm/wasm'])
          n += (await (await caches.open(name)).keys()).length;
        return n;
      });
      expect(left).toBe(0);
      expect(watch.dialogs).toEqual([]);
    });

    it('adds a custom checkpoint on 127.0.0.1 with a missing shard and says which file is missing', async () => {
      await openGenerate();
      await page.getByTestId('custom-id').fill('my-ckpt');
      await page.getByTestId('custom-model-url').fill(`${models.url}ckpt`);
      await page.getByTestId('custom-lib-url').fill(`${models.url}lib/fake-webgpu.wasm`);
      await page.getByTestId('custom-add').click();
      const verdict = page.getByTestId('custom-preflight');
      await verdict.waitFor({ timeout: 15_000 });
      expect(await verdict.getAttribute('data-ok')).toBe('false');
      const text = ((await verdict.textContent()) ?? '').replace(/\s+/g, ' ');
      expect(text).toContain('"my-ckpt" cannot be loaded yet');
      expect(text).toContain(
        `weight shard params_shard_1.bin is missing at ${models.url}ckpt/resolve/main/params_shard_1.bin (HTTP 404)`,
      );
      expect(text).not.toContain('params_shard_0.bin is missing');
      expect(await page.getByTestId('custom-notes').textContent()).toContain(`${models.url}ckpt/resolve/main/`);
      expect(await page.getByTestId('webllm-model').inputValue()).toBe('my-ckpt');
      // The capability check works for a custom model too (this Chromium has no WebGPU adapter).
      await page.getByTestId('webllm-check').click();
      await expect
        .poll(async () => (await page.getByTestId('webllm-verdict').textContent()) ?? '', { timeout: 10_000 })
        .toMatch(/Cannot run|Can run/);

      await page.reload();
      await openGenerate();
      expect(await page.locator('[data-testid="custom-models"] li[data-id="my-ckpt"]').count()).toBe(1);
      expect(await page.locator('[data-testid="webllm-model"] option[value="my-ckpt"]').count()).toBe(1);
    });

    it('edits the official template as a new versioned one, refuses a draft without {{question}}, previews with it and a run records it', async () => {
      await importDemoLibrary(page);
      await page.getByTestId('nav-generate').click();
      await page.getByTestId('generate-page').waitFor();
      await page.getByTestId('gen-template').selectOption('bird-minidev-v1');
      const panel = page.getByTestId('template-panel');
      await panel.locator('summary').click();
      expect(await page.getByTestId('template-user').textContent()).toContain('-- Using valid {{dialect}}');

      await page.getByTestId('template-edit').click();
      expect(await page.getByTestId('template-new-id').inputValue()).toBe('my-bird-minidev-v1');
      await page.getByTestId('template-user-input').fill('{{schema}}\n\nAnswer in one SQLite query, EDITED-MARKER.');
      await page.getByTestId('template-save').click();
      expect(await page.getByTestId('template-problems').textContent()).toContain('never shows {{question}}');
      expect(await page.getByTestId('gen-template').inputValue()).toBe('bird-minidev-v1');

      await page
        .getByTestId('template-user-input')
        .fill(
          '{{schema}}\n\nQ: {{question}}{{#evidence}}\nHint: {{evidence}}{{/evidence}}\nAnswer in one SQLite query, EDITED-MARKER.',
        );
      await page.getByTestId('template-save').click();
      expect(await page.getByTestId('gen-template').inputValue()).toBe('my-bird-minidev-v1');
      expect(await page.getByTestId('template-id').textContent()).toBe('my-bird-minidev-v1');

      await page.getByTestId('gen-preview').click();
      await expect
        .poll(async () => (await page.getByTestId('gen-preview-text').textContent()) ?? '', { timeout: 30_000 })
        .toContain('EDITED-MARKER');
      const preview = (await page.getByTestId('gen-preview-text').textContent()) ?? '';
      expect(preview).toContain('CREATE TABLE');
      expect(preview).toMatch(/\nQ: \S/);
      expect(preview).not.toContain('-- Using valid');
      await screenshot(page, 'generate-template-edited.png', true);

      // A run with it (1 question, the tiny real GGUF on the CPU engine) records its id and text.
      await page.locator('input[name="engine"][value="wllama"]').check();
      await page.getByTestId('gguf-file').setInputFiles(sharedData('models', 'stories260K.gguf'));
      await page.getByTestId('engine-load').click();
      await expect
        .poll(async () => (await page.getByTestId('engine-loaded').textContent()) ?? '', { timeout: 30_000 })
        .toContain('stories260K.gguf');
      await page.getByTestId('gen-subset').selectOption('first');
      await page.getByTestId('gen-first-n').fill('1');
      await page.getByTestId('gen-max-tokens').fill('8');
      await page.getByTestId('gen-start').click();
      await page.waitForURL(/#\/run\/[^/]+$/, { timeout: 30_000 });
      const runId = decodeURIComponent(page.url().split('#/run/')[1]!);
      await page.goto(`${server.url}#/run/${encodeURIComponent(runId)}/items/0.0`);
      const sample = page.getByTestId('sample-prompt');
      await sample.waitFor({ timeout: 15_000 });
      await sample.locator('summary').click();
      const shown = (await sample.textContent()) ?? '';
      expect(shown).toContain('Prompt (my-bird-minidev-v1,');
      expect(shown).toContain('EDITED-MARKER');
      await page.goto(`${server.url}#/generate`);

      await page.reload();
      await page.getByTestId('generate-page').waitFor();
      await page.getByTestId('gen-template').selectOption('my-bird-minidev-v1');
      await page.getByTestId('template-panel').locator('summary').click();
      expect(await page.getByTestId('template-user').textContent()).toContain('EDITED-MARKER');
      await page.getByTestId('template-edit').click();
      expect(await page.getByTestId('template-new-id').inputValue()).toBe('my-bird-minidev-v2');
    });
  },
);
