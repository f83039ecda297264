/**
 * A researcher's own MLC checkpoint: a model folder URL plus a model library (.wasm) URL.
 *
 * web-llm 0.2.86 has two quirks that this module turns into plain messages instead of late
 * failures: it appends `resolve/main/` to a model URL that has no `/resolve/<revision>/` part
 * (so a folder must be served under `.../resolve/main/`), and it throws on a relative model
 * URL (`new URL(model)`), so URLs are made absolute here. The folder must hold
 * mlc-chat-config.json, tensor-cache.json (older MLC builds wrote ndarray-cache.json, which
 * 0.2.86 never reads), the shards tensor-cache.json lists, and the tokenizer files.
 *
 * `preflightCustomModel` fetches the two small JSON files and asks for every other file before
 * anything big is downloaded, so a missing file is reported by name and URL.
 */
import type { CustomModelInput, CustomModelRecord, PreflightResult } from '../../app/engine-ports.ts';
import { EngineError } from '../../core/engine/engine-error.ts';

export type { CustomModelInput, CustomModelRecord, PreflightResult };

export const REQUIRED_FILES_NOTE =
  'The folder must contain mlc-chat-config.json, tensor-cache.json, the params_shard_*.bin files that tensor-cache.json lists, and tokenizer.json (or the tokenizer files mlc-chat-config.json names).';

/** web-llm's cleanModelUrl: a trailing slash, then `resolve/main/` unless a revision is named. */
export function webllmFilesUrl(modelUrl: string): string {
  let u = modelUrl.endsWith('/') ? modelUrl : `${modelUrl}/`;
  if (!/.+\/resolve\/.+\//.test(u)) u += 'resolve/main/';
  return new URL(u).href;
}

export function customModelRecord(
  input: CustomModelInput,
  pageUrl: string,
): { record: CustomModelRecord; notes: string[] } {
  const notes: string[] = [];
  const absolute = (what: string, url: string): string => {
    let abs: string;
    try {
      abs = new URL(url, pageUrl).href;
    } catch {
      throw new EngineError('CONFIG', `the ${what} ${JSON.stringify(url)} is not a URL`);
    }
    if (!/^https?:\/\//.test(abs)) throw new EngineError('CONFIG', `the ${what} must be an http(s) URL, got ${abs}`);
    if (abs !== url) notes.push(`The ${what} was made absolute: ${abs} (web-llm cannot load relative URLs).`);
    return abs;
  };
  const modelUrl = absolute('model URL', input.modelUrl.trim());
  const modelLibUrl = absolute('model library URL', input.modelLibUrl.trim());
  const filesUrl = webllmFilesUrl(modelUrl);
  if (!/\/resolve\/[^/]+\/$/.test(modelUrl.endsWith('/') ? modelUrl : `${modelUrl}/`)) {
    notes.push(
      `WebLLM looks for the files under ${filesUrl}: serve the model folder at that path (a .../resolve/main/ folder).`,
    );
  }
  notes.push(REQUIRED_FILES_NOTE);
  const folder = new URL(modelUrl).pathname
    .replace(/\/resolve\/.*$/, '')
    .replace(/\/+$/, '')
    .split('/')
    .pop();
  const id = (input.id ?? folder ?? '').trim();
  if (!id) throw new EngineError('CONFIG', 'give the custom model an id (its folder name could not be used)');
  return { record: { id, modelUrl, filesUrl, modelLibUrl, contextWindow: null, quantization: null }, notes };
}

type Fetch = (url: string, init?: RequestInit) => Promise<Response>;

async function getJson(
  fetchFn: Fetch,
  url: string,
): Promise<{ json: Record<string, unknown> | null; status: number | string }> {
  try {
    const res = await fetchFn(url);
    if (!res.ok) return { json: null, status: res.status };
    const text = await res.text();
    try {
      const json = JSON.parse(text) as unknown;
      return typeof json === 'object' && json !== null
        ? { json: json as Record<string, unknown>, status: res.status }
        : { json: null, status: 'not a JSON object' };
    } catch {
      return { json: null, status: `not JSON (starts with ${JSON.stringify(text.slice(0, 30))})` };
    }
  } catch (err) {
    return { json: null, status: `unreachable: ${(err as Error).message}` };
  }
}

/** Size of a file without downloading it: HEAD, else a one-byte range request. */
async function fileSize(fetchFn: Fetch, url: string): Promise<{ bytes: number | null; status: number | string }> {
  try {
    let res = await fetchFn(url, { method: 'HEAD' });
    if (res.status === 405 || res.status === 501) res = await fetchFn(url, { headers: { range: 'bytes=0-0' } });
    if (!res.ok) return { bytes: null, status: res.status };
    if ((res.headers.get('content-type') ?? '').includes('text/html'))
      return { bytes: null, status: 'a web page instead of the file' };
    const range = /\/(\d+)$/.exec(res.headers.get('content-range') ?? '');
    const length = range ? Number(range[1]) : Number(res.headers.get('content-length'));
    await res.body?.cancel().catch(() => undefined);
    return { bytes: Number.isFinite(length) && length > 0 ? length : null, status: res.status };
  } catch (err) {
    return { bytes: null, status: `unreachable: ${(err as Error).message}` };
  }
}

const said = (status: number | string) => (typeof status === 'number' ? `HTTP ${status}` : status);

export async function preflightCustomModel(
  record: CustomModelRecord,
  fetchFn: Fetch = (u, i) => fetch(u, i),
): Promise<PreflightResult> {
  const problems: string[] = [];
  const base = record.filesUrl;
  const config = await getJson(fetchFn, new URL('mlc-chat-config.json', base).href);
  if (!config.json) {
    problems.push(
      `mlc-chat-config.json is missing or unreadable at ${new URL('mlc-chat-config.json', base).href} (${said(config.status)}). ${REQUIRED_FILES_NOTE}`,
    );
    return { ok: false, problems, downloadBytes: null, contextWindow: null, quantization: null, tokenizerFiles: [] };
  }
  const contextWindow = typeof config.json.context_window_size === 'number' ? config.json.context_window_size : null;
  const quantization = typeof config.json.quantization === 'string' ? config.json.quantization : null;
  const tokenizerFiles = Array.isArray(config.json.tokenizer_files)
    ? config.json.tokenizer_files.filter((f): f is string => typeof f === 'string')
    : [];

  let total = 0;
  let known = true;
  const tensorUrl = new URL('tensor-cache.json', base).href;
  const tensors = await getJson(fetchFn, tensorUrl);
  if (!tensors.json) {
    const old = await fileSize(fetchFn, new URL('ndarray-cache.json', base).href);
    problems.push(
      old.status === 200
        ? `tensor-cache.json is missing at ${tensorUrl}; the folder has ndarray-cache.json, the name older MLC builds used, which web-llm 0.2.86 never reads: convert the weights again with a current mlc_llm.`
        : `tensor-cache.json is missing or unreadable at ${tensorUrl} (${said(tensors.status)}).`,
    );
    known = false;
  } else {
    const records = Array.isArray(tensors.json.records) ? tensors.json.records : [];
    if (records.length === 0) problems.push(`tensor-cache.json at ${tensorUrl} lists no weight shards.`);
    for (const r of records as Array<Record<string, unknown>>) {
      const path = String(r.dataPath ?? '');
      const size = await fileSize(fetchFn, new URL(path, base).href);
      if (size.bytes === null && size.status !== 200)
        problems.push(`weight shard ${path} is missing at ${new URL(path, base).href} (${said(size.status)}).`);
      total += typeof r.nbytes === 'number' ? r.nbytes : (size.bytes ?? 0);
    }
  }
  // web-llm reads tokenizer.json when it is listed, else tokenizer.model.
  const tokenizer = tokenizerFiles.includes('tokenizer.json')
    ? 'tokenizer.json'
    : tokenizerFiles.includes('tokenizer.model')
      ? 'tokenizer.model'
      : null;
  if (!tokenizer)
    problems.push(
      `mlc-chat-config.json lists no tokenizer.json or tokenizer.model in "tokenizer_files" (${tokenizerFiles.join(', ') || 'none'}).`,
    );
  else {
    const size = await fileSize(fetchFn, new URL(tokenizer, base).href);
    if (size.bytes === null && size.status !== 200)
      problems.push(`${tokenizer} is missing at ${new URL(tokenizer, base).href} (${said(size.status)}).`);
    else if (size.bytes === null) known = false;
    else total += size.bytes;
  }
  const lib = await fileSize(fetchFn, record.modelLibUrl);
  if (lib.bytes === null && lib.status !== 200)
    problems.push(`the model library is missing at ${record.modelLibUrl} (${said(lib.status)}).`);
  else if (lib.bytes === null) known = false;
  else total += lib.bytes;

  return {
    ok: problems.length === 0,
    problems,
    downloadBytes: known && problems.length === 0 ? total : null,
    contextWindow,
    quantization,
    tokenizerFiles,
  };
}
