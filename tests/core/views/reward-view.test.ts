import { describe, expect, it } from 'vitest';
import { ItemIndex, DEFAULT_QUERY, matchesOutcome } from '../../../src/core/views/item-query.ts';
import { rewardFigures } from '../../../src/core/views/reward-view.ts';
import type { SampleRecord } from '../../../src/core/run/types.ts';
import { runFileJson, toRunFile } from '../../../src/core/runfile/export.ts';
import { parseRunFile } from '../../../src/core/runfile/run-file.ts';
import { runHeader, sampleRecord, unstoredDataset } from '../../helpers/run-records.ts';

function sample(index: number, patch: Partial<SampleRecord> & Record<string, unknown> = {}): SampleRecord {
  return sampleRecord({
    index,
    sample: 0,
    ex: 1,
    softF1: null,
    reward: 1,
    extraction: { rule: 'sql-line', thinkStripped: false },
    ...patch,
  });
}

const samples = [
  sample(0, { ts: 1 }),
  sample(1, { ts: 0 }), // EX-only pass
  sample(2, { ts: 0, ex: 0, goldOrderDependent: true, goldIssues: [{ kind: 'order-dependent', reason: 'r' }] }),
  sample(3, {
    ts: 1,
    passesByRowOrder: true,
    versionFeatures: [{ feature: 'concat()', since: '3.44.0', where: 'pred' }],
  }),
  sample(4, {
    ts: null,
    ex: 0,
    goldRowCount: 0,
    goldIssues: [
      { kind: 'no-rows', reason: 'r' },
      { kind: 'date-dependent', reason: 'r' },
    ],
  }),
  sample(5, { ex: 0, mutatedDb: true, goldIssues: [{ kind: 'list-as-count', reason: 'r' }] }),
  sample(6, { ex: 0, status: 'missing-db', predRowCount: null, goldRowCount: null }),
];

describe('reward view figures and their explorer filters', () => {
  it("every line's samples are the samples its outcome filter lists", () => {
    const fig = rewardFigures(samples);
    const index = new ItemIndex(samples.map((s) => ({ sample: s, question: null })));
    for (const line of fig.lines)
      expect({ o: line.outcome, n: index.query({ ...DEFAULT_QUERY, outcome: line.outcome }).length }).toEqual({
        o: line.outcome,
        n: line.samples,
      });
    const byOutcome = Object.fromEntries(fig.lines.map((l) => [l.outcome, l.count]));
    expect(byOutcome).toEqual({
      'ex-only': 1,
      'order-dependent-gold': 1,
      'passes-by-row-order': 1,
      'version-sensitive': 1,
      'gold-issue': 3,
      'gold-no-rows': 1,
      'gold-count-mismatch': 1,
      'gold-date-dependent': 1,
      modified: 1,
    });
  });
  it('one gold seen in 6 samples is 1 gold problem (a question), listed as its 6 samples; sample lines count samples', () => {
    const six = Array.from({ length: 6 }, (_, k) =>
      sample(9, { sample: k, ex: 0, mutatedDb: k < 2, goldIssues: [{ kind: 'count-as-list', reason: 'r' }] }),
    );
    const fig = rewardFigures(six);
    const line = (o: string) => fig.lines.find((l) => l.outcome === o)!;
    expect(line('gold-count-mismatch')).toMatchObject({
      count: 1,
      unit: 'question',
      samples: 6,
      label: 'gold: count vs list',
    });
    expect(line('gold-issue')).toMatchObject({ count: 1, unit: 'question', samples: 6, label: 'gold problem' });
    expect(line('modified')).toMatchObject({ count: 2, unit: 'sample', samples: 2 });
  });
  it('EX over scored samples; TS over samples with a TS verdict; TS and row-order lines only when present', () => {
    const fig = rewardFigures(samples);
    expect(fig.scored).toBe(6);
    expect(fig.ex).toBeCloseTo((3 / 6) * 100, 10);
    expect(fig.ts).toBeCloseTo((2 / 4) * 100, 10);
    const plain = rewardFigures([sample(0), sample(1, { ex: 0 })]);
    expect(plain.ts).toBeNull();
    expect(plain.lines.map((l) => l.outcome)).not.toContain('ex-only');
    expect(plain.lines.map((l) => l.outcome)).not.toContain('order-dependent-gold');
  });
  it('an order-dependent gold is matched from either the row-order field or a gold issue', () => {
    expect(
      matchesOutcome(sample(0, { goldIssues: [{ kind: 'order-dependent', reason: 'r' }] }), 'order-dependent-gold'),
    ).toBe(true);
    expect(matchesOutcome(sample(0, { goldOrderDependent: true }), 'order-dependent-gold')).toBe(true);
    expect(matchesOutcome(sample(0), 'order-dependent-gold')).toBe(false);
  });
});

describe('run files keep the findings', () => {
  it("versionFeatures, goldIssues and the run's sqliteVersion survive export and import; a bad one names its path", () => {
    const header = runHeader({
      id: 'r',
      name: 'r',
      dataset: unstoredDataset({ id: 'd', name: 'd' }),
      subset: { description: 'all', indices: [3, 4] },
      sqliteVersion: '3.54.1',
    });
    const file = parseRunFile(runFileJson(toRunFile(header, [samples[3]!, samples[4]!])), 'r.json');
    expect(file.run.sqliteVersion).toBe('3.54.1');
    expect(file.samples[0]!.versionFeatures).toEqual(samples[3]!.versionFeatures);
    expect(file.samples[1]!.goldIssues).toEqual(samples[4]!.goldIssues);
    const broken = runFileJson(
      toRunFile(header, [
        { ...samples[3]!, versionFeatures: [{ feature: 'concat()', since: '3.44.0', where: 'both' as never }] },
      ]),
    );
    expect(() => parseRunFile(broken, 'r.json')).toThrow(/versionFeatures\[0\]/);
  });
});
