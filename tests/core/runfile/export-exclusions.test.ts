/**
 * Excluded questions marked in the run file and its samples Parquet table (docs/formats.md): an
 * export with 2 excluded questions carries each one's exclusion (reason, author, date) on exactly
 * their samples, the Parquet table (read by DuckDB, an independent reader) in its `excluded_*`
 * columns; the readers (the run file's, the CLI's samples-table reader that `stats`, `compare`
 * and `report` use) read such a file as before, the marks ignored without error.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parquetBlob } from '../../../src/adapters/parquet/write-parquet.ts';
import { createNodeHost } from '../../../src/adapters/node/node-host.ts';
import type { Exclusion } from '../../../src/core/eval/exclusions.ts';
import { runFileJson, runFileJsonParts } from '../../../src/core/runfile/export.ts';
import { parseRunFile } from '../../../src/core/runfile/run-file.ts';
import { runTableMetadata, sampleRows, SAMPLES_TABLE } from '../../../src/core/views/tables.ts';
import { readRunInput } from '../../../src/cli/commands/tabular-input.ts';
import { runParquetBlob } from '../../../src/ui/context/parquet-export.ts';
import { duck } from '../../helpers/duck.ts';
import { syntheticRunFile, syntheticSamples } from '../../robustness/synthetic-run.ts';

const file = syntheticRunFile(syntheticSamples({ questions: 12, samples: 3, seed: 7 }), 'marked');
const ids = [...new Set(file.samples.map((s) => s.questionId))];
/** Two questions of the run, and one of another dataset (excludes nothing here). */
const exclusions: Exclusion[] = [
  { questionId: ids[2]!, reason: 'gold is ambiguous', author: 'ana', date: '2026-12-01' },
  { questionId: ids[9]!, reason: 'unanswerable "as asked"', author: 'bo', date: '2026-12-02T10:00:00Z' },
  { questionId: 987654, reason: 'not in this run', author: 'cy', date: '2026-12-03' },
];
const markOf = (questionId: number) => {
  const e = exclusions.find((x) => x.questionId === questionId);
  return e ? { reason: e.reason, author: e.author, date: e.date } : undefined;
};
const dir = mkdtempSync(path.join(tmpdir(), 'wb-export-exclusions-'));

describe('excluded questions marked in the run file and the samples Parquet table', () => {
  it('the run file: exactly the samples of the 2 excluded questions carry their exclusion; the reader reads it as before', () => {
    // Parts of 5 samples: the marks cross part boundaries.
    const text = [...runFileJsonParts(file, 5, exclusions)].join('');
    const json = JSON.parse(text) as { samples: Array<{ questionId: number; excluded?: unknown }> };
    const marked = json.samples.filter((s) => s.excluded !== undefined);
    expect(new Set(marked.map((s) => s.questionId))).toEqual(new Set([ids[2], ids[9]]));
    expect(marked).toHaveLength(file.samples.filter((s) => s.questionId === ids[2] || s.questionId === ids[9]).length);
    for (const s of json.samples) expect(s.excluded).toEqual(markOf(s.questionId));
    // Without exclusions: the text is runFileJson's, byte for byte (no field added).
    expect([...runFileJsonParts(file, 5)].join('')).toBe(runFileJson(file));
    expect([...runFileJsonParts(file, 5, [])].join('')).toBe(runFileJson(file));
    // The run file's reader (the app's import, the CLI's --run) reads the marked file without error.
    expect(parseRunFile(text, 'marked.run.json')).toEqual(parseRunFile(runFileJson(file), 'plain.run.json'));
  });

  it('the Parquet table: the excluded_* columns hold the exclusion on exactly those samples (DuckDB reads it); the CLI reads the run back', async () => {
    const blob = await runParquetBlob(file, parquetBlob, exclusions);
    const at = path.join(dir, 'marked.samples.parquet');
    writeFileSync(at, new Uint8Array(await blob.arrayBuffer()));
    const rows = await duck<{
      question_id: string;
      excluded_reason: string | null;
      excluded_author: string | null;
      excluded_date: string | null;
    }>(
      `SELECT question_id, excluded_reason, excluded_author, excluded_date FROM read_parquet('${at}') ORDER BY index, sample`,
    );
    expect(rows).toHaveLength(file.samples.length);
    for (const r of rows) {
      const m = markOf(Number(r.question_id));
      expect({ reason: r.excluded_reason, author: r.excluded_author, date: r.excluded_date }).toEqual(
        m ?? { reason: null, author: null, date: null },
      );
    }
    expect(new Set(rows.filter((r) => r.excluded_reason !== null).map((r) => Number(r.question_id)))).toEqual(
      new Set([ids[2], ids[9]]),
    );
    // Without exclusions the columns are there, all null.
    const plainAt = path.join(dir, 'plain.samples.parquet');
    writeFileSync(
      plainAt,
      new Uint8Array(
        await (
          await parquetBlob(
            SAMPLES_TABLE,
            sampleRows(file.samples, undefined),
            runTableMetadata(SAMPLES_TABLE, file.run),
          )
        ).arrayBuffer(),
      ),
    );
    expect(
      await duck(`SELECT count(*)::INT AS n FROM read_parquet('${plainAt}') WHERE excluded_reason IS NOT NULL`),
    ).toEqual([{ n: 0 }]);
    // The CLI's reader of a run's samples table (stats, compare, report --run FILE.parquet) reads it as the run.
    const back = await readRunInput(createNodeHost(), '--run', at);
    expect(back.samples).toEqual(parseRunFile(runFileJson(file), 'plain.run.json').samples);
  });
});
