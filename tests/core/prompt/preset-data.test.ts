import { describe, expect, it } from 'vitest';
import { pyListRepr, pyStrRepr } from '../../../src/core/prompt/py-repr.ts';
import {
  omnisqlIdentifier,
  renderOmniSqlSchema,
  type BirdTablesEntry,
} from '../../../src/core/prompt/omnisql-schema.ts';
import { renderPresetSchema } from '../../../src/core/prompt/preset-schema.ts';
import {
  BUILTIN_PRESETS,
  OMNISQL_PRESET,
  findPreset,
  presetFingerprint,
  renderPresetMessages,
  requirePreset,
} from '../../../src/core/prompt/presets.ts';

describe('preset data', () => {
  it('ids are unique, versioned, and every text field renders without unknown variables', () => {
    const ids = BUILTIN_PRESETS.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const p of BUILTIN_PRESETS) {
      expect(p.id).toMatch(/^[a-z0-9][a-z0-9._-]*-v\d+$/);
      const { messages } = renderPresetMessages(p, { question: 'Q?', evidence: 'E' }, 'SCHEMA');
      const all = messages.map((m) => m.content).join('\n');
      expect(all, p.id).toContain('Q?');
      expect(all, p.id).toContain('SCHEMA');
      expect(all, p.id).not.toMatch(/\{\{/);
      expect(p.multiTurn === null || p.multiTurn.maxTurns > 0).toBe(true);
    }
  });

  it('the fingerprint changes with any field, so an edited preset cannot pass for the published one', () => {
    const base = presetFingerprint(OMNISQL_PRESET);
    expect(presetFingerprint({ ...OMNISQL_PRESET })).toBe(base);
    expect(presetFingerprint({ ...OMNISQL_PRESET, prefill: ' ' })).not.toBe(base);
    expect(
      presetFingerprint({ ...OMNISQL_PRESET, sampling: { ...OMNISQL_PRESET.sampling, temperature: 0.1 } }),
    ).not.toBe(base);
  });

  it('an unknown id is an error that lists the presets', () => {
    expect(findPreset('nope-v1')).toBeUndefined();
    expect(() => requirePreset('nope-v1')).toThrow(
      /unknown preset "nope-v1": choose one of bird-minidev-v1, omnisql-v1/,
    );
  });

  it("OmniSQL's question is evidence, newline, question; blank evidence leaves the question alone", () => {
    const one = (evidence: string) =>
      renderPresetMessages(OMNISQL_PRESET, { question: 'Q?', evidence }, 'S').messages[0]!.content;
    expect(one('E')).toContain('Question:\nE\nQ?\n');
    expect(one('  ')).toContain('Question:\nQ?\n');
  });

  it('an omnisql-ddl preset without a tables.json entry says which database and what to load', async () => {
    await expect(
      renderPresetSchema(OMNISQL_PRESET, 'ghost', {
        schemaSource: { tables: async () => [], sampleRows: async () => ({ columns: [], rows: [], classes: [] }) },
        query: async () => [],
        tablesEntry: () => undefined,
      }),
    ).rejects.toThrow(/no entry for database "ghost": load the tables.json/);
  });
});

describe("Python repr and OmniSQL's renderer on values the mini-dev fixtures do not contain", () => {
  it('str repr chooses quotes and escapes like Python', () => {
    expect(pyStrRepr('plain')).toBe("'plain'");
    expect(pyStrRepr("it's")).toBe('"it\'s"');
    expect(pyStrRepr(`it's "x"`)).toBe(`'it\\'s "x"'`);
    expect(pyStrRepr('a\\b\n\t\u00a0\u0007é')).toBe("'a\\\\b\\n\\t\\xa0\\x07é'");
    expect(
      pyListRepr([1, 1.5, 1, null, new Uint8Array([0x27, 0x41])], ['integer', 'real', 'real', 'null', 'blob']),
    ).toBe(`[1, 1.5, 1.0, None, b"'A"]`);
  });

  it('backticks reserved words and names with other characters; 40-character cut then dedupe, 6 values at most', () => {
    expect(omnisqlIdentifier('order')).toBe('`order`');
    expect(omnisqlIdentifier('first name')).toBe('`first name`');
    expect(omnisqlIdentifier('name')).toBe('name');
    const entry: BirdTablesEntry = {
      db_id: 'd',
      table_names_original: ['t'],
      column_names_original: [
        [-1, '*'],
        [0, 'id'],
        [0, 'Note Text'],
      ],
      column_names: [
        [-1, '*'],
        [0, 'id'],
        [0, 'note text'],
      ],
      column_types: ['text', 'integer', 'text'],
      primary_keys: [1],
      foreign_keys: [],
    };
    const long = 'x'.repeat(45);
    const text = renderOmniSqlSchema(
      entry,
      new Map([
        ['t.note text', { values: [`${long}a`.slice(0, 40), `${long}b`.slice(0, 40)], classes: ['text', 'text'] }],
      ]),
    );
    expect(text).toBe(
      `CREATE TABLE t (\n    id integer,\n    \`Note Text\` text, -- example: ['${'x'.repeat(40)}']\n    PRIMARY KEY (id)\n);`,
    );
  });
});
