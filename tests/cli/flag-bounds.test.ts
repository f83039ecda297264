/**
 * Every numeric flag bounded at parse time under its own name (src/cli/flags.ts,
 * numberFlag), and `batch export` streamed: `--n 2000` used to fail with "Invalid string
 * length" and `--n 100000` ran V8 out of memory; now --n is bounded at 1,024 before any file
 * is read and the batch file is written line by line.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseBatchExportArgs, parseBatchImportArgs } from '../../src/cli/commands/batch-args.ts';
import { parseEvalArgs } from '../../src/cli/commands/eval-args.ts';
import { rubricArgs, runCli, tempFile } from '../helpers/cli.ts';
import { minidevBatchExport } from '../helpers/batch-fixtures.ts';
import { datasetFlags } from '../helpers/shared-data.ts';

/** Flags naming files that are never read: these arguments are refused at parse time. */
const unreadData = datasetFlags({ gold: 'g.sql', dataset: 'd.json', dbRoot: 'dbs' });
const exportArgs = (...extra: string[]) => [...unreadData, '--model', 'm', '--out', 'o.jsonl', ...extra];
const importArgs = (...extra: string[]) => ['--plan', 'p.json', '--output', 'o.jsonl', ...unreadData, ...extra];

describe('numeric flags bounded at parse time, under their own names', { timeout: 240_000 }, () => {
  it('batch export --n 2000 / 100000, --seed, --max-tokens; batch import --workers 1000, --timeout-s 1e12: refused naming the flag and the range', () => {
    expect(() => parseBatchExportArgs(exportArgs('--n', '2000'))).toThrow(
      /^--n: expected an integer from 1 to 1,024, got "2000"$/,
    );
    expect(() => parseBatchExportArgs(exportArgs('--n', '100000'))).toThrow(
      /^--n: expected an integer from 1 to 1,024/,
    );
    expect(() => parseBatchExportArgs(exportArgs('--seed', '1e300'))).toThrow(/^--seed: expected an integer from 0 to/);
    expect(() => parseBatchExportArgs(exportArgs('--max-tokens', '1e9'))).toThrow(
      /^--max-tokens: expected an integer from 1 to 1,048,576/,
    );
    expect(parseBatchExportArgs(exportArgs('--n', '1024')).n).toBe(1024);
    expect(() => parseBatchImportArgs(importArgs('--workers', '1000'))).toThrow(/^--workers: 1000 is more than/);
    // Refused at parse time, as --timeout-s, not later under an internal name (timeoutMs).
    expect(() => parseBatchImportArgs(importArgs('--timeout-s', '1e12'))).toThrow(
      /^--timeout-s: 1000000000000 s is longer than a timer can wait/,
    );
    expect(() =>
      parseEvalArgs(['--predictions', 'p', '--gold', 'g', '--db-root', 'd', '--ves-iterations', '1e9']),
    ).toThrow(/^--ves-iterations: expected an integer from 1 to 10,000/);
  });

  it('rubric --concurrency 1e9 and --retries 1000000: refused before the judge is called', async () => {
    const base = rubricArgs({ dataset: 'x.jsonl', completions: 'y.jsonl', judgeModel: 'j' });
    const c = await runCli([...base, '--concurrency', '1e9']);
    expect(c.code).toBe(2);
    expect(c.stderr).toBe('error: --concurrency: expected an integer from 1 to 64, got "1e9"\n');
    const r = await runCli([...base, '--retries', '1000000']);
    expect(r.stderr).toBe('error: --retries: expected an integer from 0 to 10, got "1000000"\n');
  });

  it('batch export --n 1024 writes 1,024 request lines per question as a stream (was built in memory: --n 2000 "Invalid string length")', async () => {
    const out = tempFile('big.jsonl');
    const r = await runCli(minidevBatchExport('m', out, '--n', '1024', '--limit', '2'));
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('wrote 2048 requests (2 questions x 1024 samples)');
    const lines = readFileSync(out, 'utf8').split('\n');
    expect(lines.pop()).toBe('');
    expect(lines).toHaveLength(2048);
    expect(JSON.parse(lines[2047]!).custom_id).toMatch(/-s1023$/);
  });
});
