/**
 * Judge answers and completions parsed in linear time. No timed assertion: the judge parser
 * counts the characters it scans (at most a few times the input, where rescanning from every
 * `{` was n^2 / 2), and the SQL extraction and the judge parser each finish 1 MB hostile inputs
 * well within a generous test timeout (68 s, 25 s and hours before). The time ratio of 4N to N
 * is measured in the bench (`parse_linear_ratio`).
 */
import { describe, expect, it } from 'vitest';
import {
  MAX_JUDGE_ANSWER_CHARS,
  jsonObjects,
  parseCriterionAnswer,
  parseScoreAnswer,
} from '../../src/core/rubric/parse-judge.ts';
import { extractSql } from '../../src/core/sql/extract-sql.ts';
import { tagBlocks } from '../../src/core/sql/tag-blocks.ts';

const MB = 1024 * 1024;

describe('linear-time parsing of judge answers and completions', { timeout: 60_000 }, () => {
  it('300 KB and 1 MB of "{": the characters scanned stay within a few times the input (not n^2 / 2)', () => {
    for (const n of [300 * 1024, MB]) {
      const work = { chars: 0 };
      expect(jsonObjects('{'.repeat(n), work)).toEqual([]);
      expect(work.chars).toBeLessThanOrEqual(2 * n);
    }
    // Strings that hide braces from one scan: still bounded (at most 8 scans).
    for (const text of ['{"'.repeat(200_000), '{"\\"{'.repeat(100_000), '{ "x": "{'.repeat(50_000)]) {
      const work = { chars: 0 };
      jsonObjects(text, work);
      expect(work.chars).toBeLessThanOrEqual(9 * text.length);
    }
  });

  it('the same objects as before on ordinary answers: prose, fences, several objects, nested, unclosed', () => {
    expect(jsonObjects('Verdict: {"criteria_met": true, "explanation": "ok {x}"} done')).toEqual([
      { criteria_met: true, explanation: 'ok {x}' },
    ]);
    expect(jsonObjects('{ broken {"score": 7} and {"score": 7, "explanation": "a"}')).toEqual([
      { score: 7 },
      { score: 7, explanation: 'a' },
    ]);
    expect(jsonObjects('{"a": {"b": 1}} {"c": 2}')).toEqual([{ a: { b: 1 } }, { c: 2 }]);
    expect(
      parseCriterionAnswer(
        '<think>{"criteria_met": false}</think>```json\n{"criteria_met": true, "explanation": "x"}\n```',
      ),
    ).toEqual({ ok: true, value: { met: true, explanation: 'x' } });
    expect(parseScoreAnswer('{"score": 7}{"score": 8}')).toMatchObject({
      ok: false,
      error: expect.stringMatching(/disagree/),
    });
  });

  it('a 1 MiB answer of "{" is unparseable at once; a reply past the bound is refused with the reason', () => {
    expect(parseCriterionAnswer('{'.repeat(MB - 1))).toMatchObject({
      ok: false,
      error: expect.stringMatching(/no JSON object/),
    });
    expect(parseScoreAnswer('{'.repeat(MAX_JUDGE_ANSWER_CHARS + 1))).toMatchObject({
      ok: false,
      error: expect.stringMatching(/more than the 1,048,576 a verdict may take/),
    });
    expect(parseCriterionAnswer(`${'<think>'.repeat(100_000)}{"criteria_met": true}`)).toMatchObject({ ok: true });
  });

  it('SQL extraction: 1 MB of "WITH a(", of "<think>" and of "<answer>" finish and give the rule they always gave', () => {
    expect(extractSql('WITH a('.repeat(MB / 7)).extraction.rule).toBe('none');
    const think = extractSql('<think>'.repeat(MB / 7) + ' SELECT 1');
    expect(think.sql).toBe('');
    expect(think.extraction.thinkStripped).toBe(true);
    expect(extractSql('<answer>'.repeat(MB / 8) + 'SELECT 2;').extraction.rule).toBe('select-fallback');
    // Ordinary completions: unchanged.
    expect(extractSql('<think>draft SELECT 0</think>\nWITH t(x) AS (SELECT 1) SELECT x FROM t;').sql).toBe(
      'WITH t(x) AS (SELECT 1) SELECT x FROM t;',
    );
    expect(extractSql('<answer>```sql\nSELECT 3\n```</answer>').sql).toBe('SELECT 3');
    expect(tagBlocks('<a>1</a><A>2</A><a>3', 'a').map((b) => b.content)).toEqual(['1', '2']);
  });
});
