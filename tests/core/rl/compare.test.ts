import { describe, expect, it } from 'vitest';
import { comparedFields, compareRuns, type ComparedRun } from '../../../src/core/rl/compare.ts';
import type { RunFile } from '../../../src/core/run/types.ts';
import { compareJson, compareTable } from '../../../src/core/rl/compare-report.ts';
import { explain } from '../../../src/core/rl/explanations.ts';
import { mcnemarExactP } from '../../../src/core/rl/paired-tests.ts';
import { mulberry32 } from '../../../src/core/util/rng.ts';
import { question, runFile, sample, verdicts } from './fixtures.ts';

const opts = { resamples: 2000, makeRng: () => mulberry32(0) };

describe('comparison of two runs', () => {
  const a = verdicts([1, 1, 0, 0, 1, 0, 1, 0]);
  const b = verdicts([1, 0, 1, 1, 1, 0, 1, 1]);

  it('sorts questions into fixed / broken / both right / both wrong and takes B - A in points', () => {
    const c = compareRuns(runFile(a), runFile(b), opts);
    expect(c.overall.counts).toEqual({ fixed: 3, broken: 1, both_right: 3, both_wrong: 1 });
    expect(c.overall.exA).toBe(50);
    expect(c.overall.exB).toBe(75);
    expect(c.overall.exDelta).toBe(25);
    expect(c.overall.mcnemarP).toBe(mcnemarExactP(3, 1));
    expect(c.overall.ci95[0]).toBeLessThanOrEqual(25);
    expect(c.overall.ci95[1]).toBeGreaterThanOrEqual(25);
    expect(c.questions.map((q) => q.category)).toEqual([
      'both_right',
      'broken',
      'fixed',
      'fixed',
      'both_right',
      'both_wrong',
      'both_right',
      'fixed',
    ]);
    expect(c.warnings).toEqual([]);
  });

  it('is reproducible for a seed and symmetric when the runs are swapped', () => {
    const ab = compareRuns(runFile(a), runFile(b), opts);
    const ba = compareRuns(runFile(b), runFile(a), opts);
    expect(compareRuns(runFile(a), runFile(b), opts).overall.ci95).toEqual(ab.overall.ci95);
    expect(ba.overall.counts).toEqual({ fixed: 1, broken: 3, both_right: 3, both_wrong: 1 });
    expect(ba.overall.exDelta).toBe(-25);
    expect(ba.overall.mcnemarP).toBe(ab.overall.mcnemarP);
  });

  it('breaks down by difficulty and by database', () => {
    const a2 = [
      ...verdicts([1, 0], 'simple', 'x'),
      ...verdicts([0, 0], 'challenging', 'y').map((s) => ({ ...s, index: s.index + 2, questionId: s.index + 2 })),
    ];
    const b2 = [
      ...verdicts([1, 1], 'simple', 'x'),
      ...verdicts([1, 0], 'challenging', 'y').map((s) => ({ ...s, index: s.index + 2, questionId: s.index + 2 })),
    ];
    const c = compareRuns(runFile(a2), runFile(b2), opts);
    expect(Object.keys(c.byDifficulty)).toEqual(['simple', 'challenging']);
    expect(c.byDifficulty.simple!.counts.fixed).toBe(1);
    expect(c.byDb.y!.counts).toEqual({ fixed: 1, broken: 0, both_right: 0, both_wrong: 1 });
  });

  it('scores a question by its mean EX over samples and calls it right above 0.5', () => {
    const spec = (s: string) => [...s].map((ch) => (ch === '.' ? null : ch));
    const a3 = [...question(0, spec('RRAA')), ...question(1, spec('RRRA'))];
    const b3 = [...question(0, spec('RRRA')), ...question(1, spec('RAAA'))];
    const c = compareRuns(runFile(a3), runFile(b3), opts);
    expect(c.questions.map((q) => [q.scoreA, q.scoreB, q.category])).toEqual([
      [0.5, 0.75, 'fixed'],
      [0.75, 0.25, 'broken'],
    ]);
    expect(c.overall.exDelta).toBeCloseTo(-12.5, 12);
    expect(c.warnings.join('\n')).toMatch(/samples per question: 4 in A, 4 in B; a question's score is its mean EX/);
  });

  it('compares the common questions only and warns about every difference between the runs', () => {
    const bOnly = [...verdicts([1, 0, 1]), sample({ index: 7, sample: 0, status: 'missing-db' })];
    const aRun = runFile(verdicts([1, 1]), { executor: 'sql.js 1.16.0' });
    const bRun = runFile(
      bOnly.map((s) => ({
        ...s,
        extraction: { rule: 'fenced-sql-last' as const, thinkStripped: false },
        completion: 'x',
      })),
      {
        dataset: { ...aRun.run.dataset, databases: { db: 'd2' } },
        source: { kind: 'generation', engine: 'webllm', model: 'm', template: 't' },
        config: { ...aRun.run.config, fence: 'first' },
      },
    );
    const c = compareRuns(aRun, bRun, opts);
    expect(c.overall.questions).toBe(2);
    expect(c.onlyInB).toBe(1);
    const w = c.warnings.join('\n');
    expect(w).toMatch(/database db differs: sha256 d1… in A, d2… in B/);
    expect(w).toMatch(/run A is a replay run and run B a generation run/);
    expect(w).toMatch(/the extraction settings differ: the last fenced block in A, the first in B/);
    expect(w).toMatch(/different extraction rules: A sql-field 2; B fenced-sql-last 4/);
    expect(w).toMatch(/the SQL engines differ/);
    expect(w).toMatch(/the question sets differ: 0 question\(s\) only in A, 1 only in B/);
    expect(w).toMatch(/database is missing: 0 in A, 1 in B/);
  });

  it("gives the same comparison from the compared fields alone (what the app's worker keeps of each sample), warnings included", () => {
    const lean = (f: RunFile): ComparedRun => ({ run: f.run, samples: f.samples.map(comparedFields) });
    const aRun = runFile([...verdicts([1, 1, 0, 1]), sample({ index: 4, sample: 0, status: 'missing-db' })], {
      executor: 'sql.js 1.16.0',
    });
    const bRun = runFile(
      verdicts([1, 0, 1, 1, 0]).map((s) => ({
        ...s,
        extraction: { rule: 'fenced-sql-last' as const, thinkStripped: false },
        completion: '```sql\nSELECT 1\n```',
      })),
      {
        config: { ...aRun.run.config, fence: 'first' },
      },
    );
    for (const [x, y] of [
      [aRun, bRun],
      [bRun, aRun],
      [aRun, aRun],
    ] as const) {
      const full = compareRuns(x, y, opts);
      expect(compareRuns(lean(x), lean(y), opts)).toEqual(full);
    }
    // The warnings that read the samples' extraction and completions are among them.
    expect(compareRuns(lean(aRun), lean(bRun), opts).warnings.join('\n')).toMatch(
      /extraction settings differ[^]*different extraction rules[^]*database is missing: 1 in A, 0 in B/,
    );
    expect(Object.keys(comparedFields(bRun.samples[0]!)).sort()).toEqual([
      'completion',
      'dbId',
      'difficulty',
      'ex',
      'extraction',
      'index',
      'questionId',
      'sample',
      'status',
    ]);
  });

  it('warns when templates differ or a run has no database checksums', () => {
    const gen = (template: string) =>
      runFile(verdicts([1]), { source: { kind: 'generation', engine: 'e', model: 'm', template } });
    expect(compareRuns(gen('a'), gen('b'), opts).warnings).toEqual(['the prompt templates differ: "a" in A, "b" in B']);
    const noSums = runFile(verdicts([1]));
    noSums.run.dataset.databases = {};
    expect(compareRuns(noSums, runFile(verdicts([1])), opts).warnings[0]).toMatch(
      /run A \(run one\) records no database checksums/,
    );
  });

  it('writes the contract keys of compare --out and a readable table', () => {
    const c = compareRuns(runFile(a), runFile(b), opts);
    const meta = { runA: 'A', runB: 'B', seed: 0, resamples: 2000 };
    const json = compareJson(c, meta);
    expect(json).toMatchObject({
      questions: 8,
      counts: { fixed: 3, broken: 1, both_right: 3, both_wrong: 1 },
      ex_delta: 25,
    });
    expect(json.ci95).toHaveLength(2);
    expect(json.mcnemar_p).toBe(0.625);
    expect(json.explanations.fixed).toBe('3 questions fixed: wrong in A, right in B.');
    const table = compareTable(c, meta);
    expect(table).toMatch(/^total +8 +3 +1 +3 +1 +50\.00 +75\.00 +\+25\.00/m);
  });
});

describe('explanations count one question as one', () => {
  it('says "1 question broken", not "1 questions broken"', () => {
    expect(explain('broken', { count: 1 })).toBe(
      '1 question broken: right in A, wrong in B; regressions to read before trusting the gain.',
    );
    expect(explain('fixed', { count: 2 })).toBe('2 questions fixed: wrong in A, right in B.');
  });
});
