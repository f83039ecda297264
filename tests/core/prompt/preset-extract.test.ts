/**
 * extractAnswer against the originals' own extraction functions: every expected value in
 * fixtures/preset-extract-cases.json was returned by the original Python (OmniSQL's
 * parse_response, SkyRL's verify_format_and_extract, the verl tutorial's extract_sql_solution)
 * for the same text; the SkyRL cases include SkyRL's own test table (skyrl-gym/tests/test_sql.py).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { extractAnswer } from '../../../src/core/prompt/preset-extract.ts';
import {
  ARCTIC_TEXT2SQL_R1_PRESET,
  BIRD_MINIDEV_PRESET,
  OMNISQL_PRESET,
  SKYRL_SQL_PRESET,
  VERL_TEXT2SQL_PRESET,
} from '../../../src/core/prompt/presets.ts';

const cases = JSON.parse(
  readFileSync(path.join(import.meta.dirname, 'fixtures', 'preset-extract-cases.json'), 'utf8'),
) as Record<'last-sql-fence' | 'skyrl-solution' | 'verl-answer', Array<[string, string | null]>>;

describe('extractAnswer reproduces the originals', () => {
  it("omnisql-v1 and arctic-text2sql-r1-v1: OmniSQL's parse_response (last ```sql block; '' when none)", () => {
    for (const preset of [OMNISQL_PRESET, ARCTIC_TEXT2SQL_R1_PRESET]) {
      for (const [text, expected] of cases['last-sql-fence']) {
        // parse_response returns '' both for no block and for an empty block; we keep null for "no block".
        expect(extractAnswer(preset, text).sql ?? '', `${preset.id}: ${JSON.stringify(text)}`).toBe(expected);
      }
    }
    expect(extractAnswer(OMNISQL_PRESET, 'SELECT 1').sql).toBeNull();
  });

  it("skyrl-sql-v1: SkyRL's verify_format_and_extract, format failures give no SQL", () => {
    for (const [text, expected] of cases['skyrl-solution']) {
      const got = extractAnswer(SKYRL_SQL_PRESET, text);
      expect(got.sql, JSON.stringify(text)).toBe(expected);
      expect(got.formatOk).toBe(expected !== null);
    }
  });

  it("verl-text2sql-v1: the tutorial's extract_sql_solution (exactly one <answer>...</answer>)", () => {
    for (const [text, expected] of cases['verl-answer']) {
      expect(extractAnswer(VERL_TEXT2SQL_PRESET, text).sql, JSON.stringify(text)).toBe(expected);
    }
  });

  it("bird-minidev-v1 keeps the app's extraction (think stripped, last fence)", () => {
    expect(extractAnswer(BIRD_MINIDEV_PRESET, '<think>SELECT 0</think>```sql\nSELECT 1\n```').sql).toBe('SELECT 1');
    expect(extractAnswer(BIRD_MINIDEV_PRESET, 'no sql here').sql).toBeNull();
  });
});
