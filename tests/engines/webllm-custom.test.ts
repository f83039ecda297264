import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  customModelRecord,
  preflightCustomModel,
  webllmFilesUrl,
  type CustomModelRecord,
} from '../../src/adapters/engines/webllm-custom.ts';

describe('custom WebLLM checkpoints', () => {
  it("resolves files under resolve/main/ exactly as web-llm's cleanModelUrl does", () => {
    expect(webllmFilesUrl('http://h/models/x')).toBe('http://h/models/x/resolve/main/');
    expect(webllmFilesUrl('http://h/models/x/')).toBe('http://h/models/x/resolve/main/');
    expect(webllmFilesUrl('https://huggingface.co/me/m/resolve/v2/')).toBe('https://huggingface.co/me/m/resolve/v2/');
  });

  it('makes relative URLs absolute, and warns where web-llm will look for the files', () => {
    const { record, notes } = customModelRecord(
      { modelUrl: 'models/my-sql-policy', modelLibUrl: '/libs/qwen2-q4f32_1-webgpu.wasm' },
      'http://127.0.0.1:5173/app/',
    );
    expect(record).toEqual({
      id: 'my-sql-policy',
      modelUrl: 'http://127.0.0.1:5173/app/models/my-sql-policy',
      filesUrl: 'http://127.0.0.1:5173/app/models/my-sql-policy/resolve/main/',
      modelLibUrl: 'http://127.0.0.1:5173/libs/qwen2-q4f32_1-webgpu.wasm',
      contextWindow: null,
      quantization: null,
    });
    expect(notes).toEqual([
      'The model URL was made absolute: http://127.0.0.1:5173/app/models/my-sql-policy (web-llm cannot load relative URLs).',
      'The model library URL was made absolute: http://127.0.0.1:5173/libs/qwen2-q4f32_1-webgpu.wasm (web-llm cannot load relative URLs).',
      'WebLLM looks for the files under http://127.0.0.1:5173/app/models/my-sql-policy/resolve/main/: serve the model folder at that path (a .../resolve/main/ folder).',
      expect.stringContaining('The folder must contain mlc-chat-config.json, tensor-cache.json'),
    ]);
  });

  it('takes the id from the folder before resolve/, and rejects non-http URLs', () => {
    expect(
      customModelRecord({ modelUrl: 'http://h/m/ckpt-400/resolve/main/', modelLibUrl: 'http://h/l.wasm' }, 'http://h/')
        .record.id,
    ).toBe('ckpt-400');
    expect(() => customModelRecord({ modelUrl: 'file:///tmp/x', modelLibUrl: 'http://h/l.wasm' }, 'http://h/')).toThrow(
      'the model URL must be an http(s) URL, got file:///tmp/x',
    );
  });
});

describe('preflight of a custom model folder served over HTTP', () => {
  let server: Server;
  let base: string;
  const files = new Map<string, { body: string; type?: string }>();
  const folder = (over: Record<string, string | null>) => {
    files.clear();
    const all: Record<string, string | null> = {
      'm/resolve/main/mlc-chat-config.json': JSON.stringify({
        quantization: 'q4f16_1',
        context_window_size: 4096,
        tokenizer_files: ['tokenizer.json', 'vocab.json'],
      }),
      'm/resolve/main/tensor-cache.json': JSON.stringify({
        records: [
          { dataPath: 'params_shard_0.bin', nbytes: 1000 },
          { dataPath: 'params_shard_1.bin', nbytes: 2000 },
        ],
      }),
      'm/resolve/main/params_shard_0.bin': 'x'.repeat(1000),
      'm/resolve/main/params_shard_1.bin': 'x'.repeat(2000),
      'm/resolve/main/tokenizer.json': 'x'.repeat(50),
      'lib.wasm': 'x'.repeat(300),
      ...over,
    };
    for (const [k, v] of Object.entries(all)) if (v !== null) files.set(`/${k}`, { body: v });
  };
  const record = (): CustomModelRecord =>
    customModelRecord({ modelUrl: `${base}/m/resolve/main/`, modelLibUrl: `${base}/lib.wasm` }, base).record;

  beforeAll(async () => {
    server = createServer((req, res) => {
      const f = files.get(req.url ?? '');
      if (!f) {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(200, {
        'content-type': f.type ?? 'application/octet-stream',
        'content-length': String(Buffer.byteLength(f.body)),
      });
      res.end(req.method === 'HEAD' ? undefined : f.body);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('accepts a complete folder and measures the exact download', async () => {
    folder({});
    expect(await preflightCustomModel(record())).toEqual({
      ok: true,
      problems: [],
      downloadBytes: 1000 + 2000 + 50 + 300,
      contextWindow: 4096,
      quantization: 'q4f16_1',
      tokenizerFiles: ['tokenizer.json', 'vocab.json'],
    });
  });

  it('names a missing weight shard with its URL', async () => {
    folder({ 'm/resolve/main/params_shard_1.bin': null });
    const r = await preflightCustomModel(record());
    expect(r.ok).toBe(false);
    expect(r.problems).toEqual([
      `weight shard params_shard_1.bin is missing at ${base}/m/resolve/main/params_shard_1.bin (HTTP 404).`,
    ]);
    expect(r.downloadBytes).toBeNull();
  });

  it('explains a folder that only has the old ndarray-cache.json', async () => {
    folder({ 'm/resolve/main/tensor-cache.json': null, 'm/resolve/main/ndarray-cache.json': '{}' });
    const r = await preflightCustomModel(record());
    expect(r.problems[0]).toBe(
      `tensor-cache.json is missing at ${base}/m/resolve/main/tensor-cache.json; the folder has ndarray-cache.json, the name older MLC builds used, which web-llm 0.2.86 never reads: convert the weights again with a current mlc_llm.`,
    );
  });

  it('stops at a missing mlc-chat-config.json, and names a missing library and tokenizer', async () => {
    folder({ 'm/resolve/main/mlc-chat-config.json': null });
    expect((await preflightCustomModel(record())).problems[0]).toMatch(
      /^mlc-chat-config\.json is missing or unreadable at .*\/m\/resolve\/main\/mlc-chat-config\.json \(HTTP 404\)/,
    );
    folder({ 'lib.wasm': null, 'm/resolve/main/tokenizer.json': null });
    expect((await preflightCustomModel(record())).problems).toEqual([
      `tokenizer.json is missing at ${base}/m/resolve/main/tokenizer.json (HTTP 404).`,
      `the model library is missing at ${base}/lib.wasm (HTTP 404).`,
    ]);
  });

  it('treats a web page served instead of a file as missing (single-page-app fallbacks)', async () => {
    folder({});
    files.set('/lib.wasm', { body: '<!doctype html>', type: 'text/html' });
    expect((await preflightCustomModel(record())).problems).toEqual([
      `the model library is missing at ${base}/lib.wasm (a web page instead of the file).`,
    ]);
  });
});
