/**
 * `report` at its bounds (docs/report.md, "Bounds"), through the CLI: a run file past 512 MiB
 * is refused by its size before a byte is read (never "not UTF-8"); an SQL past 64 KiB is cut in
 * the report with a marker and the command says so; a run name's terminal escapes are printed
 * escaped.
 */
import { mkdtempSync, openSync, closeSync, ftruncateSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { zlibGzip } from '../../src/adapters/node/report-files.ts';
import { readReportFile } from '../../src/core/report/report-file.ts';
import { runFileJson } from '../../src/core/runfile/export.ts';
import { runCli } from '../helpers/cli.ts';
import { syntheticRunFile, syntheticSamples } from '../robustness/synthetic-run.ts';

const dir = mkdtempSync(path.join(tmpdir(), 'wb-report-bounds-'));
const at = (f: string) => path.join(dir, f);

describe('report: bounded input, texts and terminal output', () => {
  it('a 540 MB run file is refused by its size before it is read, naming the size and the bound', async () => {
    // Sparse: 540 MB by its size, no disk used; the bound is checked on the size, never by reading.
    const fd = openSync(at('huge.run.json'), 'w');
    ftruncateSync(fd, 540_000_000);
    closeSync(fd);
    const run = await runCli(['report', '--run', at('huge.run.json'), '--out', at('huge.html')]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(
      /--run: .*huge\.run\.json is 515\.0 MiB, more than the 512\.0 MiB a report reads from one file: make reports of parts of the run/,
    );
    expect(run.stderr).not.toMatch(/UTF-8/);
    expect(existsSync(at('huge.html'))).toBe(false);
  }, 120_000);

  it('an SQL of 100 KiB is cut at 64 KiB with a marker, the command says so; a run name with escapes is printed escaped', async () => {
    const samples = syntheticSamples({ questions: 5, samples: 2, seed: 3 });
    samples[0] = { ...samples[0]!, sql: `SELECT '${'x'.repeat(100 * 1024 - 9)}'` };
    const file = syntheticRunFile(samples, 'long');
    const name = 'evil \x1b[2J\x1b]0;title\x07 run\tname';
    writeFileSync(at('long.run.json'), runFileJson({ ...file, run: { ...file.run, name } }));
    const run = await runCli(['report', '--run', at('long.run.json'), '--out', at('long.html')]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('run "evil \\x1b[2J\\x1b]0;title\\x07 run\\tname"');
    // eslint-disable-next-line no-control-regex -- no control character but line feed
    expect(run.stdout + run.stderr).not.toMatch(/[\x00-\x09\x0b-\x1f\x7f-\x9f]/);
    expect(run.stdout).toMatch(/^1 text\(s\) longer than 65,536 characters were cut in the report/m);
    const back = await readReportFile(readFileSync(at('long.html'), 'utf8'), 'long.html', zlibGzip);
    expect(back.runs[0]!.run.name).toBe(name);
    expect(back.textsCut).toEqual({ count: 1, maxChars: 65536 });
    expect(back.runs[0]!.samples[0]!.sql).toMatch(/^SELECT 'x{65528}… \(36,864 characters more\)$/);
  }, 180_000);
});
