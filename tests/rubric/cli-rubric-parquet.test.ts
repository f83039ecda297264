/** `rubric --dataset train.parquet`: a RaR split in the published Parquet schema is the dataset the CLI pairs completions with. */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseRarJsonl } from '../../src/core/rubric/rar-dataset.ts';
import { ROOT, rubricArgs, runCli, tempFile } from '../helpers/cli.ts';
import { RAR_SCHEMA, writeParquet } from '../helpers/parquet-files.ts';

describe('rubric reads a RaR Parquet split', () => {
  it('is the dataset completions pair with: its row count comes from the Parquet file, an index beyond it is named', async () => {
    const rows = readFileSync(path.join(ROOT, 'public/rubrics/example-rar.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map(
        (l) =>
          JSON.parse(l) as {
            question: string;
            reference_answer: string;
            rubric: Array<{ title: string; description: string; weight: number }>;
          },
      );
    const file = writeParquet(
      tempFile('train-00000-of-00001.parquet'),
      RAR_SCHEMA,
      [
        { name: 'question', data: rows.map((r) => r.question) },
        { name: 'reference_answer', data: rows.map((r) => r.reference_answer) },
        { name: 'question_source', data: rows.map(() => 'example') },
        {
          name: 'rubric',
          data: rows.map((r) =>
            r.rubric.map((c) => ({ description: c.description, title: c.title, weight: BigInt(c.weight) })),
          ),
        },
        { name: 'rubric_list', data: rows.map((r) => r.rubric.map((c) => c.description)) },
        { name: 'rubric_count', data: rows.map((r) => BigInt(r.rubric.length)) },
      ],
      2,
    );
    const parsed = parseRarJsonl(readFileSync(path.join(ROOT, 'public/rubrics/example-rar.jsonl'), 'utf8'), 'x.jsonl');
    const comps = tempFile('c.jsonl');
    writeFileSync(comps, '{"completion": "a"}\n{"completion": "b"}\n');
    const run = await runCli(rubricArgs({ dataset: file, completions: comps }));
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`c.jsonl: 2 completions without "id" or "index" for ${parsed.length} dataset rows`);
    writeFileSync(comps, `{"index": 0, "completion": "a"}\n{"index": ${parsed.length}, "completion": "b"}\n`);
    const beyond = await runCli(rubricArgs({ dataset: file, completions: comps }));
    expect(beyond.code).toBe(2);
    expect(beyond.stderr).toMatch(new RegExp(`c\\.jsonl:2: .*${parsed.length}`));
  });
});
