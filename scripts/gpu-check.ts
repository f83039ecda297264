/**
 * `npm run gpu-check -- --out FILE [--gguf FILE ...] [--max-tokens 128]`: one unattended check
 * of what this machine's browser does with models on the GPU (scripts/gpu-check/): the WebGPU
 * adapter, its features and limits, each GGUF loaded with every layer left to the GPU and on
 * the CPU (device reported by llama.cpp, fallback reason, tokens/s, greedy agreement), WebLLM's
 * verdict per catalog model (nothing downloaded), the machine check's advice, and a generation
 * run's EX on the demo. Writes one JSON file; exits 2 when the page did not report.
 */
import { spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const DEFAULT_GGUF = path.resolve(root, '..', 'shared', 'data', 'models', 'stories260K.gguf');
const LIMIT_MS = 9.5 * 60 * 1000;

function fail(msg: string): never {
  process.stderr.write(`gpu-check: ${msg}\nusage: npm run gpu-check -- --out FILE [--gguf FILE ...] [--max-tokens 128]\n`);
  process.exit(2);
}

const argv = process.argv.slice(2);
let out: string | null = null;
const ggufs: string[] = [];
let maxTokens = 128;
for (let i = 0; i < argv.length; i++) {
  const a = argv[i]!;
  if (a === '--out') out = argv[++i] ?? fail('--out needs a file');
  else if (a === '--gguf') ggufs.push(path.resolve(argv[++i] ?? fail('--gguf needs a file')));
  else if (a === '--max-tokens') {
    maxTokens = Number(argv[++i]);
    if (!Number.isInteger(maxTokens) || maxTokens < 1) fail('--max-tokens needs a positive integer');
  } else if (a === '--help' || a === '-h') fail('help');
  else fail(`unknown argument ${a}`);
}
if (!out) fail('--out is required');
if (ggufs.length === 0) {
  if (!existsSync(DEFAULT_GGUF)) fail(`no --gguf given and ${DEFAULT_GGUF} is missing (see ../shared/data/README.md)`);
  ggufs.push(DEFAULT_GGUF);
}
for (const g of ggufs) if (!existsSync(g)) fail(`--gguf: file not found: ${g}`);

const child = spawn('npx', ['vitest', 'run', '--config', 'scripts/gpu-check/gpu-check.config.ts'], {
  cwd: root, env: { ...process.env, GPU_CHECK_GGUF: ggufs.join('\n'), GPU_CHECK_MAX_TOKENS: String(maxTokens) }, stdio: ['ignore', 'pipe', 'pipe'],
});
let text = '';
child.stdout.on('data', (d) => (text += d));
child.stderr.on('data', (d) => process.stderr.write(d));
const timer = setTimeout(() => child.kill('SIGTERM'), LIMIT_MS);
child.on('close', (code) => {
  clearTimeout(timer);
  const line = text.split('\n').find((l) => l.includes('GPU_CHECK_JSON '));
  if (!line) {
    process.stderr.write(text.slice(-4000));
    fail(`the check page did not report (vitest exited ${code})`);
  }
  const report = JSON.parse(line.slice(line.indexOf('GPU_CHECK_JSON ') + 'GPU_CHECK_JSON '.length));
  writeFileSync(out!, JSON.stringify(report, null, 1) + '\n');
  const gpu = report.webgpu.adapter ? `${report.webgpu.adapter.vendor} ${report.webgpu.adapter.architecture}${report.webgpu.adapter.isFallbackAdapter ? ' (software)' : ''}` : 'none';
  process.stdout.write(`adapter: ${gpu}; shader-f16: ${report.webgpu.features.includes('shader-f16')}\n`);
  for (const g of report.gguf) {
    const a = g.gpuLayersAll;
    process.stdout.write(`${path.basename(g.file)}: ${a.ok ? `ran on ${a.device.device}${a.device.reason ? ` (${a.device.reason})` : ''}, ${a.tokensPerSecond} tokens/s` : `failed: ${a.error}`}; advice: ${g.advice.label}\n`);
  }
  process.stdout.write(`wrote ${out}\n`);
  process.exit(0);
});
