/**
 * Inputs read line by line from a stream ("batch files streamed"): `forEachLine` in the
 * CLI and `forEachUtf8Line` for a picked file give the lines `split(/\r?\n/)` gives of the whole
 * text, whatever the chunk size (multi-byte characters and CRLF cut across chunks), refuse what is
 * not UTF-8 naming the file and the line, and a batch output read that way equals the same file
 * parsed whole.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { forEachUtf8Line } from '../../src/ui/shell/utf8-file.ts';
import { BatchOutputReader, parseBatchOutput } from '../../src/core/batch/batch-output.ts';
import { forEachLine } from '../../src/cli/commands/line-input.ts';
import { vllmErrorLine, vllmOkLine } from '../helpers/batch-fixtures.ts';

const dir = mkdtempSync(path.join(tmpdir(), 'wb-line-input-'));
const TEXT =
  '\uFEFFfirst é line\r\nsecond 漢字 line\n\nfourth 🙂 with an emoji\r\n' + 'x'.repeat(100) + '\nlast, no line break';

async function cliLines(file: string, chunkBytes: number): Promise<string[]> {
  const got: string[] = [];
  await forEachLine('--output', file, (l) => got.push(l), { chunkBytes });
  return got;
}

async function blobLines(bytes: Uint8Array, name: string): Promise<string[]> {
  const got: string[] = [];
  await forEachUtf8Line(Object.assign(new Blob([bytes as Uint8Array<ArrayBuffer>]), { name }), (l) => got.push(l));
  return got;
}

describe('inputs read line by line', () => {
  const file = path.join(dir, 'mixed.jsonl');
  writeFileSync(file, TEXT);
  const want = TEXT.split(/\r?\n/);

  it.each([1, 2, 3, 5, 7, 64, 1 << 20])('in chunks of %i bytes: the lines of the whole text', async (n) => {
    expect(await cliLines(file, n)).toEqual(want);
  });

  it('from a picked file: the same lines', async () => {
    expect(await blobLines(new TextEncoder().encode(TEXT), 'mixed.jsonl')).toEqual(want);
  });

  it('refuses Latin-1 naming the file and the line, UTF-16 by name, a missing file by its flag', async () => {
    const latin1 = path.join(dir, 'latin1.jsonl');
    writeFileSync(latin1, Buffer.concat([Buffer.from('ok\nalso ok\ncaf'), Buffer.from([0xe9]), Buffer.from('\n')]));
    await expect(cliLines(latin1, 4)).rejects.toThrow(/latin1\.jsonl is not UTF-8 text \(line 3;/);
    await expect(blobLines(new Uint8Array(readFileSync(latin1)), 'latin1.jsonl')).rejects.toThrow(
      /latin1\.jsonl is not UTF-8 text \(line 3;/,
    );
    const utf16 = path.join(dir, 'utf16.jsonl');
    writeFileSync(utf16, Buffer.from('\uFEFF{"custom_id": "a"}\n', 'utf16le'));
    await expect(cliLines(utf16, 1 << 20)).rejects.toThrow(/utf16\.jsonl is UTF-16 \(little-endian\) text, not UTF-8/);
    await expect(cliLines(path.join(dir, 'nope.jsonl'), 64)).rejects.toMatchObject({
      code: 'MISSING_FILE',
      message: expect.stringContaining('--output'),
    });
  });

  it('a batch output read line by line in small chunks equals the file parsed whole', async () => {
    const text = [
      vllmOkLine('q0-s0', 'SELECT "é" FROM t', { finish: 'length', logprobs: [-0.5, -1.5] }),
      vllmErrorLine('q0-s1', 'maximum context length'),
      '{"cut": ',
      vllmOkLine('q1-s0', 'SELECT 1'),
      vllmOkLine('q1-s0', 'SELECT 2'),
    ].join('\r\n');
    const out = path.join(dir, 'out.jsonl');
    writeFileSync(out, text);
    const reader = new BatchOutputReader('out.jsonl');
    await forEachLine('--output', out, (l) => reader.line(l), { chunkBytes: 13 });
    const streamed = reader.finish();
    const whole = parseBatchOutput(text, 'out.jsonl');
    expect([...streamed.results]).toEqual([...whole.results]);
    expect(streamed.problems).toEqual(whole.problems);
    expect(streamed.problems.join('\n')).toContain('out.jsonl line 3 is not JSON');
    expect(streamed.results.size).toBe(3);
  });
});
