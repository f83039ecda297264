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

describe("a training run's step: the trainer's score of each sample in the CSV and JSONL exports", () => {
  // No text with a line break here: the CSV's lines are its rows. Scores in (index, sample) order, as a step stores them; every 3rd has none.
  const samples = syntheticSamples({ questions: 37, samples: 5, seed: 9 });
  const sorted = [...samples].sort((a, b) => a.index - b.index || a.sample - b.sample);
  const scores = sorted.map((_, i) => (i % 3 === 2 ? null : (i % 4) / 4));

  it('the CSV gains a last column trainer_score, row by row, in parts of any size', () => {
    const plain = toCsv(samples).split('\r\n');
    for (const perPart of [1, 7, 500]) {
      const lines = [...csvParts([...samples].reverse(), perPart, scores)].join('').split('\r\n');
      expect(lines[0]).toBe(`${plain[0]},trainer_score`);
      expect(lines.slice(1, -1)).toEqual(plain.slice(1, -1).map((l, i) => `${l},${scores[i] ?? ''}`));
    }
  });

  it('each JSONL line gains trainerScore (null where the dump gave none); the rest is the line without it', () => {
    const plain = [...samplesJsonlParts(samples)].join('').trimEnd().split('\n');
    const lines = [...samplesJsonlParts(samples, 7, scores)].join('').trimEnd().split('\n');
    expect(lines.map((l) => JSON.parse(l).trainerScore)).toEqual(scores);
    expect(lines.map((l) => ({ ...JSON.parse(l), trainerScore: undefined }))).toEqual(
      plain.map((l) => ({ ...JSON.parse(l), trainerScore: undefined })),
    );
  });

  it('scores that are not one per sample are left out (never shifted onto other samples)', () => {
    expect([...csvParts(samples, 1000, scores.slice(1))].join('')).toBe(toCsv(samples));
  });
});

describe("a training run's step: the trainer's reward columns of each sample in the CSV and JSONL exports", () => {
  const samples = syntheticSamples({ questions: 37, samples: 5, seed: 9 });
  const sorted = [...samples].sort((a, b) => a.index - b.index || a.sample - b.sample);
  const scores = sorted.map((_, i) => (i % 3 === 2 ? null : (i % 4) / 4));
  // TRL-like columns in (index, sample) order: a column with no value (NaN in the dump) is null; one sample has none at all;
  // `advantage` first met on the second sample, and a name that needs quoting in a CSV header.
  const rewards: Array<Record<string, number | null> | null> = sorted.map((_, i) =>
    i === 5
      ? null
      : {
          accuracy_reward: i % 2,
          format_reward: i % 7 === 0 ? null : 0.5,
          ...(i === 0 ? {} : { advantage: i / 10 - 1 }),
          ...(i === 3 ? { 'odd,"name"': 2 } : {}),
        },
  );
  const cell = (v: number | null | undefined) => (v === null || v === undefined ? '' : String(v));

  it('the CSV gains one trainer_<name> column per reward after trainer_score, row by row, in parts of any size', () => {
    const plain = toCsv(samples).split('\r\n');
    for (const perPart of [1, 7, 500]) {
      const lines = [...csvParts([...samples].reverse(), perPart, scores, rewards)].join('').split('\r\n');
      expect(lines[0]).toBe(
        `${plain[0]},trainer_score,trainer_accuracy_reward,trainer_format_reward,trainer_advantage,"trainer_odd,""name"""`,
      );
      expect(lines.slice(1, -1)).toEqual(
        plain
          .slice(1, -1)
          .map(
            (l, i) =>
              `${l},${scores[i] ?? ''},${cell(rewards[i]?.accuracy_reward)},${cell(rewards[i]?.format_reward)},` +
              `${cell(rewards[i]?.advantage)},${cell(rewards[i]?.['odd,"name"'])}`,
          ),
      );
    }
  });

  it('a reward named like an existing column keeps its own column (trainer_reward_<name>)', () => {
    const header = [
      ...csvParts(
        samples,
        1000,
        scores,
        sorted.map(() => ({ score: 1 })),
      ),
    ][0]!;
    expect(header.trimEnd().split(',').slice(-2)).toEqual(['trainer_score', 'trainer_reward_score']);
  });

  it('each JSONL line gains trainerRewards (null where the dump gave none); the rest is the line with trainerScore', () => {
    const withScores = [...samplesJsonlParts(samples, 7, scores)].join('').trimEnd().split('\n');
    const lines = [...samplesJsonlParts(samples, 7, scores, rewards)].join('').trimEnd().split('\n');
    expect(lines.map((l) => JSON.parse(l).trainerRewards)).toEqual(rewards);
    expect(lines.map((l) => ({ ...JSON.parse(l), trainerRewards: undefined }))).toEqual(
      withScores.map((l) => ({ ...JSON.parse(l), trainerRewards: undefined })),
    );
  });

  it('reward entries that are not one per sample are left out (never shifted onto other samples)', () => {
    expect([...csvParts(samples, 1000, scores, rewards.slice(1))].join('')).toBe(
      [...csvParts(samples, 1000, scores)].join(''),
    );
    expect([...samplesJsonlParts(samples, 1000, scores, rewards.slice(1))].join('')).toBe(
      [...samplesJsonlParts(samples, 1000, scores)].join(''),
    );
  });
});
