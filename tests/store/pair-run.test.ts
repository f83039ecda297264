import { describe, expect, it } from 'vitest';
import { pairRunPredictions } from '../../src/adapters/import/pair-run.ts';
import { parseGoldSql } from '../../src/core/formats/gold.ts';
import { parseQuestions } from '../../src/core/formats/questions.ts';
import { planReplay } from '../../src/core/run/replay.ts';
import { readSharedText } from '../helpers/shared-data.ts';

const miniQ = parseQuestions(readSharedText('bird', 'minidev', 'mini_dev_sqlite.json'), 'mini_dev_sqlite.json');
const miniG = parseGoldSql(readSharedText('bird', 'minidev', 'mini_dev_sqlite_gold.sql'), 'mini_dev_sqlite_gold.sql');
const devQ = parseQuestions(readSharedText('bird', 'dev', 'dev.json'), 'dev.json');
const devG = parseGoldSql(readSharedText('bird', 'dev', 'dev_gold.sql'), 'dev_gold.sql');
const predName = 'predict_mini_dev_gpt-4_sqlite.json';
const predText = readSharedText('bird', 'predictions', 'sql_output_kg', predName);

describe('predictions are checked against the dataset at run start', () => {
  it('pairs real mini-dev predictions with the mini-dev dataset, with the file sha256', async () => {
    const r = await pairRunPredictions({
      predictionsName: predName,
      predictionsText: predText,
      questions: miniQ,
      gold: miniG,
      fence: 'last',
    });
    expect(r.items).toHaveLength(500);
    expect(r.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(r.items[0]!.dbId).toBe(miniG[0]!.dbId);
  });

  it('refuses mini-dev predictions for the full BIRD dev dataset, naming the file and why', async () => {
    await expect(
      pairRunPredictions({
        predictionsName: predName,
        predictionsText: predText,
        questions: devQ,
        gold: devG,
        fence: 'last',
      }),
    ).rejects.toThrow(new RegExp(`^${predName.replace(/[.-]/g, '\\$&')}: these predictions are for another dataset`));
  });

  it('refuses a positional file whose count differs from the dataset', async () => {
    await expect(
      pairRunPredictions({
        predictionsName: 'p.sql',
        predictionsText: 'SELECT 1\nSELECT 2\n',
        questions: miniQ,
        gold: miniG,
        fence: 'last',
      }),
    ).rejects.toMatchObject({
      code: 'MISMATCH',
      message: expect.stringMatching(/2 predictions for a dataset of 500 questions/),
    });
  });

  it("refuses a BIRD file whose keys were sorted as strings, with the CLI's finding as the message", async () => {
    const obj = JSON.parse(predText) as Record<string, string>;
    const text =
      '{' +
      Object.keys(obj)
        .sort()
        .map((k) => `${JSON.stringify(k)}: ${JSON.stringify(obj[k])}`)
        .join(',') +
      '}';
    const plan = planReplay({ predictions: { name: predName, text }, gold: miniG, questions: miniQ });
    const keyOrder = plan.findings.find((f) => f.code === 'key-order')!;
    await expect(
      pairRunPredictions({
        predictionsName: predName,
        predictionsText: text,
        questions: miniQ,
        gold: miniG,
        fence: 'last',
      }),
    ).rejects.toMatchObject({ code: 'MISMATCH', message: expect.stringContaining(keyOrder.message) });
  });

  it('refuses JSON Lines naming a question the dataset does not have', async () => {
    const text = '{"question_id": 99999, "sql": "SELECT 1"}\n';
    await expect(
      pairRunPredictions({
        predictionsName: 'p.jsonl',
        predictionsText: text,
        questions: miniQ,
        gold: miniG,
        fence: 'last',
      }),
    ).rejects.toMatchObject({ code: 'MISMATCH' });
  });
});
