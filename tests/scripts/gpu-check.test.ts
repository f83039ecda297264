/**
 * `npm run gpu-check` end to end on this machine: the production build of the app and of the
 * check page, served with cross-origin isolation, Chromium with a GPU machine's flags, the real
 * stories260K.gguf, a local MLC folder given with --mlc (incomplete on purpose: no MLC model can
 * run here, and the check must say which file is missing), a 3-question demo run. Here the only
 * WebGPU adapter is SwiftShader (software, no shader-f16), so llama.cpp registers only its CPU
 * backend: the JSON must say CPU, with that reason, for every GGUF load and for the app's panel.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { WEBLLM_CATALOG } from '../../src/core/engine/webllm-catalog.ts';
import { browserSkipReason, builtAppDir, suiteTitle } from '../browser/harness.ts';
import { APP_DIST_ENV } from '../browser/vite-build.ts';
import { runCommand } from '../helpers/cli.ts';
import { sharedData } from '../helpers/shared-data.ts';

const gpuCheck = (args: string[], env?: NodeJS.ProcessEnv) =>
  runCommand('npx', ['tsx', 'scripts/gpu-check.ts', ...args], env ? { env: { ...process.env, ...env } } : {});

const dir = mkdtempSync(path.join(tmpdir(), 'wb-gpu-check-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('npm run gpu-check: bad arguments', () => {
  it('refuses a missing GGUF and an MLC folder without mlc-chat-config.json, naming the flag and path', async () => {
    const missing = await gpuCheck(['--out', path.join(dir, 'x.json'), '--gguf', path.join(dir, 'nope.gguf')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(`--gguf: file not found: ${path.join(dir, 'nope.gguf')}`);
    const empty = await gpuCheck(['--out', path.join(dir, 'x.json'), '--mlc', dir]);
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain(`--mlc: ${dir} has no mlc-chat-config.json`);
    const tokens = await gpuCheck(['--out', path.join(dir, 'x.json'), '--max-tokens', '0']);
    expect(tokens.code).toBe(2);
    expect(tokens.stderr).toContain('--max-tokens needs an integer >= 1, got "0"');
  });
});

describe.skipIf(browserSkipReason())(
  suiteTitle('npm run gpu-check on this machine (only the CPU device exists here: SwiftShader, no shader-f16)'),
  () => {
    it("writes one JSON file: adapter and features, GGUF on CPU with the reason from llama.cpp, same greedy tokens, the MLC folder's missing file, the demo run, the app's engine panel", async () => {
      const gguf = sharedData('models', 'stories260K.gguf');
      // A local MLC folder that mlc_llm did not finish: config, tokenizer and library, no tensor-cache.json.
      const mlc = path.join(dir, 'Tiny-q4f32_1-MLC');
      rmSync(mlc, { recursive: true, force: true });
      mkdirSync(mlc);
      writeFileSync(
        path.join(mlc, 'mlc-chat-config.json'),
        JSON.stringify({ quantization: 'q4f32_1', context_window_size: 2048, tokenizer_files: ['tokenizer.json'] }),
      );
      writeFileSync(path.join(mlc, 'tokenizer.json'), '{}');
      writeFileSync(path.join(mlc, 'Tiny-q4f32_1-webgpu.wasm'), Buffer.from([0, 97, 115, 109]));
      const out = path.join(dir, 'gpu-check.json');
      const run = await gpuCheck(
        ['--out', out, '--gguf', gguf, '--mlc', mlc, '--max-tokens', '32', '--demo-questions', '3'],
        // The app as the browser tests' global setup built it from this tree in this run (the
        // check page is built by the check itself).
        { [APP_DIST_ENV]: builtAppDir() },
      );
      expect(run.code, run.stderr).toBe(0);
      const r = JSON.parse(readFileSync(out, 'utf8'));

      expect(r).toMatchObject({
        format: 'rlvr-workbench-gpu-check',
        version: 2,
        crossOriginIsolated: true,
        pageErrors: [],
      });
      expect(r.served.build).toMatch(/vite build \(production\)/);
      expect(r.served.build).toContain(`copied from ${APP_DIST_ENV}`);
      expect(r.chromium.flags).toEqual(expect.arrayContaining(['--enable-unsafe-webgpu', '--ignore-gpu-blocklist']));
      // The adapter this machine offers: SwiftShader, a software adapter without shader-f16.
      expect(r.webgpu.webgpu).toBe(true);
      expect(r.webgpu.adapter).toMatchObject({ isFallbackAdapter: true });
      expect(`${r.webgpu.adapter.vendor} ${r.webgpu.adapter.architecture}`).toMatch(/swiftshader/i);
      expect(r.webgpu.features).not.toContain('shader-f16');
      expect(r.webgpu.limits.maxBufferSize).toBeGreaterThan(0);

      // The GGUF: all layers asked for the GPU, llama.cpp ran it on the CPU and said why; CPU asked, CPU.
      expect(r.gguf).toHaveLength(1);
      const g = r.gguf[0];
      expect(g.file).toBe(gguf);
      expect(g.bytes).toBe(readFileSync(gguf).length);
      expect(g.gpuLayersAll).toMatchObject({ ok: true, gpuLayers: 'all', device: { device: 'cpu', backends: 1 } });
      expect(g.gpuLayersAll.device.reason).toMatch(/shader-f16.*backend_ptrs\.size\(\) = 1/);
      expect(g.gpuLayers0).toMatchObject({
        ok: true,
        gpuLayers: 0,
        device: { device: 'cpu', reason: expect.stringMatching(/GPU layers set to 0/) },
      });
      for (const m of [g.gpuLayersAll, g.gpuLayers0]) {
        expect(m.tokens).toBeGreaterThan(0);
        expect(m.tokens).toBeLessThanOrEqual(32);
        expect(m.tokensPerSecond).toBeGreaterThan(0);
      }
      expect(g.greedyAgreement).toEqual({
        same: true,
        devices: ['cpu', 'cpu'],
        note: 'only the CPU backend ran: both loads decoded on the CPU',
      });
      expect(g.gpuLayersAll.text).toBe(g.gpuLayers0.text);
      expect(g.advice.engine).toBe('gguf-cpu');

      // Tokens/s per engine and device, and the bench keys: CPU measured, WebGPU absent with llama.cpp's reason.
      expect(
        r.tokensPerSecond.map((t: { engine: string; device: string; gpuLayers: unknown }) => [
          t.engine,
          t.device,
          t.gpuLayers,
        ]),
      ).toEqual([
        ['wllama', 'cpu', 'all'],
        ['wllama', 'cpu', 0],
      ]);
      expect(r.bench.gen_tokens_per_s_gguf_cpu).toBe(g.gpuLayersAll.tokensPerSecond);
      expect(r.bench).not.toHaveProperty('gen_tokens_per_s_gguf_webgpu');
      expect(r.bench.gen_tokens_per_s_gguf_webgpu_absent).toBe(g.gpuLayersAll.device.reason);

      // The MLC folder was served and read (its quantization), and the missing file is named.
      expect(r.mlc).toHaveLength(1);
      expect(r.mlc[0]).toMatchObject({ path: mlc, id: 'Tiny-q4f32_1-MLC', ok: false, quantization: 'q4f32_1' });
      expect(r.mlc[0].problems.join(' ')).toMatch(
        /tensor-cache\.json is missing or unreadable at http:\/\/127\.0\.0\.1:\d+\/__mlc\/0\/resolve\/main\/tensor-cache\.json/,
      );
      // WebLLM's catalog: a verdict for every model; none of the q4f16 ones can run without shader-f16.
      expect(r.webllm.map((w: { id: string }) => w.id)).toEqual(WEBLLM_CATALOG.map((e) => e.id));
      for (const w of r.webllm.filter((x: { id: string }) => /q4f16/.test(x.id))) expect(w.canRun, w.id).toBe(false);

      // The generation run on the demo: 3 questions, every sample scored, on the CPU.
      expect(r.generation).toMatchObject({
        model: 'stories260K.gguf',
        outcome: 'done',
        questions: 3,
        samples: 3,
        n: 3,
        device: 'cpu',
      });
      expect(r.generation.correct).toBeLessThanOrEqual(3);
      expect(r.generation.ex).toBe(r.generation.correct / 3);
      expect(r.generation.deviceReason).toBe(g.gpuLayersAll.device.reason);

      // The app itself (production build) loaded the GGUF on its Generate screen and says the same.
      expect(r.app).toMatchObject({ model: 'stories260K.gguf', device: 'cpu', advice: 'gguf-cpu' });
      expect(r.app.deviceText).toContain(`Ran on: CPU — ${g.gpuLayersAll.device.reason}`);
      expect(r.app.loaded).toContain('wllama · stories260K.gguf');
      expect(run.stdout).toContain(`wrote ${out}`);
    }, 600_000);
  },
);
