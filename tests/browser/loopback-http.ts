/**
 * A GET/HEAD-only HTTP server on 127.0.0.1 and a free port, for the tests' static server
 * (harness.ts) and the GPU check's (scripts/gpu-check/serve.ts). No vitest import: the
 * script uses it outside the test runner.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface LoopbackServer {
  /** Base URL ending in '/'. */
  url: string;
  close(): Promise<void>;
}

/**
 * Serves `handle` (given the request's URL): other methods than GET and HEAD get 405, and a
 * request whose handler throws gets 500 with the error's text. `seen` hears of every request first.
 */
export async function serveLoopback(
  handle: (req: IncomingMessage, res: ServerResponse, url: URL) => Promise<void>,
  seen?: (url: URL) => void,
): Promise<LoopbackServer> {
  const server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      seen?.(url);
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        res.writeHead(405, { Allow: 'GET, HEAD' }).end();
        return;
      }
      await handle(req, res, url);
    })().catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500);
      res.end(String(err));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
