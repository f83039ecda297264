import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { BROWSER_KEYS, IMPLEMENTED_KEYS, NODE_KEYS } from '../../bench/keys.ts';
import { builtAppDir, CHROMIUM_PATH } from '../browser/harness.ts';
import { APP_DIST_ENV } from '../browser/vite-build.ts';
import { runCommand } from '../helpers/cli.ts';

// Keeps `npm run bench` working: the quick pass runs end to end and writes every key as a finite
// number (the browser keys too, when Chromium is installed). Nothing here is timed: the values
// depend on the machine.
describe('npm run bench -- --quick', () => {
  it('writes every key as a finite number, the browser ones measured through the app in Chromium', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'wb-bench-smoke-'));
    const out = path.join(dir, 'bench.json');
    // The app as the browser tests' global setup built it from this tree in this run (the bench's
    // own page is built by the bench).
    const env = existsSync(CHROMIUM_PATH) ? { ...process.env, [APP_DIST_ENV]: builtAppDir() } : undefined;
    const run = await runCommand('npm', ['run', '--silent', 'bench', '--', '--quick', '--out', out], { env });
    expect(run.code, run.stderr).toBe(0);
    const got = JSON.parse(readFileSync(out, 'utf8')) as Record<string, unknown>;
    rmSync(dir, { recursive: true, force: true });
    const measured = existsSync(CHROMIUM_PATH) ? IMPLEMENTED_KEYS : NODE_KEYS;
    for (const key of measured) {
      expect(typeof got[key], key).toBe('number');
      expect(Number.isFinite(got[key]), key).toBe(true);
    }
    expect(got.eval_items as number).toBeGreaterThan(0);
    if (existsSync(CHROMIUM_PATH)) {
      // The replay run evaluated items through the app, and the reopened run had every sample.
      expect(got.browser_eval_items as number).toBeGreaterThan(0);
      expect(got.browser_eval_items_per_s as number).toBeGreaterThan(0);
      // Blocking time is the part of long tasks beyond 50 ms: it cannot exceed the run's wall time.
      expect(got.browser_total_blocking_ms as number).toBeLessThanOrEqual(got.browser_eval_ms as number);
      expect(got.idb_write_samples_per_s as number).toBeGreaterThan(0);
      expect(got.idb_reopen_run_ms as number).toBeGreaterThan(0);
      // The RL-scale keys (a smaller run in --quick): written, and the reopened run was seen.
      expect(got.idb_write_samples_per_s_100k as number).toBeGreaterThan(0);
      expect(got.idb_reopen_run_ms_100k as number).toBeGreaterThan(0);
      expect(got.browser_rl_view_longest_task_ms_100k as number).toBeGreaterThanOrEqual(0);
      expect(got).not.toHaveProperty('skipped');
      // GGUF tokens/s per device (bench/gguf.ts): the CPU key always; the WebGPU key only when
      // llama.cpp ran the layers on WebGPU, otherwise listed under `absent` with its reason
      // (here: SwiftShader has no shader-f16, so only the CPU backend registers).
      expect(got.gen_tokens_per_s_gguf_cpu as number).toBeGreaterThan(0);
      if (typeof got.gen_tokens_per_s_gguf_webgpu === 'number')
        expect(got).not.toHaveProperty('absent.gen_tokens_per_s_gguf_webgpu');
      else
        expect((got.absent as Record<string, string>).gen_tokens_per_s_gguf_webgpu).toMatch(
          /WebGPU|adapter|shader-f16/,
        );
    } else {
      expect(got.skipped).toEqual({ keys: [...BROWSER_KEYS], reason: expect.stringContaining(CHROMIUM_PATH) });
    }
    // The printed table names every key.
    for (const key of IMPLEMENTED_KEYS) expect(run.stdout).toContain(key);
  }, 600_000);
});
