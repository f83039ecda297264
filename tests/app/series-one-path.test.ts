/**
 * The CLI's `series` and the app's series service score each step through the same application
 * function (src/app/series-step.ts), so what one host's step gets, the other's gets: the
 * question texts for the gold checks that read them (a question that asks for a count whose gold
 * lists rows), and Spider's own rule for a Spider dataset. Each test reads the same real
 * databases and the same step file in both hosts and compares the step's sample records.
 */
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createSeriesService } from '../../src/app/series-service.ts';
import { parseSeriesFile } from '../../src/core/series/file.ts';
import { DEFAULT_RUN_CONFIG, type RunConfig, type SampleRecord } from '../../src/core/run/types.ts';
import { runCli } from '../helpers/cli.ts';
import { fileDataset, memoryAppPorts, memorySeriesPorts, type MemoryApp } from '../helpers/memory-app-ports.ts';
import { DB_ROOT, MINIDEV_GOLD, MINIDEV_QUESTIONS, questions, verlLines } from '../helpers/series-dumps.ts';
import { sharedData, spiderFiles } from '../helpers/shared-data.ts';

// The CLI's defaults (EX and Soft-F1, the official timeout), as the app's form starts.
const config: RunConfig = { ...DEFAULT_RUN_CONFIG, metrics: ['ex', 'soft-f1'], vesIterations: 0 };

/** One verl validation row (docs/formats.md): the question's text in the prompt, the SQL in a fence. */
const verlRow = (question: string, sql: string, step: number) =>
  JSON.stringify({
    input: `<|im_start|>user\nQuestion: ${question}<|im_end|>\n<|im_start|>assistant\n`,
    output: `\`\`\`sql\n${sql}\n\`\`\``,
    score: 0,
    step,
  });

/** What differs between two evaluations of the same sample by design (time, gold reuse). */
const volatile = ({ elapsedMs: _e, goldReused: _g, ...rest }: SampleRecord) => rest;
type Compared = ReturnType<typeof volatile>;

/**
 * The step file `dir/<step>.jsonl` as one series in the app (memory ports, Node's SQL workers) and
 * in the CLI (`series --series-out`): the app's stored samples and the CLI's step run, both in
 * (index, sample) order, and the CLI's run header.
 */
async function bothHosts(
  dir: string,
  files: { questions: string; gold: string; dbRoot: string },
  kind: 'bird' | 'spider',
  step: number,
): Promise<{ app: Compared[]; cli: Compared[]; cliConfig: RunConfig; appConfig: RunConfig }> {
  const dataset = { ...(await fileDataset(files)), kind };
  const memory: MemoryApp = memoryAppPorts(dataset, files.dbRoot);
  const service = createSeriesService(memorySeriesPorts(memory));
  const name = `${step}.jsonl`;
  const file = path.join(dir, name);
  const series = await service.importDumps({
    name: 'one step',
    datasetId: dataset.id,
    config,
    stepPattern: null,
    format: null,
    files: [{ name, file: new Blob([readFileSync(file)]), lastModified: statSync(file).mtimeMs }],
  });
  expect(series.steps.map((s) => s.step)).toEqual([step]);
  const runId = series.steps[0]!.runId;
  const out = path.join(mkdtempSync(path.join(tmpdir(), 'wb-one-path-out-')), 'series.json');
  const cli = await runCli([
    'series',
    '--completions',
    file,
    '--gold',
    files.gold,
    '--dataset',
    files.questions,
    '--db-root',
    files.dbRoot,
    '--no-cache',
    '--series-out',
    out,
  ]);
  expect(cli.code, cli.stderr).toBe(0);
  const cliStep = parseSeriesFile(readFileSync(out, 'utf8'), out).steps[0]!;
  expect(cliStep.step).toBe(step);
  const appRun = await memory.ports.runs.get(runId);
  return {
    app: memory.samples(runId).map(volatile),
    cli: [...cliStep.run.samples].sort((a, b) => a.index - b.index || a.sample - b.sample).map(volatile),
    cliConfig: cliStep.run.run.config,
    appConfig: appRun.config,
  };
}

describe("a series step is scored by the app's one path in both hosts", () => {
  it('the gold checks read the question texts in the CLI too: question 1322 asks "how many" and its gold lists 9 rows, flagged in both', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'wb-one-path-bird-'));
    // The second mini-dev predictions file as its verl step (200), its first five student_club
    // questions; 1322 among them ("How many ... ?", whose gold returns one row per event: the
    // gold check `count-as-list`, which needs the question's text).
    const text = questions.find((q) => q.question_id === 1322)!.question;
    const chosen = verlLines(1, ['student_club']).slice(0, 5);
    expect(chosen.filter((l) => (JSON.parse(l) as { input: string }).input.includes(text))).toHaveLength(1);
    writeFileSync(path.join(dir, '200.jsonl'), chosen.join('\n') + '\n');

    const got = await bothHosts(
      dir,
      { questions: MINIDEV_QUESTIONS, gold: MINIDEV_GOLD, dbRoot: DB_ROOT },
      'bird',
      200,
    );
    expect(got.app).toHaveLength(5);
    expect(got.cli).toEqual(got.app);
    const flagged = (samples: Compared[]) =>
      samples.filter((s) => s.goldIssues?.some((g) => g.kind === 'count-as-list')).map((s) => s.questionId);
    expect(flagged(got.cli)).toEqual([1322]);
    expect(flagged(got.app)).toEqual([1322]);
  }, 300_000);

  it("a Spider dataset's step is scored by Spider's rule in the CLI too: columns in another order are right", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'wb-one-path-spider-'));
    const files = spiderFiles();
    const spider = JSON.parse(readFileSync(files.dataset!, 'utf8')) as {
      db_id: string;
      question: string;
      query: string;
    }[];
    // concert_singer's first questions: #2 and #3 answered with the gold's columns in another
    // order (right by Spider's exec match, wrong by BIRD's set equality), the others with the gold.
    const swapped = 'SELECT country , name , age FROM singer ORDER BY age DESC';
    expect(spider[2]!.query).toBe('SELECT name ,  country ,  age FROM singer ORDER BY age DESC');
    const rows = spider.slice(0, 6).map((q, i) => verlRow(q.question, i === 2 || i === 3 ? swapped : q.query, 100));
    writeFileSync(path.join(dir, '100.jsonl'), rows.join('\n') + '\n');

    const got = await bothHosts(
      dir,
      { questions: files.dataset!, gold: files.gold, dbRoot: sharedData('spider') },
      'spider',
      100,
    );
    expect(got.app).toHaveLength(6);
    expect(got.cli).toEqual(got.app);
    expect(got.cli.map((s) => s.ex)).toEqual([1, 1, 1, 1, 1, 1]);
    expect(got.cliConfig.exRule).toBe('spider');
    expect(got.appConfig.exRule).toBe('spider');
  }, 300_000);
});
