import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseDescriptionFile, parseDescriptions } from '../../src/core/prompt/bird-descriptions.ts';
import { sharedData } from '../helpers/shared-data.ts';

const file = (name: string, text: string | Uint8Array) => ({
  name,
  bytes: typeof text === 'string' ? new TextEncoder().encode(text) : text,
});
const real = (db: string, table: string) => {
  const bytes = new Uint8Array(
    readFileSync(sharedData('bird', 'databases', db, 'database_description', `${table}.csv`)),
  );
  return parseDescriptionFile({ name: `${table}.csv`, bytes });
};

describe('BIRD description files', () => {
  it('reads the Windows-1252 budget.csv of student_club with its multi-line quoted values', () => {
    const d = real('student_club', 'budget');
    expect(d.encoding).toBe('windows-1252');
    expect(d.table).toBe('budget');
    expect(d.columns.map((c) => c.column)).toEqual([
      'budget_id',
      'category',
      'spent',
      'remaining',
      'amount',
      'event_status',
      'link_to_event',
    ]);
    const status = d.columns.find((c) => c.column === 'event_status')!;
    expect(status.fullName).toBe('event status');
    expect(status.valueDescription).toMatch(
      /^Closed \/ Open\/ Planning commonsense evidence: • Closed: It means that the event is closed\./,
    );
  });

  it('reads the CRLF attendance.csv and the mis-encoded bullets of toxicology atom.csv', () => {
    expect(real('student_club', 'attendance').columns.map((c) => c.column)).toEqual([
      'link_to_event',
      'link_to_member',
    ]);
    const atom = real('toxicology', 'atom');
    expect(atom.columns.find((c) => c.column === 'element')!.valueDescription).toContain('• cl: chlorine • c: carbon');
  });

  it('reads doubled quotes in superhero.csv', () => {
    const full = real('superhero', 'superhero').columns.find((c) => c.column === 'full_name')!;
    expect(full.valueDescription).toContain('someone\'s given name is "John" and their surname is "Smith,"');
  });

  it('finds columns by header name, whatever the order, case, spaces and BOM', () => {
    const d = parseDescriptionFile(
      file('T.csv', '\uFEFF Column_Description ,Original_Column_Name,value_description\nthe id, id ,\n,empty,\n'),
    );
    expect(d.table).toBe('T');
    expect(d.columns).toEqual([
      { column: 'id', fullName: '', description: 'the id', format: '', valueDescription: '' },
      { column: 'empty', fullName: '', description: '', format: '', valueDescription: '' },
    ]);
  });

  it('reads a file without a header by position', () => {
    const d = parseDescriptionFile(file('t.csv', 'a,A,first,text,x\n'));
    expect(d.columns[0]).toEqual({
      column: 'a',
      fullName: 'A',
      description: 'first',
      format: 'text',
      valueDescription: 'x',
    });
  });

  it('keys tables by lower-cased file name and ignores other files', () => {
    const m = parseDescriptions([
      file('Player.csv', 'original_column_name,column_description\nid,x\n'),
      file('notes.txt', 'x'),
    ]);
    expect([...m.keys()]).toEqual(['player']);
  });
});
