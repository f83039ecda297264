/**
 * Batch files from the Generate screen, in the built app (headless Chromium): the demo
 * dataset imported, its first 3 questions x 2 samples exported as an OpenAI batch JSONL and a
 * plan; an output file written in vLLM run_batch's format (sample 0 the gold SQL, sample 1 a
 * wrong query, one error line, one missing line) imported back as a run; each sample's EX is
 * the one Node gives for a replay of the same completions.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Download } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { createNodeSqlPool } from '../../src/adapters/node/sql-worker-host.ts';
import { DEFAULT_EVAL_OPTIONS } from '../../src/core/eval/executor.ts';
import { parseGoldSql } from '../../src/core/formats/gold.ts';
import { parseQuestions } from '../../src/core/formats/questions.ts';
import { parseCustomId, type BatchRequestLine } from '../../src/core/batch/batch.ts';
import { planReplay } from '../../src/core/run/replay.ts';
import { vllmErrorLine, vllmOkLine } from '../helpers/batch-fixtures.ts';
import { tempFile } from '../helpers/cli.ts';
import { browserSkipReason, suiteTitle } from './harness.ts';
import { DEMO_ROOT } from './node-reference.ts';
import { type AppSession, importDemoLibrary, useApp } from './workbench-helpers.ts';

describe.skipIf(browserSkipReason())(suiteTitle('Generate screen: batch files out and back in'), () => {
  let { server, page } = {} as AppSession;
  useApp((s) => ({ server, page } = s));

  it('exports one line per sample with a unique custom_id and imports run_batch output as a run scored like a replay', async () => {
    await page.goto(server.url + '#/datasets');
    await importDemoLibrary(page);

    await page.getByTestId('nav-generate').click();
    await page.getByTestId('generate-page').waitFor();
    await page.getByTestId('gen-subset').selectOption('first');
    await page.getByTestId('gen-first-n').fill('3');
    await page.getByTestId('gen-n').fill('2');
    await page.getByTestId('gen-temperature').fill('0.7');
    await page.getByTestId('gen-batch-model').fill('Qwen/Qwen2.5-Coder-7B-Instruct');
    const downloads: Download[] = [];
    page.on('download', (d) => downloads.push(d));
    await page.getByTestId('gen-batch-export').click();
    await expect.poll(() => downloads.length, { timeout: 30_000 }).toBe(2);
    expect(await page.getByTestId('gen-batch-exported').textContent()).toContain(
      '6 requests (3 questions × 2 samples)',
    );
    const byName = new Map<string, string>();
    for (const d of downloads) byName.set(d.suggestedFilename(), readFileSync(await d.path(), 'utf8'));
    const jsonlName = [...byName.keys()].find((n) => n.endsWith('.jsonl'))!;
    const planName = [...byName.keys()].find((n) => n.endsWith('.plan.json'))!;
    const lines: BatchRequestLine[] = byName
      .get(jsonlName)!
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines).toHaveLength(6);
    expect(new Set(lines.map((l) => l.custom_id)).size).toBe(6);
    for (const l of lines) {
      const { sample } = parseCustomId(l.custom_id)!;
      expect(l.body).toMatchObject({ model: 'Qwen/Qwen2.5-Coder-7B-Instruct', temperature: 0.7, seed: sample, n: 1 });
      expect(l.body.messages.at(-1)!.content).toContain('CREATE TABLE');
    }

    const gold = parseGoldSql(readFileSync(path.join(DEMO_ROOT, 'gold.sql'), 'utf8'), 'gold.sql');
    const completion = (id: string) => {
      const { index, sample } = parseCustomId(id)!;
      return sample === 0 ? `\`\`\`sql\n${gold[index]!.sql}\n\`\`\`` : 'SELECT 1';
    };
    const [errorLine, missingLine] = [lines[1]!, lines[4]!];
    const planFile = tempFile(planName);
    writeFileSync(planFile, byName.get(planName)!);
    const outFile = tempFile('out.jsonl');
    writeFileSync(
      outFile,
      lines
        .filter((l) => l !== missingLine)
        .map((l) =>
          l === errorLine
            ? vllmErrorLine(l.custom_id, 'CUDA out of memory')
            : vllmOkLine(l.custom_id, completion(l.custom_id)),
        )
        .join('\n') + '\n',
    );
    await page.getByTestId('gen-batch-plan-file').setInputFiles(planFile);
    await page.getByTestId('gen-batch-output-file').setInputFiles(outFile);
    await expect
      .poll(async () => (await page.getByTestId('gen-batch-coverage').textContent()) ?? '')
      .toContain('4 of 6 requests answered, 1 failed, 1 missing');
    expect(await page.getByTestId('gen-batch-redo').textContent()).toContain(
      'Export the 2 missing and failed requests',
    );

    await page.getByTestId('gen-name').fill('batch on the demo');
    await page.getByTestId('gen-batch-import').click();
    await page.waitForURL(/#\/run\/[^/]+$/, { timeout: 60_000 });
    const runId = decodeURIComponent(page.url().split('#/run/')[1]!);

    // Node: the same completions as a predictions file, scored by the same core.
    const questions = parseQuestions(readFileSync(path.join(DEMO_ROOT, 'questions.json'), 'utf8'), 'questions.json');
    const answered = lines.filter((l) => l !== errorLine && l !== missingLine);
    const preds = answered
      .map((l) =>
        JSON.stringify({
          question_id: questions[parseCustomId(l.custom_id)!.index]!.questionId,
          completion: completion(l.custom_id),
        }),
      )
      .join('\n');
    const { items } = planReplay({ predictions: { name: 'preds.jsonl', text: preds }, gold, questions });
    const pool = createNodeSqlPool({ dbRoot: DEMO_ROOT, workers: 1 });
    const results = await pool.evaluate(items, DEFAULT_EVAL_OPTIONS).finally(() => pool.dispose());
    const nodeEx = new Map(
      answered.map((l) => {
        const { index } = parseCustomId(l.custom_id)!;
        const r = results.find((x, i) => x.index === index && items[i]!.completion === completion(l.custom_id))!;
        return [l.custom_id, String(r.ex)] as const;
      }),
    );
    expect([...nodeEx.values()]).toContain('1');

    for (const l of lines) {
      const { index, sample } = parseCustomId(l.custom_id)!;
      await page.goto(`${server.url}#/run/${encodeURIComponent(runId)}/items/${index}.${sample}`);
      const detail = page.getByTestId('item-detail');
      await detail.waitFor();
      const expected = l === errorLine || l === missingLine ? '0' : nodeEx.get(l.custom_id);
      expect(await detail.getAttribute('data-ex'), l.custom_id).toBe(expected);
      if (l === errorLine) expect((await detail.textContent()) ?? '').toContain('CUDA out of memory');
    }
  }, 180_000);
});
