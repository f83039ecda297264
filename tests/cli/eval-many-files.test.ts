import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { outputStems } from '../../src/cli/commands/eval-files.ts';
import { runCli, tempFile } from '../helpers/cli.ts';
import { minidevFlags, sharedData } from '../helpers/shared-data.ts';

const common = [...minidevFlags(), '--workers', '2'];
const ta = sharedData('bird', 'predictions', 'TA_output');
const kg = sharedData('bird', 'predictions', 'sql_output_kg');

/**
 * The bytes of an output without what measures the machine or the moment (times, the run's
 * id and dates) and without how the work was shared: the executions block (a many-file run
 * counts its shared work there, with reuse across files, a one-file run its own) and a sample's
 * `goldReused` (its gold's result came from another item, possibly of another file).
 */
function stable(file: string): string {
  return readFileSync(file, 'utf8')
    .replace(/\n\s*"goldReused": true,/g, '')
    .replace(/"(elapsed_ms|elapsedMs)": [^,\n]+/g, '"$1": 0')
    .replace(/"(id|createdAt|updatedAt)": "[^"]*"/g, '"$1": ""')
    .replace(/"executions": \{[^}]*?(\{[^}]*\}[^}]*)?\}/g, '"executions": {}');
}

describe('eval of several predictions files in one invocation', () => {
  it('names outputs by file name, with the folder in front only when two inputs share a name', () => {
    expect(outputStems(['a/x.json', 'b/y.jsonl'])).toEqual(['x', 'y']);
    expect(outputStems(['a/x.json', 'b/x.json'])).toEqual(['a__x', 'b__x']);
    expect(() => outputStems(['a/x.json', 'a/x.sql'])).toThrow(/same outputs \(a__x\)/);
  });

  it('a folder and a glob give one report and one run file per file, byte for byte those of one run per file, and a table of all', async () => {
    // Four real files without the slow query (about 27 s with sql.js each): a glob gives the
    // first, the others are named, and the first named again is evaluated once.
    const files = [
      path.join(ta, 'predict_mini_dev_gpt-35-turbo_cot_SQLite.json'),
      path.join(ta, 'predict_mini_dev_gpt-4-o_cot_SQLite.json'),
      path.join(kg, 'predict_mini_dev_gpt-35-turbo-instruct_sqlite.json'),
      path.join(kg, 'predict_mini_dev_meta-llama-3-8b-instruct-2_sqlite.json'),
    ];
    const dir = mkdtempSync(path.join(tmpdir(), 'wb-many-'));
    const many = await runCli([
      'eval',
      ...common,
      '--out-dir',
      dir,
      '--predictions',
      path.join(ta, 'predict_mini_dev_gpt-[3]5*_cot_SQLite.json'),
      '--predictions',
      files[1]!,
      '--predictions',
      files[2]!,
      '--predictions',
      files[3]!,
      '--predictions',
      files[0]!,
    ]);
    expect(many.code, many.stderr).toBe(0);
    const stems = files.map((f) => path.basename(f, '.json'));
    expect(readdirSync(dir).sort()).toEqual(
      [...stems.flatMap((s) => [`${s}.report.json`, `${s}.run.json`]), 'summary.tsv'].sort(),
    );
    const table = readFileSync(path.join(dir, 'summary.tsv'), 'utf8').trim().split('\n');
    expect(table[0]).toBe('predictions\tquestions\tsamples\tex\tsoft_f1\terrors\ttimeouts\tmissing_db\tfrom_cache');
    expect(table.slice(1).map((l) => l.split('\t')[0])).toEqual(files);
    expect(many.stdout).toContain(table[0]);
    // Every gold runs once per question and worker for all four files together.
    const shared = JSON.parse(readFileSync(path.join(dir, `${stems[0]}.report.json`), 'utf8')).summary.executions
      .shared_run;
    expect(shared).toMatchObject({ files: 4, items: 2000, from_cache: 0 });
    expect(shared.gold_executed).toBeLessThanOrEqual(140 * 2);

    for (const [i, f] of files.entries()) {
      const one = { out: tempFile('one.json'), run: tempFile('one.run.json') };
      const r = await runCli(['eval', ...common, '--predictions', f, '--out', one.out, '--run-out', one.run]);
      expect(r.code, r.stderr).toBe(0);
      expect(stable(path.join(dir, `${stems[i]}.report.json`)), f).toBe(stable(one.out));
      expect(stable(path.join(dir, `${stems[i]}.run.json`)), f).toBe(stable(one.run));
      const row = table.find((l) => l.startsWith(f + '\t'))!.split('\t');
      expect(Number(row[3])).toBeCloseTo(JSON.parse(readFileSync(one.out, 'utf8')).summary.by_difficulty.total.ex, 2);
    }
  }, 600_000);

  it('refuses --out with several files and a folder without predictions, naming the flag', async () => {
    const r = await runCli(['eval', ...common, '--predictions', ta, '--out', tempFile('x.json')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--out: .*--predictions gave 4: use --out-dir DIR/);
    const empty = mkdtempSync(path.join(tmpdir(), 'wb-empty-'));
    const e = await runCli(['eval', ...common, '--predictions', empty]);
    expect(e.code).toBe(2);
    expect(e.stderr).toMatch(/--predictions: .* holds no predictions file/);
  }, 120_000);
});
