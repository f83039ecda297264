// eslint-disable-next-line @typescript-eslint/triple-slash-reference -- better-sqlite3 ships no types; the bench declares the part it uses
/// <reference path="../../bench/better-sqlite3.d.ts" />
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sha256File } from '../../src/cli/commands/run-out.ts';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { parseGoldSql } from '../../src/core/formats/gold.ts';
import { parseRunFile } from '../../src/core/runfile/run-file.ts';
import { parseCustomId } from '../../src/core/batch/batch.ts';
import {
  minidevBatchExport,
  minidevBatchImport,
  planFileOf,
  readBatchRequests,
  vllmErrorLine,
  vllmOkLine,
} from '../helpers/batch-fixtures.ts';
import { readJson, ROOT, runCli, tempFile } from '../helpers/cli.ts';
import { minidevFlags, readSharedText, sharedData } from '../helpers/shared-data.ts';

const gold = parseGoldSql(readSharedText('bird', 'minidev', 'mini_dev_sqlite_gold.sql'), 'gold');

describe('CLI batch export / import', () => {
  it('exports one request per sample with a unique custom_id, imports run_batch output as a run equal to eval of the same completions, and re-exports the missing lines', async () => {
    const input = tempFile('in.jsonl');
    const sampling = ['--n', '2', '--seed', '5', '--temperature', '0.7', '--limit', '6'];
    const exp = await runCli(minidevBatchExport('Qwen/Qwen2.5-Coder-7B-Instruct', input, ...sampling));
    expect(exp.code, exp.stderr).toBe(0);
    expect(exp.stdout).toContain('wrote 12 requests (6 questions x 2 samples)');
    expect(exp.stderr).toMatch(/360 questions left out: no database under .* for debit_card_specializing/);
    const lines = readBatchRequests(input);
    expect(lines).toHaveLength(12);
    expect(new Set(lines.map((l) => l.custom_id)).size).toBe(12);
    expect(lines.map((l) => l.body.seed)).toEqual(lines.map((l) => 5 + parseCustomId(l.custom_id)!.sample));
    expect(readJson(planFileOf(input))).toMatchObject({
      format: 'rlvr-workbench-batch-plan',
      spec: { engine: 'batch', params: { n: 2, seed: 5 } },
    });

    // run_batch's output, in another order: sample 0 the gold SQL, sample 1 a wrong query, one error line, one line missing.
    const completion = (id: string) => {
      const { index, sample } = parseCustomId(id)!;
      return sample === 0 ? gold[index]!.sql : 'SELECT 0';
    };
    const [errorLine, missingLine] = [lines[3]!, lines[8]!];
    const output = tempFile('out.jsonl');
    writeFileSync(
      output,
      lines
        .filter((l) => l !== missingLine)
        .reverse()
        .map((l) =>
          l === errorLine
            ? vllmErrorLine(l.custom_id, 'CUDA out of memory')
            : vllmOkLine(l.custom_id, completion(l.custom_id)),
        )
        .join('\n') + '\n',
    );
    const runOut = tempFile('run.json');
    const missingOut = tempFile('missing.jsonl');
    const imp = await runCli(minidevBatchImport(input, output, {}, '--run-out', runOut, '--missing-out', missingOut));
    expect(imp.code, imp.stderr).toBe(0);
    expect(imp.stderr).toContain('10 of 12 requests answered, 1 failed, 1 missing');
    expect(imp.stderr).toContain(`missing: ${missingLine.custom_id}`);
    expect(imp.stderr).toContain(`failed: ${errorLine.custom_id}`);
    const run = parseRunFile(readFileSync(runOut, 'utf8'), 'run.json');
    expect(run.run.source).toEqual({
      kind: 'generation',
      engine: 'batch',
      model: 'Qwen/Qwen2.5-Coder-7B-Instruct',
      template: 'bird-minidev-v1',
    });
    expect(run.samples).toHaveLength(12);
    // The run's header and every sample name the device: the servers that ran the batch.
    expect(run.run.device).toEqual({
      device: 'server',
      reason: null,
      detail: expect.stringMatching(/^batch output .*; model Qwen\/Qwen2\.5-Coder-7B-Instruct/),
    });
    for (const s of run.samples) expect(s.generation?.deviceDetail).toBe(run.run.device!.detail);
    const failed = run.samples.find((s) => `q${s.index}-s${s.sample}` === errorLine.custom_id)!;
    expect(failed.generation).toMatchObject({
      finishReason: 'error',
      error: expect.stringContaining('status 400: CUDA out of memory'),
    });
    expect(readBatchRequests(missingOut)).toEqual(
      [errorLine, missingLine].sort((a, b) => lines.indexOf(a) - lines.indexOf(b)),
    );

    // The same completions through `eval`: the same EX per sample.
    const answered = run.samples.filter((s) => s.generation?.finishReason !== 'error');
    const preds = tempFile('preds.jsonl');
    writeFileSync(
      preds,
      answered
        .map((s) => JSON.stringify({ question_id: s.questionId, completion: completion(`q${s.index}-s${s.sample}`) }))
        .join('\n') + '\n',
    );
    const evalOut = tempFile('eval.json');
    const ev = await runCli(['eval', '--predictions', preds, ...minidevFlags(), '--out', evalOut]);
    expect(ev.code, ev.stderr).toBe(0);
    const items = readJson(evalOut).items as Array<{
      question_id: number;
      ex: number;
      pred_sql?: string;
      sql?: string;
    }>;
    expect(items).toHaveLength(answered.length);
    const exOf = (xs: Array<{ ex: number }>) => xs.reduce((k, x) => k + x.ex, 0);
    expect(exOf(answered)).toBe(exOf(items));
    expect(exOf(answered)).toBeGreaterThan(0);
    // The failed and the missing sample count 0 in the run's EX over all 12.
    expect(exOf(run.samples)).toBe(exOf(answered));
    expect(run.samples.find((s) => `q${s.index}-s${s.sample}` === missingLine.custom_id)).toMatchObject({ ex: 0 });
  }, 120_000);

  it('--run-out: the databases are hashed before the run (recorded as such) and checked after it; one replaced mid-run is an error, no run file', async () => {
    const root = mkdtempSync(path.join(tmpdir(), 'wb-batch-hash-'));
    const db = (name: string) => sharedData('bird', 'databases', name, `${name}.sqlite`);
    mkdirSync(path.join(root, 'superhero'));
    const file = path.join(root, 'superhero', 'superhero.sqlite');
    copyFileSync(db('superhero'), file);
    const input = tempFile('hash-in.jsonl');
    const exp = await runCli([...minidevBatchExport('m', input, '--limit', '1'), '--db-root', root]);
    expect(exp.code, exp.stderr).toBe(0);
    const [line] = readBatchRequests(input);
    // A query that runs a few seconds, so the run is still going when the database is replaced.
    const slow =
      'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1000000) SELECT count(*) FROM c';
    const output = tempFile('hash-out.jsonl');
    writeFileSync(output, vllmOkLine(line!.custom_id, '```sql\n' + slow + '\n```') + '\n');
    const importArgs = (runOut: string) => [
      ...minidevBatchImport(input, output, { dbRoot: root }, '--run-out', runOut, '--timeout-s', '300'),
      '--workers',
      '1',
    ];

    const kept = tempFile('hash-kept.run.json');
    const ok = await runCli(importArgs(kept));
    expect(ok.code, ok.stderr).toBe(0);
    const run = parseRunFile(readFileSync(kept, 'utf8'), 'run.json');
    expect(run.run.dataset.databases).toEqual({ superhero: await sha256File(db('superhero')) });

    // Replaced once the import has read its inputs (the coverage line), while the slow query runs,
    // by a copy whose rows and schema are the same (the prompts rebuilt from it are the same) but
    // whose bytes differ (user_version).
    const other = path.join(root, 'other.sqlite');
    copyFileSync(db('superhero'), other);
    const conn = new Database(other);
    conn.pragma('user_version = 7');
    conn.close();
    const replaced = tempFile('hash-replaced.run.json');
    const child = spawn('npm', ['run', '--silent', 'cli', '--', ...importArgs(replaced)], { cwd: ROOT });
    let stderr = '';
    child.stderr.on('data', (d) => {
      stderr += d;
      if (/requests answered/.test(stderr) && !stderr.includes('(replaced)')) {
        stderr += '(replaced)';
        copyFileSync(other, file);
      }
    });
    const code = await new Promise((resolve) => child.on('close', resolve));
    expect(stderr).toContain('(replaced)');
    expect(code).toBe(2);
    expect(stderr).toMatch(
      /--db-root: database superhero changed during the run \(.*superhero\.sqlite: sha256 [0-9a-f]{12}… before, [0-9a-f]{12}… after\): its items may have read either version, so no run file was written/,
    );
    expect(existsSync(replaced)).toBe(false);
  }, 300_000);

  it('refuses an import whose dataset is not the one the plan was exported from, naming the flag', async () => {
    const input = tempFile('in.jsonl');
    expect((await runCli(minidevBatchExport('m', input, '--limit', '1'))).code).toBe(0);
    const other = tempFile('dev.json');
    writeFileSync(other, readSharedText('bird', 'minidev', 'mini_dev_sqlite.json').replace(/\n$/, '') + ' \n');
    const out = tempFile('out.jsonl');
    writeFileSync(out, vllmOkLine('q0-s0', 'SELECT 1') + '\n');
    const r = await runCli(minidevBatchImport(input, out, { dataset: other }));
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--dataset: the plan was exported from mini_dev_sqlite\.json/);
    const noOut = await runCli(['batch', 'import', '--plan', 'x', ...minidevFlags()]);
    expect(noOut.stderr).toMatch(/--output: is required/);
  }, 60_000);

  it('refuses a plan edited to ask for a question the dataset does not have, naming the plan and the index', async () => {
    const input = tempFile('in.jsonl');
    expect((await runCli(minidevBatchExport('m', input, '--limit', '1'))).code).toBe(0);
    const planFile = planFileOf(input);
    const plan = JSON.parse(readFileSync(planFile, 'utf8')) as { indices: number[] };
    plan.indices.push(99999);
    writeFileSync(planFile, JSON.stringify(plan));
    const out = tempFile('out.jsonl');
    writeFileSync(out, vllmOkLine(`q${plan.indices[0]}-s0`, 'SELECT 1') + '\n');
    const r = await runCli(minidevBatchImport(input, out));
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/in\.plan\.json: asks for question index 99999, but the dataset has 500 questions/);
  }, 60_000);
});
