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
import path from 'node:path';
import { serveLoopback, type LoopbackServer } from '../../tests/browser/loopback-http.ts';

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

export type CheckServer = LoopbackServer;

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
  const server = await serveLoopback(async (req, res, url) => {
    const pathname = decodeURIComponent(url.pathname);
    const headers = {
      'Cross-Origin-Opener-Policy': 'same-origin',
      'Cross-Origin-Embedder-Policy': 'require-corp',
      'Cache-Control': 'no-store',
      'X-Content-Type-Options': 'nosniff',
    };
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
  });
  base = server.url;
  return server;
}
