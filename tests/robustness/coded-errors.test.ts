import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.ts';

/**
 * Every error the product throws on purpose is a CodedError (src/core/errors.ts) with a literal
 * code, and every cancel is one `isCancellation` recognises. This scans src/ and workers/ for
 * the constructions that bypass that: a plain `Error`, `TypeError` or `RangeError`, a
 * `DOMException` named AbortError, or a class that extends `Error` directly.
 */
const BYPASS = [
  /\bnew (?:Error|TypeError|RangeError)\(/,
  /\bnew DOMException\([^)]*['"]AbortError['"]/,
  /\bclass \w+ extends (?:Error|TypeError|RangeError)\b/,
];

/** The few that are not errors of the product's own: file and the line's text, with the reason. */
const ALLOWED: ReadonlyArray<{ file: string; line: string; why: string }> = [
  {
    file: 'src/core/errors.ts',
    line: 'export abstract class CodedError<C extends string = string> extends Error {',
    why: 'the base itself',
  },
  {
    file: 'src/adapters/browser/import-client.ts',
    line: 'const err = new Error(e.message);',
    why: 'rebuilds an uncoded error of another realm under its own name',
  },
  {
    file: 'workers/sql-engine.ts',
    line: 'error = err instanceof Error ? err : new Error(errorMessage(err));',
    why: 'wraps a non-Error value thrown by sql.js',
  },
];

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = path.join(dir, name);
    return statSync(p).isDirectory() ? files(p) : /\.(ts|svelte)$/.test(name) ? [p] : [];
  });
}

describe('errors thrown on purpose are CodedErrors', () => {
  it('src/ and workers/ construct no plain Error, RangeError, TypeError or AbortError DOMException', () => {
    const found: string[] = [];
    for (const file of [...files(path.join(ROOT, 'src')), ...files(path.join(ROOT, 'workers'))]) {
      const rel = path.relative(ROOT, file).split(path.sep).join('/');
      readFileSync(file, 'utf8')
        .split('\n')
        .forEach((text, i) => {
          if (!BYPASS.some((re) => re.test(text))) return;
          if (ALLOWED.some((a) => a.file === rel && a.line === text.trim())) return;
          found.push(`${rel}:${i + 1}: ${text.trim()}`);
        });
    }
    expect(
      found,
      "throw a WorkbenchError (or the layer's StoreError / EngineError) with a code, or cancelledError()",
    ).toEqual([]);
  });

  it('every allowed line still exists (a stale entry would hide a new one)', () => {
    for (const a of ALLOWED) {
      const lines = readFileSync(path.join(ROOT, a.file), 'utf8')
        .split('\n')
        .map((l) => l.trim());
      expect(lines, `${a.file}: ${a.line}`).toContain(a.line);
    }
  });
});
