/**
 * The GPU check (`npm run gpu-check`, scripts/gpu-check.ts): `vite build` of the app as users
 * get it, plus the check page (scripts/gpu-check/page, the app's engine code built for
 * production) into the same dist, served by scripts/gpu-check/serve.ts with cross-origin
 * isolation; Chromium started with a GPU machine's flags; the check page's report; then the
 * app itself: its Generate screen loads the first GGUF and its engine panel says which device
 * ran and what the machine check advises. One report object, written as one JSON file.
 */
import { existsSync, readdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { buildApp, viteBuild } from '../../tests/browser/vite-build.ts';
import { serveCheck } from './serve.ts';

export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * What a GPU machine's Chromium needs for WebGPU: no --disable-gpu; --enable-unsafe-webgpu for
 * Linux, Vulkan, the GPU blocklist ignored.
 */
export const GPU_FLAGS = [
  '--enable-unsafe-webgpu',
  '--ignore-gpu-blocklist',
  '--enable-features=Vulkan,WebGPU',
  '--use-angle=vulkan',
  '--enable-gpu-rasterization',
];

export interface GpuCheckOptions {
  gguf: string[];
  /** Local MLC folders (mlc-chat-config.json, tensor-cache.json, shards, tokenizer, one .wasm library). */
  mlc: string[];
  maxTokens: number;
  /** Questions of the demo generation run (0: no run). */
  demoQuestions: number;
  chromium: string;
  /** The whole check's budget; the page's report is awaited until then. */
  limitMs: number;
  log: (message: string) => void;
}

/** The engine panel of the app's Generate screen after loading a GGUF. */
async function appEnginePanel(page: Page, url: string, gguf: string, timeoutMs: number) {
  await page.goto(url);
  await page.getByTestId('nav-generate').click();
  await page.getByTestId('generate-page').waitFor({ timeout: timeoutMs });
  await page.getByTestId('gguf-file').setInputFiles(gguf);
  const advice = page.getByTestId('engine-advice');
  await advice.waitFor({ timeout: timeoutMs });
  await page.getByTestId('engine-load').click();
  const device = page.getByTestId('engine-device');
  await device.waitFor({ timeout: timeoutMs });
  const text = (s: string | null) => (s ?? '').replace(/\s+/g, ' ').trim();
  return {
    model: path.basename(gguf),
    loaded: text(await page.getByTestId('engine-loaded').textContent()),
    device: await device.getAttribute('data-device'),
    deviceText: text(await device.textContent()),
    advice: await advice.getAttribute('data-advice'),
    adviceText: text(await advice.textContent()),
  };
}

/** The MLC folder's model library: the one .wasm file in it, or null. */
function mlcLibrary(dir: string): string | null {
  const libs = readdirSync(dir)
    .filter((f) => f.endsWith('.wasm'))
    .sort();
  return libs[0] ?? null;
}

export async function runGpuCheck(opts: GpuCheckOptions): Promise<Record<string, unknown>> {
  const t0 = performance.now();
  const tmp = await mkdtemp(path.join(tmpdir(), 'gpu-check-'));
  const dist = path.join(tmp, 'dist');
  let browser: Browser | null = null;
  let server: Awaited<ReturnType<typeof serveCheck>> | null = null;
  try {
    opts.log('building the app (vite build) and the check page...');
    const appBuild = await buildApp(dist);
    await viteBuild([
      path.join('scripts', 'gpu-check', 'page'),
      '--outDir',
      path.join(dist, '__gpu-check'),
      '--base',
      './',
    ]);
    const buildMs = Math.round(performance.now() - t0);
    if (!existsSync(path.join(dist, 'index.html')) || !existsSync(path.join(dist, '__gpu-check', 'index.html'))) {
      throw new Error(`the build in ${dist} has no index.html for the app or the check page`);
    }
    server = await serveCheck({
      dist,
      gguf: opts.gguf,
      mlc: opts.mlc,
      config: (base) => ({
        gguf: opts.gguf.map((p, i) => ({
          url: `${base}__gguf/${i}/${encodeURIComponent(path.basename(p))}`,
          path: p,
          name: path.basename(p),
        })),
        mlc: opts.mlc.map((dir, i) => {
          const lib = mlcLibrary(dir);
          const modelUrl = `${base}__mlc/${i}/resolve/main/`;
          return {
            modelUrl,
            libUrl: lib ? `${modelUrl}${encodeURIComponent(lib)}` : null,
            path: dir,
            id: path.basename(dir),
          };
        }),
        maxTokens: opts.maxTokens,
        demoQuestions: opts.demoQuestions,
      }),
    });
    browser = await chromium.launch({
      executablePath: opts.chromium,
      headless: true,
      args: [
        '--no-sandbox',
        '--no-first-run',
        '--disable-quic',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        ...GPU_FLAGS,
      ],
    });
    const left = () => Math.max(10_000, opts.limitMs - (performance.now() - t0));
    const errors: string[] = [];
    const checkPage = await browser.newPage();
    checkPage.on('pageerror', (err) => errors.push(`check page: ${err.message}`));
    opts.log(`measuring on the check page (${server.url}__gpu-check/)...`);
    await checkPage.goto(`${server.url}__gpu-check/`);
    await checkPage.waitForFunction(() => window.__gpuCheck !== undefined, undefined, {
      timeout: left(),
      polling: 500,
    });
    const result = await checkPage.evaluate(() => window.__gpuCheck!);
    await checkPage.close();
    if ('error' in result) throw new Error(`the check page failed: ${result.error}`);

    let app: unknown = null;
    if (opts.gguf[0]) {
      opts.log("loading the first GGUF on the app's Generate screen...");
      const appPage = await browser.newPage();
      appPage.on('pageerror', (err) => errors.push(`app: ${err.message}`));
      app = await appEnginePanel(appPage, server.url, opts.gguf[0], Math.min(120_000, left())).catch((err: Error) => ({
        error: err.message,
      }));
      await appPage.close();
    }
    return {
      ...(result.report as Record<string, unknown>),
      served: {
        build: `${appBuild} of the app, vite build (production) of scripts/gpu-check/page`,
        buildMs,
        crossOriginIsolationHeaders: true,
      },
      chromium: { executable: opts.chromium, version: browser.version(), flags: GPU_FLAGS },
      app,
      pageErrors: errors,
      totalMs: Math.round(performance.now() - t0),
    };
  } finally {
    await browser?.close().catch(() => undefined);
    await server?.close();
    await rm(tmp, { recursive: true, force: true });
  }
}
