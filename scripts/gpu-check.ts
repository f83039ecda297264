/**
 * `npm run gpu-check -- --out FILE [--gguf FILE ...] [--mlc DIR ...] [--max-tokens 128]
 * [--demo-questions 20]`: one unattended check of what this machine's browser does with models
 * on the GPU, on the production build of the app (scripts/gpu-check/run.ts): the WebGPU
 * adapter, its features and limits; each GGUF loaded with every layer left to the GPU and on
 * the CPU (device reported by llama.cpp, fallback reason, tokens/s, greedy agreement); each
 * local MLC folder checked and, when WebLLM can run it, timed; WebLLM's verdict per catalog
 * model (nothing downloaded); the machine check's advice; the app's engine panel with the first
 * GGUF; and a generation run's EX on the demo. Writes one JSON file; exits 2 on bad arguments
 * or when the check did not report.
 */
import { existsSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT, runGpuCheck } from './gpu-check/run.ts';

const DEFAULT_GGUF = path.resolve(REPO_ROOT, '..', 'shared', 'data', 'models', 'stories260K.gguf');
const LIMIT_MS = 9.5 * 60 * 1000;
const USAGE =
  'usage: npm run gpu-check -- --out FILE [--gguf FILE ...] [--mlc DIR ...] [--max-tokens 128] [--demo-questions 20]';

function fail(msg: string): never {
  process.stderr.write(`gpu-check: ${msg}\n${USAGE}\n`);
  process.exit(2);
}

function positive(flag: string, v: string | undefined, min: number): number {
  const n = Number(v);
  if (v === undefined || !Number.isInteger(n) || n < min)
    fail(`${flag} needs an integer >= ${min}, got ${v === undefined ? 'nothing' : JSON.stringify(v)}`);
  return n;
}

const argv = process.argv.slice(2);
let out: string | null = null;
const gguf: string[] = [];
const mlc: string[] = [];
let maxTokens = 128;
// GPU_CHECK_NO_DEMO=1 (bench/gguf.ts): tokens/s only.
let demoQuestions = process.env.GPU_CHECK_NO_DEMO === '1' ? 0 : 20;
for (let i = 0; i < argv.length; i++) {
  const a = argv[i]!;
  if (a === '--out') out = argv[++i] ?? fail('--out needs a file');
  else if (a === '--gguf') gguf.push(path.resolve(argv[++i] ?? fail('--gguf needs a file')));
  else if (a === '--mlc') mlc.push(path.resolve(argv[++i] ?? fail('--mlc needs a folder')));
  else if (a === '--max-tokens') maxTokens = positive('--max-tokens', argv[++i], 1);
  else if (a === '--demo-questions') demoQuestions = positive('--demo-questions', argv[++i], 0);
  else if (a === '--help' || a === '-h') fail('help');
  else fail(`unknown argument ${a}`);
}
if (!out) fail('--out is required');
if (gguf.length === 0) {
  if (!existsSync(DEFAULT_GGUF)) fail(`no --gguf given and ${DEFAULT_GGUF} is missing (see ../shared/data/README.md)`);
  gguf.push(DEFAULT_GGUF);
}
for (const g of gguf) if (!existsSync(g) || !statSync(g).isFile()) fail(`--gguf: file not found: ${g}`);
for (const m of mlc) {
  if (!existsSync(m) || !statSync(m).isDirectory()) fail(`--mlc: folder not found: ${m}`);
  if (!existsSync(path.join(m, 'mlc-chat-config.json')))
    fail(
      `--mlc: ${m} has no mlc-chat-config.json: give the folder mlc_llm wrote (config, tensor-cache.json, shards, tokenizer, library .wasm)`,
    );
}
const chromiumPath = process.env.GPU_CHECK_CHROMIUM ?? '/usr/bin/chromium';
if (!existsSync(chromiumPath))
  fail(`no Chromium at ${chromiumPath}: install it (apt-get install -y chromium) or set GPU_CHECK_CHROMIUM`);

const timer = setTimeout(() => {
  process.stderr.write(`gpu-check: stopped after ${LIMIT_MS / 60_000} minutes without a report\n`);
  process.exit(2);
}, LIMIT_MS + 20_000);
timer.unref();

try {
  const report = await runGpuCheck({
    gguf,
    mlc,
    maxTokens,
    demoQuestions,
    chromium: chromiumPath,
    limitMs: LIMIT_MS,
    log: (m) => process.stderr.write(`gpu-check: ${m}\n`),
  });
  writeFileSync(out, JSON.stringify(report, null, 1) + '\n');
  type Gguf = {
    file: string;
    advice: { label: string };
    gpuLayersAll: {
      ok: boolean;
      device?: { device: string; reason: string | null };
      tokensPerSecond?: number | null;
      error?: string;
    };
  };
  const r = report as {
    webgpu: {
      adapter: { vendor: string; architecture: string; isFallbackAdapter: boolean } | null;
      features: string[];
    };
    gguf: Gguf[];
    totalMs: number;
  };
  const a = r.webgpu.adapter;
  process.stdout.write(
    `adapter: ${a ? `${a.vendor} ${a.architecture}${a.isFallbackAdapter ? ' (software)' : ''}` : 'none'}; shader-f16: ${r.webgpu.features.includes('shader-f16')}\n`,
  );
  for (const g of r.gguf) {
    const m = g.gpuLayersAll;
    process.stdout.write(
      `${path.basename(g.file)}: ${m.ok ? `ran on ${m.device!.device}${m.device!.reason ? ` (${m.device!.reason})` : ''}, ${m.tokensPerSecond} tokens/s` : `failed: ${m.error}`}; advice: ${g.advice.label}\n`,
    );
  }
  process.stdout.write(`wrote ${out} in ${Math.round(r.totalMs / 1000)} s\n`);
  process.exit(0);
} catch (err) {
  fail(`the check did not report: ${err instanceof Error ? err.message : String(err)}`);
}
