/**
 * Each preset's prompt, rendered by our TypeScript over the real databases with sql.js (as the
 * app's SQL worker reads them), equals byte for byte the text the ORIGINAL Python produced for
 * 20 BIRD mini-dev questions (fixtures/preset-prompts.json; how it was made: fixtures/README.md).
 * The fixture keeps the SHA-256 of every message, its length and a short hash per line (the BIRD
 * text itself stays out of the repository); a mismatch names the first line that differs.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import initSqlJs, { type Database } from 'sql.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BirdTablesEntry, ReadOnlyQuery } from '../../../src/core/prompt/omnisql-schema.ts';
import { renderPresetSchema, type PresetSchemaSources } from '../../../src/core/prompt/preset-schema.ts';
import { BUILTIN_PRESETS, renderPresetMessages, requirePreset } from '../../../src/core/prompt/presets.ts';
import type { SqlValue } from '../../../src/core/types.ts';
import { readBirdQuestions, sharedData } from '../../helpers/shared-data.ts';
import { sqljsSchemaSource } from '../../prompt/sqljs-schema-source.ts';

interface FixtureMessage {
  role: string;
  sha256: string;
  chars: number;
  lineSha256: string[];
}
interface Fixture {
  questions: Array<[string, number]>;
  presets: Record<string, Array<{ questionId: number; prefill: string; messages: FixtureMessage[] }>>;
}

const fixture = JSON.parse(
  readFileSync(path.join(import.meta.dirname, 'fixtures', 'preset-prompts.json'), 'utf8'),
) as Fixture;
const sha = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

/** Where our text first differs from the original's, for the failure message. */
function firstDifference(ours: string, expected: FixtureMessage): string {
  const lines = ours.split('\n');
  for (let i = 0; i < Math.max(lines.length, expected.lineSha256.length); i++) {
    if (sha(lines[i] ?? '').slice(0, 8) !== expected.lineSha256[i])
      return `line ${i + 1} differs; ours: ${JSON.stringify(lines[i] ?? '<none>')}`;
  }
  return 'same lines, different bytes';
}

let sources: PresetSchemaSources & { close(): void };
const schemaCache = new Map<string, Promise<string>>();

beforeAll(async () => {
  const dbRoot = sharedData('bird', 'databases');
  const schemaSource = await sqljsSchemaSource(dbRoot);
  const SQL = await initSqlJs();
  const open = new Map<string, Database>();
  const query: ReadOnlyQuery = async (dbId, sql) => {
    let db = open.get(dbId);
    if (!db) {
      db = new SQL.Database(readFileSync(path.join(dbRoot, dbId, `${dbId}.sqlite`)));
      open.set(dbId, db);
    }
    return (db.exec(sql)[0]?.values ?? []) as SqlValue[][];
  };
  const entries = JSON.parse(
    readFileSync(sharedData('bird', 'minidev', 'dev_tables.json'), 'utf8'),
  ) as BirdTablesEntry[];
  sources = {
    schemaSource,
    query,
    tablesEntry: (dbId) => entries.find((e) => e.db_id === dbId),
    close() {
      schemaSource.close();
      for (const d of open.values()) d.close();
    },
  };
});
afterAll(() => sources?.close());

describe('policy presets reproduce the originals byte for byte', () => {
  const questions = readBirdQuestions(sharedData('bird', 'minidev', 'mini_dev_sqlite.json'));

  it('the fixture covers every built-in preset on 20 questions of student_club, superhero and toxicology', () => {
    expect(Object.keys(fixture.presets).sort()).toEqual(BUILTIN_PRESETS.map((p) => p.id).sort());
    expect(fixture.questions).toHaveLength(20);
    expect(new Set(fixture.questions.map(([db]) => db))).toEqual(new Set(['student_club', 'superhero', 'toxicology']));
  });

  for (const [presetId, items] of Object.entries(fixture.presets)) {
    it(`${presetId}: messages and prefill of all 20 questions equal the original's`, async () => {
      const preset = requirePreset(presetId);
      expect(items).toHaveLength(20);
      for (const item of items) {
        const q = questions.find((x) => x.question_id === item.questionId)!;
        const key = `${presetId}/${q.db_id}`;
        if (!schemaCache.has(key)) schemaCache.set(key, renderPresetSchema(preset, q.db_id, sources));
        const rendered = renderPresetMessages(
          preset,
          { question: q.question, evidence: q.evidence },
          await schemaCache.get(key)!,
        );
        expect(rendered.prefill, `${presetId} q${q.question_id} prefill`).toBe(item.prefill);
        expect(rendered.messages.map((m) => m.role)).toEqual(item.messages.map((m) => m.role));
        rendered.messages.forEach((m, i) => {
          const expected = item.messages[i]!;
          const where = `${presetId} q${q.question_id} message ${i} (${m.role})`;
          if (sha(m.content) !== expected.sha256) expect.fail(`${where}: ${firstDifference(m.content, expected)}`);
          expect([...m.content].length, where).toBe(expected.chars);
        });
      }
    });
  }
});
