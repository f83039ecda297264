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
  /** The diff as read: removed runs as [-…-], added runs as {+…+}, the rest (shared text and gaps) as is. */
  const shown = (before: string, after: string) =>
    sqlDiff(before, after)
      .map((p) => (p.kind === 'removed' ? `[-${p.text}-]` : p.kind === 'added' ? `{+${p.text}+}` : p.text))
      .join('');
  /** The later text, from the parts that are it (shared and added). */
  const later = (before: string, after: string) =>
    sqlDiff(before, after)
      .filter((p) => p.kind === 'same' || p.kind === 'added')
      .map((p) => p.text)
      .join('');

  it('keeps what is common and marks what changed, as written; a removed run and an added run are spaced apart', () => {
    const [a, b] = ['SELECT name FROM hero WHERE id = 1', 'SELECT  name, power FROM hero WHERE id = 2'];
    expect(shown(a, b)).toBe('SELECT  name{+, power +}FROM hero WHERE id = [-1-] {+2+}');
    expect(later(a, b)).toBe(b);
    expect(sqlDiff('SELECT 1', 'SELECT 1')).toEqual([{ kind: 'same', text: 'SELECT 1' }]);
    // Keywords and names in another case are the same SQL: shown as the later step writes them.
    expect(sqlDiff('SELECT count(*) FROM T', "select COUNT(*) from t WHERE x = 'A'")).toEqual([
      { kind: 'same', text: 'select COUNT(*) from t' },
      { kind: 'added', text: " WHERE x = 'A'" },
    ]);
  });

  it('never runs a removed name into an added one, nor interleaves them token by token (the 390-px audit: "eventmember")', () => {
    const a = 'SELECT T1.event FROM attendance AS T1 WHERE T1.link_to_event = 1';
    const b = 'SELECT T1.member FROM attendance AS T1 WHERE T1.link_to_member = 1';
    expect(shown(a, b)).toBe(
      'SELECT T1.[-event-] {+member+} FROM attendance AS T1 WHERE T1.[-link_to_event-] {+link_to_member+} = 1',
    );
    // Symbols between two changes stay inside the run: one removal, then one addition.
    const c =
      "SELECT COUNT(T1.event_id) FROM event AS T1 INNER JOIN attendance AS T2 ON T1.event_id = T2.link_to_event WHERE T1.event_name = 'Women''s Soccer'";
    const d =
      "SELECT COUNT(T2.link_to_member) FROM event AS T1 INNER JOIN attendance AS T2 ON T1.event_id = T2.link_to_event INNER JOIN member AS T3 ON T2.link_to_member = T3.member_id WHERE T1.event_name = 'Women''s Soccer'";
    expect(shown(c, d)).toBe(
      "SELECT COUNT([-T1.event_id-] {+T2.link_to_member+}) FROM event AS T1 INNER JOIN attendance AS T2 ON T1.event_id = T2.link_to_event {+INNER JOIN member AS T3 ON T2.link_to_member = T3.member_id +}WHERE T1.event_name = 'Women''s Soccer'",
    );
    expect(later(c, d)).toBe(d);
    // A removed word keeps its space to the next shared one (not "INNERJOIN").
    expect(shown('SELECT a FROM t\nINNER JOIN u ON x', 'SELECT a FROM t\nJOIN u ON x')).toBe(
      'SELECT a FROM t\n[-INNER-] JOIN u ON x',
    );
    // A removed run keeps the earlier text's spaces between its words.
    expect(shown('SELECT a FROM t ORDER BY x DESC LIMIT 1', 'SELECT a FROM t WHERE y > 2')).toBe(
      'SELECT a FROM t [-ORDER BY x DESC LIMIT 1-] {+WHERE y > 2+}',
    );
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
