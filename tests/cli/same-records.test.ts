/**
 * One run recipe (src/core/run/score-run.ts) behind every host: the same completions through
 * the CLI's `eval`, `harness` and `batch import`, an app replay run and an app generation run
 * (the run service of src/app/ over in-memory ports and Node's sql.js pool) give the same
 * sample records, findings included (version-sensitive SQL, gold issues). Real mini-dev data:
 * the first 48 questions whose database is here (they hold question 1322, whose gold lists
 * what it counts, and 1460/1464, answered with CONCAT), answered by meta-llama-3-70b's CoT
 * predictions. The generation run's engine is the replay engine (no model weights here): it
 * serves the recorded completions, and everything after it is the app's generation loop.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { BIRD_SEPARATOR } from '../../src/core/formats/predictions.ts';
import { parseCustomId } from '../../src/core/batch/batch.ts';
import { parseRunFile } from '../../src/core/runfile/run-file.ts';
import type { SampleRecord } from '../../src/core/run/types.ts';
import { ReplayEngine } from '../helpers/replay-engine.ts';
import { createRunService } from '../../src/app/run-service.ts';
import { GREEDY } from '../../src/core/engine/engine.ts';
import { findTemplate } from '../../src/core/prompt/templates.ts';
import { DEFAULT_RUN_CONFIG } from '../../src/core/run/types.ts';
import { minidevBatchExport, minidevBatchImport, readBatchRequests, vllmOkLine } from '../helpers/batch-fixtures.ts';
import { fileDataset, memoryAppPorts } from '../helpers/memory-app-ports.ts';
import { jsonlFile, runCli, tempFile } from '../helpers/cli.ts';
import { lmEvalSampleRow } from '../helpers/harness-rows.ts';
import { minidevFlags, readBirdQuestions, readSharedText, sharedData } from '../helpers/shared-data.ts';

const bird = (...p: string[]) => sharedData('bird', ...p);
const questions = readBirdQuestions(bird('minidev', 'mini_dev_sqlite.json'));
const predictions = JSON.parse(
  readSharedText('bird', 'predictions', 'TA_output', 'predict_mini_dev_meta-llama-3-70b-instruct2_cot_SQLite.json'),
) as Record<string, string>;
/** The completion a model wrote for the question at gold position `index`: its prediction in a fenced block. */
const completionOf = (index: number) =>
  `Here is the query.\n\`\`\`sql\n${predictions[String(index)]!.split(BIRD_SEPARATOR)[0]!.trim()}\n\`\`\``;

/**
 * What a sample's verdict and findings are; timings and the generation record are not (they
 * differ run to run, or by host kind), nor `versionCheck`, the second measurement `eval` adds
 * on the older SQLite (docs/version-effects.md; the app measures it on demand).
 */
function verdicts(samples: readonly SampleRecord[]) {
  return samples
    .map(({ elapsedMs: _e, timeRatio: _t, goldReused: _g, generation: _gen, versionCheck: _v, ...rest }) => rest)
    .sort((a, b) => a.index - b.index || a.sample - b.sample);
}

/** Runs a CLI command that writes a run file (two workers); the run file's path, once it exited 0. */
async function runFileOf(name: string, args: string[]): Promise<string> {
  const file = tempFile(name);
  const r = await runCli([...args, '--run-out', file, '--workers', '2']);
  expect(r.code, r.stderr).toBe(0);
  return file;
}

const runFile = (file: string) => parseRunFile(readFileSync(file, 'utf8'), file);

describe('the same completions through eval, harness, batch import, an app replay and an app generation give the same sample records', () => {
  it('48 mini-dev questions: identical records, with the version-sensitivity and gold-issue findings in every host', async () => {
    // batch export picks the plan's questions (the first 48 with a database here) and their custom_ids.
    const input = tempFile('in.jsonl');
    const sampling = ['--n', '1', '--seed', '0', '--limit', '48'];
    const exp = await runCli(minidevBatchExport('meta-llama-3-70b-instruct', input, ...sampling));
    expect(exp.code, exp.stderr).toBe(0);
    const lines = readBatchRequests(input);
    expect(lines).toHaveLength(48);
    const indices = lines.map((l) => parseCustomId(l.custom_id)!.index);

    // batch import: run_batch's output lines with those completions.
    const output = tempFile('out.jsonl');
    writeFileSync(
      output,
      lines.map((l) => vllmOkLine(l.custom_id, completionOf(parseCustomId(l.custom_id)!.index))).join('\n') + '\n',
    );
    const batchRun = await runFileOf('batch.run.json', minidevBatchImport(input, output));

    // eval: the workbench's predictions JSONL.
    const preds = jsonlFile(
      'preds.jsonl',
      indices.map((i) => ({ question_id: questions[i]!.question_id, completion: completionOf(i) })),
    );
    const evalRun = await runFileOf('eval.run.json', ['eval', '--predictions', preds, ...minidevFlags()]);

    // harness: lm-evaluation-harness --log_samples rows.
    const samplesFile = jsonlFile(
      'samples_bird_2026-01-01T00-00-00.jsonl',
      indices.map((i, docId) =>
        lmEvalSampleRow(questions[i]!, {
          docId,
          prompt: questions[i]!.question,
          genKwargs: { until: [] },
          resps: [completionOf(i)],
          filtered: completionOf(i),
          filter: 'none',
          exactMatch: 0,
        }),
      ),
    );
    const harnessRun = await runFileOf('harness.run.json', [
      'harness',
      '--completions',
      samplesFile,
      ...minidevFlags(),
    ]);

    // The app: a replay run of the same predictions file, and a generation run whose engine serves the completions.
    const dataset = await fileDataset({
      questions: bird('minidev', 'mini_dev_sqlite.json'),
      gold: bird('minidev', 'mini_dev_sqlite_gold.sql'),
      dbRoot: bird('databases'),
    });
    const app = memoryAppPorts(dataset, bird('databases'));
    const service = createRunService(app.ports);
    const config = { ...DEFAULT_RUN_CONFIG };
    const replayed = await service.startReplay({
      name: 'replay',
      datasetId: dataset.id,
      subset: { description: 'every question', indices: [] },
      predictions: { name: 'preds.jsonl', text: readFileSync(preds, 'utf8') },
      config,
    });
    expect(replayed.status).toBe('done');
    const engine = new ReplayEngine({
      fileName: 'preds.jsonl',
      completions: new Map(indices.map((i) => [questions[i]!.question_id, [completionOf(i)]])),
    });
    await engine.load({ id: 'preds.jsonl' });
    const generated = await service.startGeneration(
      {
        name: 'generation',
        datasetId: dataset.id,
        subset: { description: 'the plan', indices },
        spec: {
          engine: 'replay',
          model: { id: 'preds.jsonl' },
          template: findTemplate('bird-minidev-v1')!,
          params: { ...GREEDY },
        },
        config,
      },
      engine,
    );
    expect(generated.outcome).toEqual({ kind: 'done' });

    const reference = verdicts(runFile(evalRun).samples);
    expect(reference).toHaveLength(48);
    // Not a vacuous equality: the run has right and wrong answers, and both kinds of findings.
    expect(reference.filter((s) => s.ex === 1).length).toBeGreaterThan(10);
    expect(reference.filter((s) => s.ex === 0).length).toBeGreaterThan(5);
    for (const qid of [1460, 1464])
      expect(reference.find((s) => s.questionId === qid)!.versionFeatures).toEqual([
        { feature: 'concat()', since: '3.44.0', where: 'pred' },
      ]);
    expect(reference.find((s) => s.questionId === 1322)!.goldIssues!.map((g) => g.kind)).toEqual(['count-as-list']);

    expect(verdicts(runFile(harnessRun).samples)).toEqual(reference);
    expect(verdicts(runFile(batchRun).samples)).toEqual(reference);
    expect(verdicts(app.samples(replayed.id))).toEqual(reference);
    expect(verdicts(app.samples(generated.run.id))).toEqual(reference);
    // The app's run header names the SQLite of the verdicts (the recipe's database facts).
    expect(replayed.sqliteVersion).toMatch(/^3\.\d+\.\d+$/);
  }, 300_000);
});
