import { describe, expect, it } from 'vitest';
import { itemJson } from '../../../src/core/eval/json-report.ts';
import { compileRewardFormula } from '../../../src/core/eval/reward.ts';
import { toRunFile } from '../../../src/core/runfile/export.ts';
import { parseRunFile } from '../../../src/core/runfile/run-file.ts';
import { toSampleRecords } from '../../../src/core/run/score-run.ts';
import type { EvalItem, ItemResult } from '../../../src/core/types.ts';
import { header, sample } from './fixtures.ts';
import { workbenchErrorOf as errorOf } from '../../helpers/errors.ts';
import { evalItem, ranResult } from '../../helpers/item-results.ts';

const item = (sampleNo: number, rule: EvalItem['extraction']['rule'], extra: Partial<EvalItem> = {}): EvalItem =>
  evalItem({
    index: 3,
    questionId: 7,
    difficulty: 'moderate',
    predSql: `P${sampleNo}`,
    goldSql: 'G',
    extraction: { rule, thinkStripped: false },
    sample: sampleNo,
    ...extra,
  });
const result = (it: EvalItem, ex: 0 | 1, extra: Partial<ItemResult> = {}): ItemResult =>
  ranResult(it, ex, { softF1: ex, elapsedMs: 2, resultKey: `k${ex}`, ...extra });

describe('run files', () => {
  const items = [
    item(0, 'fenced-sql-last', { completion: 'c0', meanLogprob: -0.3 }),
    item(1, 'none', { completion: 'c1' }),
  ];
  const results = [
    result(items[0]!, 1),
    result(items[1]!, 0, { resultKey: undefined, status: 'error', error: 'prediction: x' }),
  ];

  it('makes one sample record per item with format reward and the formula reward', () => {
    const recs = toSampleRecords(items, results, compileRewardFormula('ex + 0.1 * format'));
    expect(
      recs.map((r) => [r.sample, r.sql, r.goldSql, r.format, r.reward, r.completion, r.meanLogprob, r.resultKey]),
    ).toEqual([
      [0, 'P0', 'G', 1, 1.1, 'c0', -0.3, 'k1'],
      [1, 'P1', 'G', 0, 0, 'c1', undefined, undefined],
    ]);
  });

  it('reads back what it writes', () => {
    const file = toRunFile(
      header({ samplesPerQuestion: 2 }),
      toSampleRecords(items, results, compileRewardFormula('ex')),
      [{ index: 3, questionId: 7, dbId: 'db', question: 'Q?', evidence: '' }],
    );
    const back = parseRunFile(JSON.stringify(file), 'run.json');
    expect(back).toEqual(JSON.parse(JSON.stringify(file)));
  });

  const good = () =>
    JSON.parse(JSON.stringify(toRunFile(header(), [sample({ index: 0, sample: 0, ex: 1, reward: 1 })])));

  it.each<[string, (f: any) => void, RegExp]>([
    [
      'a sample whose ex is a string',
      (f) => (f.samples[0].ex = '1'),
      /samples\[0\]\.ex must be one of 0, 1, found the string "1"/,
    ],
    ['a sample without sql', (f) => delete f.samples[0].sql, /samples\[0\]\.sql must be a string, found missing/],
    [
      'an unknown extraction rule',
      (f) => (f.samples[0].extraction.rule = 'magic'),
      /samples\[0\]\.extraction\.rule must be one of/,
    ],
    ['a missing run header', (f) => delete f.run, /^run\.json: run must be an object, found missing/],
    ['a bad status', (f) => (f.run.status = 'ok'), /run\.status must be one of "running", "done"/],
    [
      'a bad database checksum',
      (f) => (f.run.dataset.databases.db = 5),
      /run\.dataset\.databases\.db must be a string, found number 5/,
    ],
    [
      'a bad reward formula',
      (f) => (f.run.config.rewardFormula = 'ex +'),
      /run\.config\.rewardFormula is not a valid formula: reward formula "ex \+"/,
    ],
    ['a negative index', (f) => (f.run.subset.indices = [0, -1]), /run\.subset\.indices\[1\] must be an integer >= 0/],
    [
      'a repeated sample',
      (f) => f.samples.push(f.samples[0]),
      /samples\[1\] repeats sample 0 of question 0 \(index 0\)/,
    ],
    ['a newer version', (f) => (f.version = 2), /version 2 was written by a newer workbench/],
    ['another format', (f) => (f.format = 'other'), /not a run file: expected \{"format": "rlvr-workbench-run"/],
  ])('rejects %s, naming the file and the field', (_t, mutate, message) => {
    const f = good();
    mutate(f);
    const e = errorOf(() => parseRunFile(JSON.stringify(f), 'run.json'));
    expect(e.code).toBe('BAD_FORMAT');
    expect(e.where).toBe('run.json');
    expect(e.message).toMatch(message);
  });

  it('names file, line and column of invalid JSON', () => {
    expect(errorOf(() => parseRunFile('{\n "format": ', 'run.json')).where).toMatch(/^run\.json:2:\d+$/);
  });
});

describe('eval --out reports read as runs', () => {
  const items = [item(0, 'sql-field'), item(1, 'none')];
  const results = [result(items[0]!, 1), result(items[1]!, 0, { resultKey: undefined })];
  const report = (extra: Record<string, unknown> = {}) =>
    JSON.stringify({
      summary: {
        metrics: ['ex', 'soft-f1'],
        count: 1,
        engine: 'sql.js (...)',
        executor: 'sql.js 1.17.0',
        reward_formula: 'ex + 0.5 * format',
        inputs: {
          predictions: '/x/preds.jsonl',
          gold: '/x/gold.sql',
          dataset: '/x/dev.json',
          timeout_s: 5,
          read_only: true,
          ves_iterations: 10,
        },
        ...extra,
      },
      items: results.map(itemJson),
    });

  it('converts items to samples with their sample numbers, result keys and the stored formula', () => {
    const run = parseRunFile(report(), 'out.json');
    expect(run.samples.map((s) => [s.index, s.sample, s.ex, s.format, s.reward, s.resultKey])).toEqual([
      [3, 0, 1, 1, 1.5, 'k1'],
      [3, 1, 0, 0, 0, undefined],
    ]);
    expect(run.run).toMatchObject({
      name: 'preds.jsonl',
      samplesPerQuestion: 2,
      executor: 'sql.js 1.17.0',
      config: {
        timeoutMs: 5000,
        readOnly: true,
        vesIterations: 10,
        rewardFormula: 'ex + 0.5 * format',
        metrics: ['ex', 'soft-f1'],
      },
      dataset: { name: 'dev.json', databases: {}, gold: { name: 'gold.sql', sha256: '' } },
      subset: { indices: [3] },
    });
  });

  it('reads reports written before samples existed as sample 0 with reward ex', () => {
    const old = JSON.parse(report({ reward_formula: undefined }));
    for (const i of old.items) {
      delete i.sample;
      delete i.result_key;
    }
    old.items = old.items.slice(0, 1);
    const run = parseRunFile(JSON.stringify(old), 'old.json');
    expect(run.samples[0]).toMatchObject({ sample: 0, reward: 1, sql: '', goldSql: '' });
    expect(run.samples[0]!.resultKey).toBeUndefined();
  });

  it('rejects an item with a bad field, naming it', () => {
    const bad = JSON.parse(report());
    bad.items[1].ex = 2;
    expect(errorOf(() => parseRunFile(JSON.stringify(bad), 'out.json')).message).toMatch(
      /^out\.json: items\[1\]\.ex must be one of 0, 1, found number 2/,
    );
  });
});
