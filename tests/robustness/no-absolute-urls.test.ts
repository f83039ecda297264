import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.ts';

/**
 * The app contacts no host on its own. Absolute URLs may appear only where the user configures
 * the host: the engines (an endpoint the user types, a model the user picks from the catalog),
 * loopback examples and defaults of such endpoints (never contacted until the user starts that
 * engine or judge), examples in input placeholders (the user types the real address), and
 * reserved `.invalid` names (which no resolver answers).
 */
const ENGINE_CODE = /^src\/adapters\/engines\//;
const HARMLESS =
  /\b(?:https?|wss?):\/\/(?:127\.0\.0\.1|localhost|\[::1\])(?::\d+)?\b|\b(?:https?):\/\/[a-z0-9.-]+\.invalid\b|\/\^https\?:\/|placeholder="[^"]*"/i;
const URL_RE = /\b(?:https?|wss?):\/\/[^\s'"`)]+|\/\/(?:[a-z0-9-]+\.)+(?:com|org|net|io|ai|dev|co|app)\b/i;

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = path.join(dir, name);
    return statSync(p).isDirectory() ? files(p) : /\.(ts|svelte|mjs|js|html)$/.test(name) ? [p] : [];
  });
}

describe('no surprise traffic in the source', () => {
  it('no absolute URL in src/, workers/ or index.html except where the user configures the host', () => {
    const found: string[] = [];
    for (const file of [
      ...files(path.join(ROOT, 'src')),
      ...files(path.join(ROOT, 'workers')),
      path.join(ROOT, 'index.html'),
    ]) {
      const rel = path.relative(ROOT, file).split(path.sep).join('/');
      readFileSync(file, 'utf8')
        .split('\n')
        .forEach((line, i) => {
          if (!URL_RE.test(line) || ENGINE_CODE.test(rel)) return;
          if (!URL_RE.test(line.replace(new RegExp(HARMLESS.source, 'gi'), ''))) return;
          found.push(`${rel}:${i + 1}: ${line.trim()}`);
        });
    }
    expect(found).toEqual([]);
  });

  // connect-src cannot name hosts the user types at run time (a vLLM server, a judge, a model
  // URL), so it allows http(s) and no other scheme; that the app itself contacts no other host
  // is what the source check above and the request-log browser test show.
  it('the page may connect to its own origin and to http(s) endpoints only (Content-Security-Policy connect-src)', () => {
    const html = readFileSync(path.join(ROOT, 'index.html'), 'utf8');
    const csp = /http-equiv="Content-Security-Policy"\s+content="([^"]+)"/.exec(html)?.[1] ?? '';
    expect(csp).toMatch(/(?:^|; )connect-src 'self' http: https:(?:;|$)/);
    expect(csp).toMatch(/(?:^|; )script-src 'self' 'wasm-unsafe-eval'(?:;|$)/);
    expect(csp).not.toContain("'unsafe-eval'");
    expect(csp).not.toMatch(/script-src[^;]*'unsafe-inline'/);
  });
});
