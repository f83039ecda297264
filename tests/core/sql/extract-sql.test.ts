import { describe, expect, it } from 'vitest';
import { EXTRACTION_RULES, extractSql } from '../../../src/core/sql/extract-sql.ts';
import type { ExtractionRule } from '../../../src/core/types.ts';
import { RULE_VALUES } from '../../../src/core/formats/validate.ts';

const fence = (lang: string, body: string) => '```' + lang + '\n' + body + '\n```';

describe('extractSql', () => {
  it.each<[string, string, string, ExtractionRule]>([
    [
      'takes the last <answer> tag',
      '<answer>SELECT 1</answer> then <answer> SELECT 2 </answer>',
      'SELECT 2',
      'answer-tag',
    ],
    [
      'unwraps a sql fence inside <answer>',
      `<answer>\n${fence('sql', 'SELECT 3;')}\n</answer>`,
      'SELECT 3;',
      'answer-tag',
    ],
    [
      'unwraps a fence of any language inside <answer>',
      `<answer>${fence('mysql', 'SELECT 4')}</answer>`,
      'SELECT 4',
      'answer-tag',
    ],
    ['peels an unclosed fence inside <answer>', '<answer>```sql\nSELECT 5\n</answer>', 'SELECT 5', 'answer-tag'],
    [
      'keeps an empty <answer> empty instead of guessing',
      `${fence('sql', 'SELECT 1')}<answer></answer>`,
      '',
      'answer-tag',
    ],
    ['reads answer tags case-insensitively', '<ANSWER>SELECT 6</ANSWER>', 'SELECT 6', 'answer-tag'],
    [
      'takes <solution> when there is no <answer>',
      `<solution>${fence('sql', 'SELECT 7')}</solution>`,
      'SELECT 7',
      'solution-tag',
    ],
    [
      'prefers <answer> over <solution>',
      '<solution>SELECT 1</solution><answer>SELECT 2</answer>',
      'SELECT 2',
      'answer-tag',
    ],
    [
      'prefers a tag over a fence outside it',
      `${fence('sql', 'SELECT 1')}\n<answer>SELECT 2</answer>`,
      'SELECT 2',
      'answer-tag',
    ],
    [
      'takes the last sql block by default',
      `Draft:\n${fence('sql', 'SELECT 1')}\nBetter:\n${fence('sql', 'SELECT 2')}`,
      'SELECT 2',
      'fenced-sql-last',
    ],
    ['accepts ```sqlite and upper-case tags', `${fence('SQLite', 'SELECT 8')}`, 'SELECT 8', 'fenced-sql-last'],
    ['accepts a bare fence starting with SELECT', fence('', 'select 9'), 'select 9', 'fenced-sql-last'],
    [
      'accepts a bare fence starting with WITH',
      fence('', 'WITH t AS (SELECT 1) SELECT * FROM t'),
      'WITH t AS (SELECT 1) SELECT * FROM t',
      'fenced-sql-last',
    ],
    [
      'reads a fence whose first line is SELECT as bare',
      '```SELECT\n* FROM t\n```',
      'SELECT\n* FROM t',
      'fenced-sql-last',
    ],
    ['accepts a one-line sql fence', 'Use ```sql SELECT 10``` here', 'SELECT 10', 'fenced-sql-last'],
    [
      'ignores fences of other languages',
      `${fence('sql', 'SELECT 1')}\n${fence('python', 'print(1)')}`,
      'SELECT 1',
      'fenced-sql-last',
    ],
    [
      'ignores bare fences that are not SQL',
      `${fence('sql', 'SELECT 1')}\n${fence('', 'rows: 3')}`,
      'SELECT 1',
      'fenced-sql-last',
    ],
    ['ignores empty sql fences', `${fence('sql', 'SELECT 1')}\n${fence('sql', '  ')}`, 'SELECT 1', 'fenced-sql-last'],
    [
      'falls back to the first SELECT, up to the first semicolon',
      'The query is SELECT a FROM t; and done; ok',
      'SELECT a FROM t;',
      'select-fallback',
    ],
    [
      'does not stop at a semicolon inside a string',
      "Answer: SELECT a FROM t WHERE b = 'x;y' AND c = 'it''s;'; bye",
      "SELECT a FROM t WHERE b = 'x;y' AND c = 'it''s;';",
      'select-fallback',
    ],
    [
      'does not stop at a semicolon inside a quoted identifier',
      'SELECT "a;b", `c;d` FROM t',
      'SELECT "a;b", `c;d` FROM t',
      'select-fallback',
    ],
    [
      'takes the rest of the text when there is no semicolon',
      'so:\nselect a\nfrom t\n',
      'select a\nfrom t',
      'select-fallback',
    ],
    [
      'starts at a CTE',
      'Here: WITH x AS (SELECT 1) SELECT * FROM x',
      'WITH x AS (SELECT 1) SELECT * FROM x',
      'select-fallback',
    ],
    ['does not take the prose word "with" for a CTE', 'Start with the table: SELECT 1', 'SELECT 1', 'select-fallback'],
    ['matches whole words only', 'selected items are none', '', 'none'],
    ['falls back on an unclosed sql fence', 'Answer:\n```sql\nSELECT 11\n', 'SELECT 11', 'select-fallback'],
    ['gives up when nothing looks like SQL', 'I cannot answer this.', '', 'none'],
    ['gives up on an empty completion', '', '', 'none'],
  ])('%s', (_title, completion, sql, rule) => {
    const out = extractSql(completion);
    expect(out.sql).toBe(sql);
    expect(out.extraction).toEqual({ rule, thinkStripped: false });
  });

  it('takes the first block and names the rule so when fence is "first"', () => {
    const text = `${fence('sql', 'SELECT 1')}\n${fence('sql', 'SELECT 2')}`;
    expect(extractSql(text, { fence: 'first' })).toEqual({
      sql: 'SELECT 1',
      extraction: { rule: 'fenced-sql-first', thinkStripped: false },
    });
  });

  it('applies the fence choice inside an answer tag too', () => {
    const text = `<answer>${fence('sql', 'SELECT 1')}${fence('sql', 'SELECT 2')}</answer>`;
    expect(extractSql(text, { fence: 'first' }).sql).toBe('SELECT 1');
    expect(extractSql(text).sql).toBe('SELECT 2');
  });

  it.each<[string, string, string, ExtractionRule]>([
    ['a complete think block', '<think>maybe SELECT 1;</think>\nSELECT 2;', 'SELECT 2;', 'select-fallback'],
    [
      'several think blocks',
      '<think>a</think>x<Think>```sql\nSELECT 1\n```</Think>y ```sql\nSELECT 3\n```',
      'SELECT 3',
      'fenced-sql-last',
    ],
    [
      'everything before an orphan closing tag (R1 pre-filled <think>)',
      'Let me SELECT 1 ...\n</think>\n<answer>SELECT 2</answer>',
      'SELECT 2',
      'answer-tag',
    ],
    [
      'an unclosed think block up to the end (cut off mid-thought)',
      'SELECT 9 <think> I think SELECT 1',
      'SELECT 9',
      'select-fallback',
    ],
    ['an unclosed think block, leaving nothing', '<think> the answer is SELECT 1 FROM', '', 'none'],
  ])('strips %s before applying the rules', (_title, completion, sql, rule) => {
    expect(extractSql(completion)).toEqual({ sql, extraction: { rule, thinkStripped: true } });
  });

  it('never grades an <answer> that only appears inside the reasoning', () => {
    expect(extractSql('<think><answer>SELECT 1</answer></think>No idea.').extraction.rule).toBe('none');
  });
});

describe('EXTRACTION_RULES', () => {
  it('describes every rule in one sentence', () => {
    expect(Object.keys(EXTRACTION_RULES).sort()).toEqual([...RULE_VALUES].sort());
    for (const text of Object.values(EXTRACTION_RULES)) expect(text).toMatch(/^[A-Z].*\.$/);
  });
});
