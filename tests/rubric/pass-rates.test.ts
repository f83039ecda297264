import { describe, expect, it } from 'vitest';
import type { RubricItem } from '../../src/core/rubric/model.ts';
import {
  criterionPassRates,
  passRatesCsv,
  passRatesJsonl,
  type PassRateSample,
} from '../../src/core/rubric/pass-rates.ts';

const items: PassRateSample['items'] = [
  { id: 'a', title: 'Always met', category: 'essential', weight: 5 },
  { id: 'b', title: 'Mixed, "quoted", title', category: 'important', weight: 4 },
  { id: 'f', title: 'Fault pitfall', category: 'pitfall', weight: -2 },
  { id: 'v', title: 'Avoidance pitfall', category: 'pitfall', weight: 0.9 },
  { id: 'n', title: 'Never met', category: 'optional', weight: 1 },
] satisfies Pick<RubricItem, 'id' | 'title' | 'category' | 'weight'>[];

type V = PassRateSample['criteria'][number];
const ok = (id: string, met: boolean): V => ({ id, met, status: 'ok' });

function sample(group: string, verdicts: V[]): PassRateSample {
  return { group, items, criteria: verdicts };
}

describe('per-criterion pass rates', () => {
  const samples = [
    sample('q1', [ok('a', true), ok('b', true), ok('f', true), ok('v', true), ok('n', false)]),
    sample('q1', [ok('a', true), ok('b', false), ok('f', false), ok('v', true), ok('n', false)]),
    sample('q1', [
      ok('a', true),
      { id: 'b', met: null, status: 'unparseable' },
      ok('f', false),
      { id: 'v', met: null, status: 'not-applicable' },
      ok('n', false),
    ]),
    sample('q2', [ok('a', false), ok('b', true), ok('f', true), ok('v', false)]),
  ];
  const rates = criterionPassRates(samples);
  const get = (group: string, id: string) => rates.find((r) => r.group === group && r.criterion === id)!;

  it('counts passes per (group, criterion), pitfalls by their phrasing', () => {
    expect(rates.map((r) => `${r.group}:${r.criterion}`)).toEqual([
      'q1:a',
      'q1:b',
      'q1:f',
      'q1:v',
      'q1:n',
      'q2:a',
      'q2:b',
      'q2:f',
      'q2:v',
      'q2:n',
    ]);
    expect(get('q1', 'a')).toMatchObject({ passed: 3, failed: 0, n: 3, rate: 1, notDiscriminating: 'all-pass' });
    expect(get('q1', 'b')).toMatchObject({
      passed: 1,
      failed: 1,
      unresolved: 1,
      n: 2,
      rate: 0.5,
      notDiscriminating: null,
    });
    // Fault-phrased: met = triggered = not passed.
    expect(get('q1', 'f')).toMatchObject({ passed: 2, failed: 1, n: 3, rate: 2 / 3, notDiscriminating: null });
    // Avoidance-phrased: met = avoided = passed; not-applicable is counted apart.
    expect(get('q1', 'v')).toMatchObject({
      passed: 2,
      failed: 0,
      notApplicable: 1,
      n: 2,
      rate: 1,
      notDiscriminating: 'all-pass',
    });
    expect(get('q1', 'n')).toMatchObject({ passed: 0, failed: 3, n: 3, rate: 0, notDiscriminating: 'all-fail' });
  });

  it('flags nothing on one sample, and a criterion with no verdict has no rate', () => {
    expect(get('q2', 'a')).toMatchObject({ passed: 0, failed: 1, n: 1, rate: 0, notDiscriminating: null });
    expect(get('q2', 'n')).toMatchObject({
      passed: 0,
      failed: 0,
      unresolved: 1,
      n: 0,
      rate: null,
      notDiscriminating: null,
    });
  });

  it('each rate equals a direct count over the verdicts', () => {
    for (const r of rates) {
      const mine = samples.filter((s) => s.group === r.group);
      const item = items.find((i) => i.id === r.criterion)!;
      const resolved = mine
        .map((s) => s.criteria.find((v) => v.id === r.criterion))
        .filter((v): v is V => v?.status === 'ok');
      const pass = resolved.filter((v) => (item.weight < 0 ? v.met === false : v.met === true)).length;
      expect(r.n).toBe(resolved.length);
      expect(r.rate).toBe(resolved.length ? pass / resolved.length : null);
    }
  });

  it('exports as CSV and JSON Lines with the same numbers', () => {
    const csv = passRatesCsv(rates).trimEnd().split('\n');
    expect(csv[0]).toBe(
      'group,criterion,title,category,passed,failed,unresolved,not_applicable,n,pass_rate,not_discriminating',
    );
    expect(csv[1]).toBe('q1,a,Always met,essential,3,0,0,0,3,1,all-pass');
    expect(csv[2]).toBe('q1,b,"Mixed, ""quoted"", title",important,1,1,1,0,2,0.5,');
    expect(csv).toHaveLength(rates.length + 1);
    const lines = passRatesJsonl(rates)
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines[9]).toEqual({
      group: 'q2',
      criterion: 'n',
      title: 'Never met',
      category: 'optional',
      passed: 0,
      failed: 0,
      unresolved: 1,
      not_applicable: 0,
      n: 0,
      pass_rate: null,
      not_discriminating: null,
    });
    expect(lines.map((l) => l.pass_rate)).toEqual(rates.map((r) => r.rate));
  });
});
