/** prime-rl eval rollouts read as harness rows, the majority SQL diff, and the folder poll's stable-size rule. */
import { describe, expect, it } from 'vitest';
import { detectHarnessFormat, mapHarnessRows, primeRlRows } from '../../../src/core/formats/harness.ts';
import { jsonLineRecords } from '../../../src/core/formats/records.ts';
import type { Question } from '../../../src/core/types.ts';
import { StableFiles } from '../../../src/core/series/folder-poll.ts';
import { sqlDiff } from '../../../src/core/series/sql-diff.ts';

const q = (questionId: number, question: string, goldSql: string): Question =>
  ({ questionId, dbId: 'db', question, evidence: '', goldSql, difficulty: 'simple' }) as Question;

describe('prime-rl eval rollouts (verifiers RolloutOutput per line)', () => {
  const line = (o: object) =>
    JSON.stringify({
      example_id: 0,
      task: 't',
      prompt: [{ role: 'user', content: 'How many heroes are there?' }],
      completion: [
        { role: 'assistant', content: 'Let me think.' },
        { role: 'tool', content: 'ignored' },
        { role: 'assistant', content: [{ type: 'text', text: '```sql\nSELECT 1\n```' }] },
      ],
      answer: 'SELECT COUNT(*) FROM hero',
      reward: 0.5,
      metrics: {},
      is_completed: true,
      is_truncated: false,
      ...o,
    });

  it('is detected, reads the last assistant text, the reward, answer and info (object or JSON text)', () => {
    const text = [
      line({}),
      line({ example_id: 1, info: '{"question_id": 7}', completion: 'SELECT 2', reward: 1 }),
    ].join('\n');
    const records = jsonLineRecords(text, 'eval_rollouts.jsonl');
    expect(detectHarnessFormat(records[0]!.value)).toBe('prime-rl');
    const rows = primeRlRows(records);
    expect(rows[0]).toMatchObject({
      step: null,
      completions: ['```sql\nSELECT 1\n```'],
      prompt: 'How many heroes are there?',
      target: 'SELECT COUNT(*) FROM hero',
      score: 0.5,
    });
    expect(rows[1]).toMatchObject({ completions: ['SELECT 2'], questionId: 7, score: 1 });
    const [run] = mapHarnessRows(rows, [q(7, 'Name a power', 'SELECT 2'), q(3, 'How many heroes are there', 'x')]);
    expect(run!.byRule).toEqual({ question_id: 1, 'question text': 1, 'gold SQL': 0 });
    expect(run!.sampleScores.get(3)).toEqual([0.5]);
  });

  it('refuses a rollout without assistant text, naming the line', () => {
    const records = jsonLineRecords(line({ completion: [{ role: 'user', content: 'x' }] }), 'r.jsonl');
    expect(() => primeRlRows(records)).toThrow(/r\.jsonl:1.*"completion" holds no assistant text/);
  });
});

describe('sqlDiff', () => {
  it('keeps what is common and marks what changed, as written', () => {
    const parts = sqlDiff('SELECT name FROM hero WHERE id = 1', 'SELECT  name, power FROM hero WHERE id = 2');
    // Every part of the new text is shown, the removed parts where they were.
    expect(parts.map((p) => p.text).join('')).toBe('SELECT  name, power FROM hero WHERE id = 12');
    expect(parts.filter((p) => p.kind === 'added').map((p) => p.text.trim())).toEqual([', power', '2']);
    expect(parts.filter((p) => p.kind === 'removed').map((p) => p.text)).toEqual(['1']);
    expect(sqlDiff('SELECT 1', 'SELECT 1')).toEqual([{ kind: 'same', text: 'SELECT 1' }]);
    // Keywords and names in another case are the same SQL: shown as the later step writes them.
    expect(sqlDiff('SELECT count(*) FROM T', "select COUNT(*) from t WHERE x = 'A'")).toEqual([
      { kind: 'same', text: 'select COUNT(*) from t' },
      { kind: 'added', text: " WHERE x = 'A'" },
    ]);
  });
});

describe('StableFiles: a file is taken when its size is the same at two polls', () => {
  it('waits for a growing file, takes each file once, never one marked taken', () => {
    const f = new StableFiles();
    f.markTaken('old.jsonl');
    expect(
      f.poll([
        { name: 'old.jsonl', size: 5 },
        { name: 'a.jsonl', size: 10 },
      ]),
    ).toEqual([]);
    expect(
      f.poll([
        { name: 'a.jsonl', size: 20 },
        { name: 'empty.jsonl', size: 0 },
      ]),
    ).toEqual([]);
    expect(
      f.poll([
        { name: 'a.jsonl', size: 20 },
        { name: 'empty.jsonl', size: 0 },
      ]),
    ).toEqual(['a.jsonl']);
    expect(f.poll([{ name: 'a.jsonl', size: 20 }])).toEqual([]);
    expect(f.has('a.jsonl')).toBe(true);
  });
});
