import { describe, expect, it } from 'vitest';
import { parseGoldSql } from '../../../src/core/formats/gold.ts';
import { pairingFindings } from '../../../src/core/formats/pairing.ts';
import { BIRD_SEPARATOR, parsePredictions } from '../../../src/core/formats/predictions.ts';
import { parseQuestions } from '../../../src/core/formats/questions.ts';
import { planReplay } from '../../../src/core/run/replay.ts';
import { readSharedText } from '../../helpers/shared-data.ts';

const gold = parseGoldSql(readSharedText('bird', 'minidev', 'mini_dev_sqlite_gold.sql'), 'gold.sql');
const questions = parseQuestions(readSharedText('bird', 'minidev', 'mini_dev_sqlite.json'), 'mini_dev_sqlite.json');
const name = 'predict_mini_dev_gpt-4-o_cot_SQLite.json';
const original = readSharedText('bird', 'predictions', 'TA_output', name);

/** The same predictions written with their keys sorted as strings: "0", "1", "10", "100", ... */
function sortedAsText(text: string): string {
  const obj = JSON.parse(text) as Record<string, string>;
  const keys = Object.keys(obj).sort();
  return '{' + keys.map((k) => `${JSON.stringify(k)}: ${JSON.stringify(obj[k])}`).join(',\n') + '}';
}

describe('the shared pairing policy', () => {
  it('finds nothing to report on a real BIRD file paired with its own gold', () => {
    expect(planReplay({ predictions: { name, text: original }, gold, questions }).findings).toEqual([]);
  });

  it('reports keys sorted as strings, naming the file, the count and what to do, and pairs as the official evaluator does', () => {
    const text = sortedAsText(original);
    const plan = planReplay({ predictions: { name, text }, gold, questions });
    const keyOrder = plan.findings.find((f) => f.code === 'key-order');
    expect(keyOrder?.file).toBe(name);
    // Keys 0, 1 and 100..109 etc. fall out of place; only "0" and "1" stay where they belong.
    const misplaced = Object.keys(JSON.parse(original) as object)
      .sort()
      .filter((k, i) => k !== String(i)).length;
    expect(misplaced).toBe(498);
    expect(keyOrder?.message).toMatch(
      new RegExp(
        `^${misplaced} of 500 keys are not at their own position: the value at position 2 has key "10" \\(the keys look sorted as text`,
      ),
    );
    expect(keyOrder?.message).toMatch(/Write the file with its keys in numeric order/);
    // The official evaluator zips values in file order: position 2 gets the value of key "10".
    const value10 = (JSON.parse(original) as Record<string, string>)['10']!.split(BIRD_SEPARATOR)[0];
    expect(plan.items[2]!.predSql).toBe(value10);
    // The values now name other databases than the gold lines they meet.
    expect(plan.findings.map((f) => f.code)).toContain('other-dataset');
  });

  it('makes every finding an error under strict, with the findings in the message', () => {
    expect(() =>
      planReplay({ predictions: { name, text: sortedAsText(original) }, gold, questions }, { strict: true }),
    ).toThrow(new RegExp(`^${name.replace(/[.-]/g, '\\$&')}: \\d+ of 500 keys are not at their own position`));
  });

  it('reports a count that differs from the gold, and nothing for a file that names its questions', () => {
    const short = JSON.stringify({
      0: `SELECT 1${BIRD_SEPARATOR}${gold[0]!.dbId}`,
      1: `SELECT 2${BIRD_SEPARATOR}${gold[1]!.dbId}`,
    });
    expect(pairingFindings(parsePredictions(short, 'p.json'), gold, 'p.json').map((f) => f.code)).toEqual([
      'count-mismatch',
    ]);
    const jsonl = '{"question_id": 1471, "sql": "SELECT 1"}\n';
    expect(pairingFindings(parsePredictions(jsonl, 'p.jsonl'), gold, 'p.jsonl')).toEqual([]);
  });
});
