/**
 * WebLLM's download cache, read and written directly. web-llm 0.2.86 (default backend
 * "cache") keeps everything in the Cache API, keyed by the file's full URL:
 *
 *   webllm/config  <files URL>mlc-chat-config.json
 *   webllm/model   <files URL>tensor-cache.json, every shard it lists, tokenizer.json/.model
 *   webllm/wasm    <model_lib URL>
 *
 * where <files URL> is the model URL with `resolve/main/` (webllm-custom.ts). A model counts
 * as cached when tensor-cache.json and all its shards are there (web-llm's hasModelInCache).
 *
 * An offline import writes a local MLC folder's files under those keys, with URLs on the
 * reserved host `local-import.invalid`: web-llm then finds every file in its cache and never
 * touches the network (the host could not be resolved anyway). Nothing here imports web-llm.
 */
import { EngineError } from '../../core/engine/engine-error.ts';
import type {
  CachedModel,
  CustomModelRecord,
  LocalFile,
  ModelImportProgress as ImportProgress,
} from '../../app/engine-ports.ts';

export type { LocalFile };

export const CACHE_SCOPES = { config: 'webllm/config', model: 'webllm/model', wasm: 'webllm/wasm' } as const;
export const IMPORT_HOST = 'https://local-import.invalid/';

async function entrySize(cache: Cache, req: Request): Promise<number> {
  const res = await cache.match(req);
  if (!res) return 0;
  const length = Number(res.headers.get('content-length'));
  if (Number.isFinite(length) && length > 0) return length;
  return (await res.blob()).size;
}

function filesUrlOf(url: string): string | null {
  const m = /^(.*\/resolve\/[^/]+\/)/.exec(url);
  return m ? m[1]! : null;
}

async function isComplete(cache: Cache, filesUrl: string, keys: ReadonlySet<string>): Promise<boolean> {
  const manifest = await cache.match(new Request(new URL('tensor-cache.json', filesUrl).href));
  if (!manifest) return false;
  try {
    const records = ((await manifest.json()) as { records?: Array<{ dataPath?: string }> }).records ?? [];
    return records.every((r) => keys.has(new URL(String(r.dataPath), filesUrl).href));
  } catch {
    return false;
  }
}

/** Models in web-llm's cache, with their sizes; `known` names the ones the app knows. */
export async function listCachedModels(
  known: ReadonlyArray<{ id: string; filesUrl: string }> = [],
): Promise<CachedModel[]> {
  const cache = await caches.open(CACHE_SCOPES.model);
  const requests = await cache.keys();
  const keys = new Set(requests.map((r) => r.url));
  const groups = new Map<string, Request[]>();
  for (const r of requests) {
    const base = filesUrlOf(r.url);
    if (!base) continue;
    groups.set(base, [...(groups.get(base) ?? []), r]);
  }
  const out: CachedModel[] = [];
  for (const [filesUrl, reqs] of groups) {
    let bytes = 0;
    for (const r of reqs) bytes += await entrySize(cache, r);
    out.push({
      filesUrl,
      id: known.find((k) => k.filesUrl === filesUrl)?.id ?? null,
      bytes,
      files: reqs.length,
      complete: await isComplete(cache, filesUrl, keys),
      imported: filesUrl.startsWith(IMPORT_HOST),
    });
  }
  return out.sort((a, b) => a.filesUrl.localeCompare(b.filesUrl));
}

/** Deletes a model's weights, tokenizer and config, and its library when given. */
export async function deleteCachedModel(filesUrl: string, modelLibUrl?: string): Promise<number> {
  let deleted = 0;
  for (const scope of [CACHE_SCOPES.model, CACHE_SCOPES.config]) {
    const cache = await caches.open(scope);
    for (const r of await cache.keys()) {
      if (r.url.startsWith(filesUrl) && (await cache.delete(r))) deleted++;
    }
  }
  if (modelLibUrl) {
    const wasm = await caches.open(CACHE_SCOPES.wasm);
    if (await wasm.delete(new Request(modelLibUrl))) deleted++;
  }
  return deleted;
}

function dirOf(path: string): string {
  const i = path.lastIndexOf('/');
  return i < 0 ? '' : path.slice(0, i + 1);
}

async function readJson(f: LocalFile): Promise<Record<string, unknown>> {
  try {
    return JSON.parse(await f.file.text()) as Record<string, unknown>;
  } catch {
    throw new EngineError('MODEL_REJECTED', 'not valid JSON', f.path);
  }
}

/**
 * Imports a local MLC model folder (files from a folder picker or a drop) into web-llm's cache,
 * without network. The folder needs mlc-chat-config.json, tensor-cache.json, the shards it
 * lists, the tokenizer file, and one model library (.wasm), in the folder or given as `lib`.
 * Returns the record to load it with (keep it with the app's custom models).
 */
export async function importLocalModel(
  files: readonly LocalFile[],
  options: { id?: string; lib?: LocalFile; onProgress?: (p: ImportProgress) => void } = {},
): Promise<CustomModelRecord> {
  const norm = files.map((f) => ({ ...f, path: f.path.replace(/\\/g, '/').replace(/^\/+/, '') }));
  const configs = norm.filter((f) => f.path === 'mlc-chat-config.json' || f.path.endsWith('/mlc-chat-config.json'));
  if (configs.length === 0) {
    throw new EngineError(
      'MODEL_MISSING',
      'the chosen files hold no mlc-chat-config.json: choose the folder of an MLC model (the output of mlc_llm convert_weight and gen_config)',
    );
  }
  const config = configs.sort((a, b) => a.path.length - b.path.length)[0]!;
  const dir = dirOf(config.path);
  const inDir = new Map(norm.filter((f) => f.path.startsWith(dir)).map((f) => [f.path.slice(dir.length), f]));
  const folder = dir.replace(/\/$/, '').split('/').pop() || 'local-model';
  const id = (options.id ?? folder).trim();
  const cfg = await readJson(config);

  const tensorFile = inDir.get('tensor-cache.json');
  if (!tensorFile) {
    throw new EngineError(
      'MODEL_MISSING',
      inDir.has('ndarray-cache.json')
        ? 'the folder has ndarray-cache.json, the name older MLC builds used, which web-llm 0.2.86 never reads: convert the weights again with a current mlc_llm'
        : 'the folder has no tensor-cache.json (the list of weight shards)',
      `${dir}tensor-cache.json`,
    );
  }
  const records = ((await readJson(tensorFile)).records ?? []) as Array<{ dataPath?: string }>;
  const missing = records.map((r) => String(r.dataPath)).filter((p) => !inDir.has(p));
  if (records.length === 0 || missing.length > 0) {
    throw new EngineError(
      'MODEL_MISSING',
      records.length === 0
        ? 'tensor-cache.json lists no shards'
        : `the folder lacks ${missing.length} weight shard(s): ${missing.slice(0, 5).join(', ')}`,
      dir || '.',
    );
  }
  const tokenizerFiles = Array.isArray(cfg.tokenizer_files) ? (cfg.tokenizer_files as unknown[]).map(String) : [];
  const tokenizer = ['tokenizer.json', 'tokenizer.model'].find((t) => tokenizerFiles.includes(t) && inDir.has(t));
  if (!tokenizer)
    throw new EngineError(
      'MODEL_MISSING',
      `the folder lacks the tokenizer file mlc-chat-config.json names (${tokenizerFiles.join(', ') || 'none'})`,
      dir || '.',
    );
  const wasms = [...inDir.entries()].filter(([p]) => p.endsWith('.wasm') && !p.includes('/'));
  const lib =
    options.lib ??
    (wasms.length === 1 ? { path: wasms[0]![0], file: wasms[0]![1].file } : wasms.find(([p]) => /webgpu/.test(p))?.[1]);
  if (!lib) {
    throw new EngineError(
      'MODEL_MISSING',
      wasms.length === 0
        ? 'no model library (.wasm) in the folder: choose it too'
        : `several .wasm files in the folder (${wasms.map(([p]) => p).join(', ')}): choose the model library`,
      dir || '.',
    );
  }

  const filesUrl = `${IMPORT_HOST}${encodeURIComponent(id)}/resolve/main/`;
  const libName = lib.path.split('/').pop()!;
  const modelLibUrl = `${IMPORT_HOST}${encodeURIComponent(id)}/lib/${encodeURIComponent(libName)}`;
  const plan: Array<[string, string, LocalFile]> = [
    [CACHE_SCOPES.config, `${filesUrl}mlc-chat-config.json`, config],
    [CACHE_SCOPES.model, `${filesUrl}tensor-cache.json`, tensorFile],
    [CACHE_SCOPES.model, `${filesUrl}${tokenizer}`, inDir.get(tokenizer)!],
    ...records.map((r): [string, string, LocalFile] => [
      CACHE_SCOPES.model,
      new URL(String(r.dataPath), filesUrl).href,
      inDir.get(String(r.dataPath))!,
    ]),
    [CACHE_SCOPES.wasm, modelLibUrl, lib],
  ];
  const totalBytes = plan.reduce((n, [, , f]) => n + f.file.size, 0);
  let doneBytes = 0;
  for (const [scope, url, f] of plan) {
    const cache = await caches.open(scope);
    const type = url.endsWith('.json')
      ? 'application/json'
      : url.endsWith('.wasm')
        ? 'application/wasm'
        : 'application/octet-stream';
    await cache.put(
      new Request(url),
      new Response(f.file, { headers: { 'content-type': type, 'content-length': String(f.file.size) } }),
    );
    doneBytes += f.file.size;
    options.onProgress?.({ file: f.path, doneBytes, totalBytes });
  }
  return {
    id,
    modelUrl: filesUrl,
    filesUrl,
    modelLibUrl,
    contextWindow: typeof cfg.context_window_size === 'number' ? cfg.context_window_size : null,
    quantization: typeof cfg.quantization === 'string' ? cfg.quantization : null,
  };
}
