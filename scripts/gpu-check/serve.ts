/**
 * The GPU check's HTTP server: the production build (the app at /, the check page at
 * /__gpu-check/) with the headers that make a page cross-origin isolated (COOP same-origin,
 * COEP require-corp: wllama's threads need SharedArrayBuffer), the check's settings at
 * /__gpu-check/config.json, and the files to check streamed from disk: GGUF files at
 * /__gguf/<i>/<name>, local MLC folders at /__mlc/<i>/resolve/main/<file> (where web-llm looks
 * for a folder's files). GET and HEAD only; paths never leave their folder.
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';

const MIME: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.wasm': 'application/wasm',
  '.sql': 'text/plain; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.webmanifest': 'application/manifest+json',
};

export interface CheckServer {
  /** Base URL ending in '/'. */
  url: string;
  close(): Promise<void>;
}

export interface ServedFiles {
  dist: string;
  gguf: string[];
  mlc: string[];
  config: (baseUrl: string) => unknown;
}

/** The file a request path names, or null (404); `..` never leaves the folder. */
function inside(root: string, rel: string): string | null {
  const base = path.resolve(root);
  const file = path.resolve(base, '.' + path.posix.normalize('/' + rel));
  return file === base || file.startsWith(base + path.sep) ? file : null;
}

function resolvePath(files: ServedFiles, pathname: string): string | null {
  const gguf = /^\/__gguf\/(\d+)\/[^/]+$/.exec(pathname);
  if (gguf) return files.gguf[Number(gguf[1])] ?? null;
  const mlc = /^\/__mlc\/(\d+)\/resolve\/main\/(.+)$/.exec(pathname);
  if (mlc) {
    const dir = files.mlc[Number(mlc[1])];
    return dir ? inside(dir, mlc[2]!) : null;
  }
  return inside(files.dist, pathname);
}

export async function serveCheck(files: ServedFiles): Promise<CheckServer> {
  let base = '';
  const server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      const pathname = decodeURIComponent(url.pathname);
      const headers = {
        'Cross-Origin-Opener-Policy': 'same-origin',
        'Cross-Origin-Embedder-Policy': 'require-corp',
        'Cache-Control': 'no-store',
        'X-Content-Type-Options': 'nosniff',
      };
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        res.writeHead(405, { Allow: 'GET, HEAD' }).end();
        return;
      }
      if (pathname === '/__gpu-check/config.json') {
        res.writeHead(200, { ...headers, 'Content-Type': MIME['.json']! }).end(JSON.stringify(files.config(base)));
        return;
      }
      let file = resolvePath(files, pathname);
      let info = file ? await stat(file).catch(() => null) : null;
      if (file && info?.isDirectory()) {
        file = path.join(file, 'index.html');
        info = await stat(file).catch(() => null);
      }
      if (!file || !info?.isFile()) {
        res.writeHead(404, { ...headers, 'Content-Type': 'text/plain; charset=utf-8' }).end(`not found: ${pathname}`);
        return;
      }
      res.writeHead(200, {
        ...headers,
        'Content-Type': MIME[path.extname(file).toLowerCase()] ?? 'application/octet-stream',
        'Content-Length': info.size,
      });
      if (req.method === 'HEAD') res.end();
      else
        createReadStream(file)
          .on('error', () => res.destroy())
          .pipe(res);
    })().catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500);
      res.end(String(err));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  return {
    url: base,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
