/**
 * GGUF decoding speed per device for `npm run bench`: the GPU check's page
 * (scripts/gpu-check.ts, without its demo run) on the real stories260K.gguf, loaded with every
 * layer left to llama.cpp's GPU backend and on the CPU. `gen_tokens_per_s_gguf_cpu` is always
 * measured; `gen_tokens_per_s_gguf_webgpu` only when llama.cpp actually ran the layers on
 * WebGPU, otherwise it is absent and `absent` says why (llama.cpp's own reason).
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from './items.ts';

export interface GgufBench {
  keys: Record<string, number>;
  absent: Record<string, string>;
}

export async function measureGguf(opts: { tmp: string; log: (m: string) => void }): Promise<GgufBench> {
  const out = path.join(opts.tmp, 'gpu-check.json');
  opts.log('GGUF tokens/s per device (scripts/gpu-check.ts, stories260K.gguf, greedy 128 tokens)...');
  const code = await new Promise<number | null>((resolve, reject) => {
    const child = spawn('npx', ['tsx', 'scripts/gpu-check.ts', '--out', out, '--max-tokens', '128'], {
      cwd: REPO_ROOT,
      env: { ...process.env, GPU_CHECK_NO_DEMO: '1' },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    child.on('error', reject);
    child.on('close', resolve);
  });
  if (code !== 0) throw new Error(`scripts/gpu-check.ts exited with ${code}`);
  const bench = (JSON.parse(readFileSync(out, 'utf8')) as { bench: Record<string, number | string> }).bench;
  const keys: Record<string, number> = {};
  const absent: Record<string, string> = {};
  for (const [k, v] of Object.entries(bench)) {
    if (typeof v === 'number') keys[k] = v;
    else if (k.endsWith('_absent')) absent[k.slice(0, -'_absent'.length)] = v;
  }
  return { keys, absent };
}
