/**
 * The app's batch export (src/app/batch-export.ts, the Generate screen's batch panel) under a
 * policy preset, over the app's ports in memory with Node's SQL workers and the real mini-dev
 * data (its dev_tables.json stored with the dataset, as the import stores it). A single-turn
 * preset goes through the core code the CLI's `batch export --preset` uses: the request lines
 * equal the CLI's for the same questions, and their messages equal the ORIGINAL Python's
 * (tests/core/prompt/fixtures/preset-prompts.json). A multi-turn preset is refused, saying why.
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { exportBatchFiles } from '../../src/app/batch-export.ts';
import type { DatasetRecord } from '../../src/app/records.ts';
import { parseCustomId, type BatchRequestLine } from '../../src/core/batch/batch.ts';
import { parseTablesJson } from '../../src/core/formats/tables-json.ts';
import { OMNISQL_PRESET, SKYRL_SQL_PRESET, presetFingerprint } from '../../src/core/prompt/presets.ts';
import { BIRD_MINIDEV_V1 } from '../../src/core/prompt/templates.ts';
import { readBatchRequests } from '../helpers/batch-fixtures.ts';
import { readJson, runCli, tempFile } from '../helpers/cli.ts';
import { fileDataset, memoryAppPorts } from '../helpers/memory-app-ports.ts';
import { minidevQuestions, sharedData } from '../helpers/shared-data.ts';
import { rejectionOf } from '../helpers/errors.ts';

const fixture = JSON.parse(
  readFileSync(path.join(import.meta.dirname, '..', 'core', 'prompt', 'fixtures', 'preset-prompts.json'), 'utf8'),
) as { presets: Record<string, Array<{ questionId: number; messages: Array<{ role: string; sha256: string }> }>> };
const sha = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');
const DB_ROOT = sharedData('bird', 'databases');
const TABLES = sharedData('bird', 'minidev', 'dev_tables.json');
const IDS = [1312, 717, 195]; // student_club, superhero, toxicology

/** These three mini-dev questions as files (for the CLI) and as the app's dataset record with its tables.json entries. */
async function dataset(): Promise<{ record: DatasetRecord; questions: string; gold: string }> {
  const all = minidevQuestions();
  const goldLines = readFileSync(sharedData('bird', 'minidev', 'mini_dev_sqlite_gold.sql'), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '');
  const at = IDS.map((id) => all.findIndex((q) => q.question_id === id));
  const questions = tempFile('questions.json');
  writeFileSync(questions, JSON.stringify(at.map((i) => all[i])));
  const gold = tempFile('gold.sql');
  writeFileSync(gold, at.map((i) => goldLines[i]).join('\n') + '\n');
  const d = await fileDataset({ questions, gold, dbRoot: DB_ROOT });
  const used = new Set(d.questions.map((q) => q.dbId));
  const tables = parseTablesJson(readFileSync(TABLES, 'utf8'), 'dev_tables.json').filter((e) => used.has(e.db_id));
  return { record: { ...d, tables }, questions, gold };
}

const spec = (n: number) => ({
  model: { id: 'seeklhy/OmniSQL-7B' },
  template: BIRD_MINIDEV_V1,
  params: { n, temperature: 0.3, topP: 0.9, maxTokens: 99, seed: 7, stop: [], logprobs: false },
});

describe("the app's batch export under a preset", () => {
  it("omnisql-v1: the preset's messages (the original's, byte for byte), sampling and stop token in every line, n and seed from the screen, the same lines as the CLI's batch export --preset", async () => {
    const d = await dataset();
    const app = memoryAppPorts(d.record, DB_ROOT);
    const files = await exportBatchFiles(app.ports, d.record, {
      indices: [],
      spec: spec(2),
      contextWindow: 1000,
      preset: OMNISQL_PRESET,
    });
    expect(files.requests).toBe(6);
    expect(files.plan.preset).toEqual({
      id: 'omnisql-v1',
      fingerprint: presetFingerprint(OMNISQL_PRESET),
      content: JSON.parse(JSON.stringify(OMNISQL_PRESET)),
      selfConsistency: false,
    });
    // A preset's prompt is never cut: the plan records no context window.
    expect(files.plan.contextWindow).toBeNull();
    const text = await files.jsonl.text();
    const lines = text
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as BatchRequestLine);
    expect(lines).toHaveLength(6);
    for (const line of lines) {
      const { index, sample } = parseCustomId(line.custom_id)!;
      const qid = d.record.questions[index]!.questionId;
      const item = fixture.presets[OMNISQL_PRESET.id]!.find((x) => x.questionId === qid)!;
      expect(line.body.messages.map((m) => m.role)).toEqual(item.messages.map((m) => m.role));
      line.body.messages.forEach((m, i) =>
        expect(sha(m.content), `q${qid} message ${i}`).toBe(item.messages[i]!.sha256),
      );
      // The preset's sampling (OmniSQL: greedy, 2048 tokens, Qwen's <|im_end|>), not the screen's temperature.
      expect(line.body).toMatchObject({
        model: 'seeklhy/OmniSQL-7B',
        temperature: OMNISQL_PRESET.sampling.temperature,
        max_tokens: OMNISQL_PRESET.sampling.maxTokens,
        seed: 7 + sample,
        stop_token_ids: [...OMNISQL_PRESET.stopTokenIds],
      });
    }

    // The CLI's export of the same questions with the same choices: the same lines.
    const out = tempFile('cli.jsonl');
    const cli = await runCli([
      'batch',
      'export',
      '--dataset',
      d.questions,
      '--gold',
      d.gold,
      '--db-root',
      DB_ROOT,
      '--tables',
      TABLES,
      '--model',
      'seeklhy/OmniSQL-7B',
      '--preset',
      'omnisql-v1',
      '--n',
      '2',
      '--seed',
      '7',
      '--out',
      out,
    ]);
    expect(cli.code, cli.stderr).toBe(0);
    expect(lines).toEqual(readBatchRequests(out));
    const cliPlan = readJson(out.replace(/\.jsonl$/, '.plan.json')) as Record<string, unknown>;
    expect({ ...JSON.parse(files.planJson), createdAt: null, dataset: null }).toEqual({
      ...cliPlan,
      createdAt: null,
      dataset: null,
    });
  }, 120_000);

  it('skyrl-sql-v1 (multi-turn): refused before any line, saying why and what to do instead', async () => {
    const d = await dataset();
    const app = memoryAppPorts(d.record, DB_ROOT);
    const err = await rejectionOf(
      exportBatchFiles(app.ports, d.record, {
        indices: [],
        spec: spec(1),
        contextWindow: null,
        preset: SKYRL_SQL_PRESET,
      }),
    );
    expect(err).toMatchObject({ code: 'BAD_OPTION' });
    expect(err.message).toBe(
      "preset skyrl-sql-v1 is multi-turn: each of its turns needs the database's answer to the previous turn's probe, " +
        'so it cannot be exported as an offline batch. Run it here with a loaded engine (Start), or with the CLI ' +
        'against a server: `generate --endpoint URL --model NAME --preset skyrl-sql-v1`',
    );
  });
});
