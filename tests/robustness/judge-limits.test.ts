/**
 * The rubric judge against a real loopback HTTP server that misbehaves: one that never
 * answers is cut off by --judge-timeout-s (the default was a fixed 600 s per request and
 * retry), and one that sends a 200 MB body is cut off at the reply cap while the body is
 * still streaming (it used to be read whole). A judge that failed every call exits non-zero.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_MAX_REPLY_BYTES } from '../../src/adapters/engines/openai-http.ts';
import { ROOT, readJson, rubricArgs, runCli, tempFile } from '../helpers/cli.ts';

const MiB = 1024 * 1024;

/** One rubric row (7 criteria) and its completion, from the shipped example. */
function oneRow(): { dataset: string; completions: string } {
  const pick = (file: string) =>
    readFileSync(path.join(ROOT, 'public/rubrics', file), 'utf8')
      .split('\n')
      .filter((l) => l.includes('"sci-propane-combustion"'))
      .join('\n') + '\n';
  const dataset = tempFile('rar.jsonl');
  writeFileSync(dataset, pick('example-rar.jsonl'));
  const completions = tempFile('completions.jsonl');
  writeFileSync(completions, pick('example-completions.jsonl'));
  return { dataset, completions };
}

interface Misbehaving {
  url: string;
  /** Body bytes the server got to write, per completion request. */
  sent: number[];
  close(): Promise<void>;
}

/** A server whose /v1/chat/completions either never answers or streams `hugeBytes` of a JSON string without end. */
async function misbehaving(kind: 'hang' | { hugeBytes: number }): Promise<Misbehaving> {
  const sent: number[] = [];
  const open = new Set<ServerResponse>();
  const server: Server = createServer((req, res) => {
    req.resume();
    if (req.url !== '/v1/chat/completions') {
      res.writeHead(404).end();
      return;
    }
    open.add(res);
    res.on('close', () => open.delete(res));
    if (kind === 'hang') return;
    const at = sent.push(0) - 1;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('{"choices":[{"index":0,"message":{"role":"assistant","content":"');
    const chunk = Buffer.alloc(MiB, 'x');
    let closed = false;
    res.on('close', () => (closed = true));
    const pump = () => {
      while (!closed && sent[at]! < kind.hugeBytes) {
        sent[at]! += chunk.length;
        if (!res.write(chunk)) return void res.once('drain', pump);
      }
      if (!closed) res.end('"}}]}');
    };
    pump();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    sent,
    close: () => {
      for (const r of open) r.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** One call per sample: the judge's failure is the run's. */
const noRetries = ['--http-retries', '0', '--retries', '0'];

let server: Misbehaving | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

describe('rubric judge limits', { timeout: 180_000 }, () => {
  it('--judge-timeout-s 1 against a judge that never answers: exit 2 naming the 1 s limit', async () => {
    server = await misbehaving('hang');
    const { dataset, completions } = oneRow();
    const run = await runCli(
      rubricArgs({ dataset, completions, judgeUrl: server.url }, '--judge-timeout-s', '1', ...noRetries),
    );
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/error: --judge-url: the judge failed after 0 of 1 sample\(s\): .*no answer within 1 s/);
  });

  it('--judge-timeout-s must be a positive number of seconds a timer can wait', async () => {
    const { dataset, completions } = oneRow();
    for (const v of ['0', 'abc', '3000000']) {
      const run = await runCli(rubricArgs({ dataset, completions }, '--judge-timeout-s', v));
      expect(run.code, v).toBe(2);
      expect(run.stderr).toMatch(/error: --judge-timeout-s: expected a number of seconds in \(0, 2147483\]/);
    }
  });

  it('a 200 MB judge reply is cut off at the 16 MiB cap while streaming; every call failed, so exit 2 with a summary', async () => {
    server = await misbehaving({ hugeBytes: 200 * MiB });
    const { dataset, completions } = oneRow();
    const out = tempFile('scores.json');
    const flags = [...noRetries, '--aggregation', 'implicit', '--out', out];
    const run = await runCli(rubricArgs({ dataset, completions, judgeUrl: server.url }, ...flags));
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(
      /error: --judge-url: nothing was scored: none of the 1 sample\(s\) got a implicit score; the judge failed 1 of 1 call\(s\)/,
    );
    const got = readJson(out);
    expect(JSON.stringify(got.items[0].scores.implicit)).toMatch(/more than the 16 MiB a reply may have/);
    expect(server.sent).toHaveLength(1);
    // The client stopped reading soon after the cap: far less than the 200 MB on offer was sent.
    expect(server.sent[0]!).toBeGreaterThan(DEFAULT_MAX_REPLY_BYTES);
    expect(server.sent[0]!).toBeLessThan(64 * MiB);
  });
});
