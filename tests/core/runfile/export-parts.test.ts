/**
 * Streamed run exports (core/runfile/export.ts): the parts of the run file JSON, the CSV and the
 * samples JSONL join to exactly the text the one-string functions write, so a large run can be
 * saved from parts without building one string.
 */
import { describe, expect, it } from 'vitest';
import {
  csvParts,
  runFileJson,
  runFileJsonParts,
  samplesJsonlParts,
  toCsv,
  toRunFile,
} from '../../../src/core/runfile/export.ts';
import { parseRunFile } from '../../../src/core/runfile/run-file.ts';
import { syntheticRunFile, syntheticSamples } from '../../robustness/synthetic-run.ts';

const samples = syntheticSamples({ questions: 37, samples: 5, seed: 9 }).map((s, i) =>
  i % 11 === 0 ? { ...s, sql: `SELECT "a\nb", 'x,"y"' -- ${i}\r\n`, error: 'line one\nline two' } : s,
);
const file = toRunFile(syntheticRunFile(samples).run, [...samples].reverse(), [
  { index: 0, questionId: 0, dbId: 'db0', question: 'q?\n', evidence: '' },
]);

describe('streamed run exports', () => {
  it.each([1, 7, 500])(
    'the run file JSON in parts of %i samples is runFileJson byte for byte and reads back',
    (perPart) => {
      const parts = [...runFileJsonParts(file, perPart)];
      expect(parts.length).toBe(2 + Math.ceil(file.samples.length / perPart));
      expect(parts.join('')).toBe(runFileJson(file));
      expect(parseRunFile(parts.join(''), 'parts.run.json').samples).toEqual(file.samples);
    },
  );

  it('a run without samples is one part, as runFileJson writes it', () => {
    const empty = { ...file, samples: [] };
    expect([...runFileJsonParts(empty)]).toEqual([runFileJson(empty)]);
  });

  it('the CSV in parts is toCsv, header first', () => {
    const parts = [...csvParts(samples, 10)];
    expect(parts[0]).toMatch(/^index,question_id,/);
    expect(parts.length).toBe(1 + Math.ceil(samples.length / 10));
    expect(parts.join('')).toBe(toCsv(samples));
  });

  it('the samples JSONL has one sample per line in (index, sample) order', () => {
    const lines = [...samplesJsonlParts([...samples].reverse(), 13)].join('').split('\n');
    expect(lines.pop()).toBe('');
    expect(lines.map((l) => JSON.parse(l))).toEqual(file.samples);
  });
});
