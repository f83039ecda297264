import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseGoldSql } from '../../src/core/formats/gold.ts';
import { parseRunFile } from '../../src/core/runfile/run-file.ts';
import { parseCustomId, type BatchRequestLine } from '../../src/core/batch/batch.ts';
import { vllmErrorLine, vllmOkLine } from '../helpers/batch-fixtures.ts';
import { readJson, runCli, tempFile } from '../helpers/cli.ts';
import { minidevFlags, readSharedText, sharedData } from '../helpers/shared-data.ts';

const bird = (...p: string[]) => sharedData('bird', ...p);
const data = () => [
  '--dataset',
  bird('minidev', 'mini_dev_sqlite.json'),
  '--gold',
  bird('minidev', 'mini_dev_sqlite_gold.sql'),
  '--db-root',
  bird('databases'),
];
const gold = parseGoldSql(readSharedText('bird', 'minidev', 'mini_dev_sqlite_gold.sql'), 'gold');
const readLines = (file: string): BatchRequestLine[] =>
  readFileSync(file, 'utf8')
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l));

describe('CLI batch export / import', () => {
  it('exports one request per sample with a unique custom_id, imports run_batch output as a run equal to eval of the same completions, and re-exports the missing lines', async () => {
    const input = tempFile('in.jsonl');
    const exp = await runCli([
      'batch',
      'export',
      ...data(),
      '--model',
      'Qwen/Qwen2.5-Coder-7B-Instruct',
      '--n',
      '2',
      '--seed',
      '5',
      '--temperature',
      '0.7',
      '--limit',
      '6',
      '--out',
      input,
    ]);
    expect(exp.code, exp.stderr).toBe(0);
    expect(exp.stdout).toContain('wrote 12 requests (6 questions x 2 samples)');
    expect(exp.stderr).toMatch(/360 questions left out: no database under .* for debit_card_specializing/);
    const lines = readLines(input);
    expect(lines).toHaveLength(12);
    expect(new Set(lines.map((l) => l.custom_id)).size).toBe(12);
    expect(lines.map((l) => l.body.seed)).toEqual(lines.map((l) => 5 + parseCustomId(l.custom_id)!.sample));
    const planFile = input.replace(/\.jsonl$/, '.plan.json');
    expect(readJson(planFile)).toMatchObject({
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
    const imp = await runCli([
      'batch',
      'import',
      '--plan',
      planFile,
      '--output',
      output,
      ...data(),
      '--run-out',
      runOut,
      '--missing-out',
      missingOut,
    ]);
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
    expect(readLines(missingOut)).toEqual([errorLine, missingLine].sort((a, b) => lines.indexOf(a) - lines.indexOf(b)));

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
    const ev = await runCli(['eval', '--predictions', preds, ...data(), '--out', evalOut]);
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

  it('refuses an import whose dataset is not the one the plan was exported from, naming the flag', async () => {
    const input = tempFile('in.jsonl');
    expect((await runCli(['batch', 'export', ...data(), '--model', 'm', '--limit', '1', '--out', input])).code).toBe(0);
    const other = tempFile('dev.json');
    writeFileSync(other, readSharedText('bird', 'minidev', 'mini_dev_sqlite.json').replace(/\n$/, '') + ' \n');
    const out = tempFile('out.jsonl');
    writeFileSync(out, vllmOkLine('q0-s0', 'SELECT 1') + '\n');
    const r = await runCli([
      'batch',
      'import',
      '--plan',
      input.replace(/\.jsonl$/, '.plan.json'),
      '--output',
      out,
      '--dataset',
      other,
      '--gold',
      bird('minidev', 'mini_dev_sqlite_gold.sql'),
      '--db-root',
      bird('databases'),
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--dataset: the plan was exported from mini_dev_sqlite\.json/);
    const noOut = await runCli(['batch', 'import', '--plan', 'x', ...data()]);
    expect(noOut.stderr).toMatch(/--output: is required/);
  }, 60_000);

  it('refuses a plan edited to ask for a question the dataset does not have, naming the plan and the index', async () => {
    const input = tempFile('in.jsonl');
    expect((await runCli(['batch', 'export', ...data(), '--model', 'm', '--limit', '1', '--out', input])).code).toBe(0);
    const planFile = input.replace(/\.jsonl$/, '.plan.json');
    const plan = JSON.parse(readFileSync(planFile, 'utf8')) as { indices: number[] };
    plan.indices.push(99999);
    writeFileSync(planFile, JSON.stringify(plan));
    const out = tempFile('out.jsonl');
    writeFileSync(out, vllmOkLine(`q${plan.indices[0]}-s0`, 'SELECT 1') + '\n');
    const r = await runCli(['batch', 'import', '--plan', planFile, '--output', out, ...minidevFlags()]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/in\.plan\.json: asks for question index 99999, but the dataset has 500 questions/);
  }, 60_000);
});
