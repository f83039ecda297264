/**
 * CPU engine worker: llama.cpp compiled to WebAssembly (@wllama/wllama), the only file that
 * imports wllama. wllama runs llama.cpp in a worker of its own; this outer worker keeps the
 * GGUF checks, the download and wllama's polling loop off the page's main thread, and lets the
 * page stop everything at once by terminating it.
 *
 * wllama's loader resolves even for garbage (empty vocabulary) and garbles the message for
 * old GGUF versions, so the header is checked here first and the vocabulary after loading.
 */
import { expose, releaseProxy, type Remote } from 'comlink';
import { LogLevel, Wllama, type WllamaLogger } from '@wllama/wllama';
import type { LoadProgress } from '../src/core/engine/engine.ts';
import { EngineError, toEngineErrorData, type EngineErrorCode } from '../src/core/engine/engine-error.ts';
import { isCancellation } from '../src/core/errors.ts';
import { GGUF_HEADER_BYTES, checkGgufHeader } from '../src/core/engine/gguf-header.ts';
import { readGgufTrainingContext, type ByteRangeReader } from '../src/core/engine/gguf-context.ts';
import { meanLogprob } from '../src/core/engine/sampling.ts';
import { deviceReport, isDeviceLogLine, parseLlamaDeviceLog } from '../src/core/engine/llama-device.ts';
import { evidenceLines, probeWebGpu } from './wllama-device.ts';
import type {
  GgufSource,
  WllamaGenerateRequest,
  WllamaGenerateResult,
  WllamaLoadRequest,
  WllamaModelInfo,
  WllamaWorkerApi,
  WorkerReply,
} from './wllama.api.ts';

/** Context allocated when the caller leaves it open; a request then uses at most the training context. */
const DEFAULT_N_CTX = 4096;

let wllama: Wllama | null = null;
let info: WllamaModelInfo | null = null;
let running: AbortController | null = null;
/** Recent warnings and errors of llama.cpp, quoted when a load fails. */
const nativeLog: string[] = [];

/** llama.cpp's lines that say which device got the layers (llama-device.ts), from the last load. */
const deviceLog: string[] = [];

function remember(level: string, args: unknown[]): void {
  nativeLog.push(`${level}: ${args.map(String).join(' ')}`);
  if (nativeLog.length > 20) nativeLog.shift();
}

/** Keeps the device lines of the debug log (llama.cpp logs them at debug level only). */
function device(args: unknown[]): void {
  const line = args.map(String).join(' ');
  if (isDeviceLogLine(line) && deviceLog.length < 4096) deviceLog.push(line);
}

const logger: WllamaLogger = {
  debug: (...args: unknown[]) => device(args),
  log: (...args: unknown[]) => device(args),
  warn: (...args: unknown[]) => remember('warn', args),
  error: (...args: unknown[]) => remember('error', args),
};

async function reply<T>(fn: () => Promise<T>, fallback: EngineErrorCode = 'INTERNAL'): Promise<WorkerReply<T>> {
  try {
    return { ok: true, value: await fn() };
  } catch (err) {
    return { ok: false, error: toEngineErrorData(err, fallback) };
  }
}

/** Reads the whole body with progress; a missing file is MODEL_MISSING, not a parse error later. */
async function download(url: string, onProgress?: (p: LoadProgress) => void): Promise<Blob> {
  let res: Response;
  try {
    res = await fetch(url);
  } catch (err) {
    throw new EngineError('NETWORK', `could not download the model: ${(err as Error).message}`, url);
  }
  if (!res.ok) {
    throw new EngineError(
      res.status === 404 ? 'MODEL_MISSING' : 'HTTP',
      `could not download the model: HTTP ${res.status} ${res.statusText}`.trim(),
      url,
    );
  }
  // Static hosts and dev servers often answer a missing path with their HTML page.
  if ((res.headers.get('content-type') ?? '').includes('text/html')) {
    throw new EngineError(
      'MODEL_MISSING',
      'the server answered with a web page instead of a model file: check the URL',
      url,
    );
  }
  const total = Number(res.headers.get('content-length')) || null;
  if (!res.body) return res.blob();
  const parts: Uint8Array[] = [];
  let done = 0;
  const reader = res.body.getReader();
  for (;;) {
    const chunk = await reader.read();
    if (chunk.done) break;
    parts.push(chunk.value);
    done += chunk.value.length;
    onProgress?.({
      fraction: total ? Math.min(1, done / total) * 0.8 : null,
      text: `downloading: ${(done / 1048576).toFixed(1)} MiB`,
    });
  }
  return new Blob(parts as BlobPart[]);
}

async function modelBlobs(
  source: GgufSource,
  onProgress?: (p: LoadProgress) => void,
): Promise<{ name: string; blobs: Blob[] }> {
  if (source.kind === 'blob') {
    if (source.blobs.length === 0) throw new EngineError('CONFIG', 'no model file was given', source.name);
    return { name: source.name, blobs: source.blobs };
  }
  const blob = await download(source.url, onProgress);
  const name = decodeURIComponent(new URL(source.url).pathname.split('/').pop() || source.url);
  return { name, blobs: [blob] };
}

/** Byte ranges of a Blob (a picked file or a downloaded model), for the metadata reader. */
function blobRangeReader(blob: Blob): ByteRangeReader {
  return async (offset, length) => new Uint8Array(await blob.slice(offset, offset + length).arrayBuffer());
}

async function unloadModel(): Promise<void> {
  running?.abort();
  running = null;
  const w = wllama;
  wllama = null;
  info = null;
  if (w) await w.exit().catch(() => undefined);
}

async function load(req: WllamaLoadRequest, onProgress?: (p: LoadProgress) => void): Promise<WllamaModelInfo> {
  await unloadModel();
  const t0 = performance.now();
  onProgress?.({ fraction: 0, text: 'reading the model file' });
  const { name, blobs } = await modelBlobs(req.source, onProgress);
  const first = blobs[0]!;
  const head = new Uint8Array(await first.slice(0, GGUF_HEADER_BYTES).arrayBuffer());
  const header = checkGgufHeader(head, name, first.size);
  // llama.cpp's server code caps every request at the model's training context, whatever n_ctx
  // is: a context asked beyond it overrides the GGUF's `<arch>.context_length` (YaRN keeps the
  // original as its base), as `llama-server --override-kv` does.
  const train = req.nCtx === null ? null : await readGgufTrainingContext(blobRangeReader(first), first.size, name);
  const beyond = train !== null && req.nCtx !== null && req.nCtx > train.contextLength;

  onProgress?.({
    fraction: 0.85,
    text: `loading ${name} into llama.cpp (${req.nThreads} thread${req.nThreads > 1 ? 's' : ''})`,
  });
  nativeLog.length = 0;
  deviceLog.length = 0;
  const webgpu = await probeWebGpu();
  const w = new Wllama({ default: req.wasmUrl }, { logger, suppressNativeLog: false });
  // Never fetch a compatibility build from a CDN: the wasm comes from our own bundle.
  w.setCompat(null);
  try {
    // Debug level: llama.cpp names the device of each layer only there. 'all' leaves n_gpu_layers to
    // wllama (every layer its GPU backend takes); 0 keeps wllama from starting WebGPU at all.
    await w.loadModel(blobs, {
      n_ctx: req.nCtx ?? DEFAULT_N_CTX,
      // One sequence: samples are generated one at a time, and a sequence never gets a share of n_ctx.
      n_parallel: 1,
      // wllama hands llama.cpp the overrides without the empty-key entry that ends the list (llama.cpp
      // aborts without it): the last, empty key is that end.
      ...(beyond
        ? { kv_overrides: { [train.key]: `int:${req.nCtx}`, '': 'int:0' }, yarn_orig_ctx: train.contextLength }
        : {}),
      n_threads: req.nThreads,
      log_level: LogLevel.DEBUG,
      ...(req.gpuLayers === 'all' ? {} : { n_gpu_layers: req.gpuLayers }),
    });
  } catch (err) {
    await w.exit().catch(() => undefined);
    const native = nativeLog
      .filter((l) => l.startsWith('error'))
      .slice(-3)
      .join(' | ');
    throw new EngineError(
      'MODEL_REJECTED',
      `llama.cpp could not load the model: ${(err as Error).message}${native ? ` (${native})` : ''}`,
      name,
    );
  }
  const meta = w.getModelMetadata();
  if (!(meta.hparams.nVocab > 0)) {
    await w.exit().catch(() => undefined);
    throw new EngineError(
      'MODEL_REJECTED',
      'llama.cpp found no vocabulary in it (nVocab 0): the file is incomplete or not a language model; download it again or choose a complete .gguf file',
      name,
    );
  }
  const ctx = w.getLoadedContextInfo();
  wllama = w;
  info = {
    name: meta.meta['general.name'] || name,
    ggufVersion: header.version,
    nVocab: meta.hparams.nVocab,
    nCtx: ctx.n_ctx,
    // With the override, llama.cpp reports the overridden value: the file's own is the one read above.
    nCtxTrain: beyond ? train.contextLength : meta.hparams.nCtxTrain,
    // The server caps a request at the training context unless it was overridden above.
    contextWindow: beyond ? ctx.n_ctx : Math.min(ctx.n_ctx, meta.hparams.nCtxTrain || ctx.n_ctx),
    hasChatTemplate: !!w.getChatTemplate(),
    architecture: meta.meta['general.architecture'] ?? null,
    threads: w.getNumThreads(),
    multithread: w.isMultithread(),
    sizeBytes: blobs.reduce((n, b) => n + b.size, 0),
    loadMs: performance.now() - t0,
    // `evidence`: llama.cpp's own lines behind the verdict (first layers, backend count, adapter).
    device: (({ log, ...rest }) => ({
      ...rest,
      backends: log.backends,
      webgpuAdapter: log.webgpuAdapter,
      evidence: evidenceLines(deviceLog),
    }))(
      deviceReport(
        parseLlamaDeviceLog(deviceLog),
        webgpu,
        req.gpuLayers === 'all' ? Number.MAX_SAFE_INTEGER : req.gpuLayers,
      ),
    ),
    webgpu,
  };
  onProgress?.({ fraction: 1, text: `loaded ${info.name}` });
  return info;
}

interface Chunk {
  choices?: Array<{
    text?: string;
    delta?: { content?: string | null };
    finish_reason?: string | null;
    logprobs?: { content?: Array<{ logprob: number }> | null } | null;
  }>;
  usage?: { prompt_tokens?: number; completion_tokens?: number } | null;
}

/**
 * Streamed text reaches the page in pieces at most every 50 ms (one message per token would
 * flood the page at a few hundred tokens per second). `end` sends the rest and waits for it,
 * so the page has every piece before the completion, then releases the callback's port.
 */
function textSink(onText: ((piece: string) => void) | undefined) {
  let buffer = '';
  let timer: ReturnType<typeof setTimeout> | null = null;
  const flush = () => {
    timer = null;
    const piece = buffer;
    buffer = '';
    return piece && onText ? Promise.resolve(onText(piece)).catch(() => undefined) : Promise.resolve();
  };
  return {
    push(piece: string) {
      if (!onText) return;
      buffer += piece;
      timer ??= setTimeout(() => void flush(), 50);
    },
    async end() {
      if (timer) clearTimeout(timer);
      await flush();
      (onText as Remote<(piece: string) => void> | undefined)?.[releaseProxy]?.();
    },
  };
}

async function generate(req: WllamaGenerateRequest, onText?: (piece: string) => void): Promise<WllamaGenerateResult> {
  const w = wllama;
  if (!w) throw new EngineError('NOT_LOADED', 'no model is loaded: call load() first');
  const sink = textSink(onText);
  running?.abort();
  const controller = new AbortController();
  running = controller;
  const t0 = performance.now();
  let text = '';
  let finish: string | null = null;
  let usage: Chunk['usage'] = null;
  const logprobs: number[] = [];
  const onData = (chunk: Chunk) => {
    const choice = chunk.choices?.[0];
    const piece = choice?.text ?? choice?.delta?.content ?? '';
    if (piece) {
      text += piece;
      sink.push(piece);
    }
    for (const lp of choice?.logprobs?.content ?? []) logprobs.push(lp.logprob);
    if (choice?.finish_reason) finish = choice.finish_reason;
    if (chunk.usage) usage = chunk.usage;
  };
  const common = {
    max_tokens: req.maxTokens,
    temperature: req.temperature,
    top_p: req.topP,
    ...(req.seed === null ? {} : { seed: req.seed }),
    stop: req.stop,
    stream: true as const,
    onData,
    abortSignal: controller.signal,
  };
  try {
    if (req.input.kind === 'chat') {
      await w.createChatCompletion({ ...common, messages: req.input.messages, logprobs: req.logprobs });
    } else {
      await w.createCompletion({ ...common, prompt: req.input.prompt, logprobs: req.logprobs ? 1 : null });
    }
  } catch (err) {
    if (!isCancellation(err) && !controller.signal.aborted) {
      throw new EngineError('INTERNAL', `generation failed: ${(err as Error).message}`, info?.name);
    }
    finish = 'abort';
  } finally {
    if (running === controller) running = null;
    await sink.end();
  }
  const u = usage as Chunk['usage'];
  return {
    text,
    finishReason: finish === 'abort' ? 'abort' : finish === 'length' ? 'length' : 'stop',
    tokensIn: u?.prompt_tokens ?? null,
    tokensOut: u?.completion_tokens ?? null,
    meanLogprob: meanLogprob(logprobs),
    ms: performance.now() - t0,
  };
}

async function countTokens(text: string): Promise<number> {
  const w = wllama;
  if (!w) throw new EngineError('NOT_LOADED', 'no model is loaded: call load() first');
  // wllama exposes no tokenizer call: evaluating the prompt for zero new tokens reports its
  // length, and llama.cpp's prompt cache lets the following generation reuse that work.
  let n: number | undefined;
  try {
    const r = await w.createCompletion({ prompt: text, max_tokens: 0, temperature: 0 });
    n = r.usage?.prompt_tokens;
  } catch (err) {
    // A text longer than the context is refused before evaluation, with its length.
    const m = /request \((\d+) tokens\) exceeds/.exec((err as Error).message);
    if (!m) throw err;
    n = Number(m[1]);
  }
  if (typeof n !== 'number') throw new EngineError('INTERNAL', 'llama.cpp did not report a prompt token count');
  return n;
}

const api: WllamaWorkerApi = {
  load: (req, onProgress) =>
    reply(() => load(req, onProgress), 'MODEL_REJECTED').finally(() =>
      (onProgress as Remote<typeof onProgress> | undefined)?.[releaseProxy]?.(),
    ),
  generate: (req, onText) => reply(() => generate(req, onText)),
  countTokens: (text) => reply(() => countTokens(text)),
  async cancel() {
    running?.abort();
  },
  unload: () => unloadModel(),
};

expose(api satisfies WllamaWorkerApi);
