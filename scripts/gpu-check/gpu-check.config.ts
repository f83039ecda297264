/**
 * Vitest config of the GPU check (scripts/gpu-check.ts): one Chromium page with the flags a
 * GPU machine needs for WebGPU (no --disable-gpu; --enable-unsafe-webgpu for Linux, Vulkan,
 * the GPU blocklist ignored), cross-origin isolated for wllama's threads, serving the repo's
 * modules and the GGUF files to check through /@fs/.
 */
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { playwright } from '@vitest/browser-playwright';
import { defineConfig, searchForWorkspaceRoot } from 'vite';

const root = fileURLToPath(new URL('../..', import.meta.url));
const ggufFiles = (process.env.GPU_CHECK_GGUF ?? '').split('\n').filter(Boolean);

export default defineConfig({
  root,
  worker: { format: 'es' },
  server: {
    host: '127.0.0.1',
    headers: { 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp' },
    fs: { allow: [searchForWorkspaceRoot(root), ...ggufFiles.map((f) => dirname(f))] },
  },
  cacheDir: 'node_modules/.vite/gpu-check',
  optimizeDeps: { include: ['comlink', 'sql.js', '@wllama/wllama'] },
  test: {
    include: ['scripts/gpu-check/gpu-check.browser.ts'],
    testTimeout: 540_000,
    provide: { ggufFiles, demoDir: `${root.replace(/\/$/, '')}/public/demo`, maxTokens: Number(process.env.GPU_CHECK_MAX_TOKENS ?? 128), skipDemo: process.env.GPU_CHECK_NO_DEMO === '1' },
    browser: {
      enabled: true,
      headless: true,
      provider: playwright({
        launchOptions: {
          executablePath: process.env.GPU_CHECK_CHROMIUM ?? '/usr/bin/chromium',
          args: [
            '--no-sandbox', '--no-first-run', '--disable-quic', '--disable-background-networking', '--disable-component-update', '--disable-sync',
            '--enable-unsafe-webgpu', '--ignore-gpu-blocklist', '--enable-features=Vulkan,WebGPU', '--use-angle=vulkan', '--enable-gpu-rasterization',
          ],
        },
      }),
      instances: [{ browser: 'chromium' }],
    },
  },
});
