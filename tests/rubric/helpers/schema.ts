/** Schemas of the real BIRD databases, read with sql.js from the .sqlite files (test side). */
import { readFileSync } from 'node:fs';
import initSqlJs from 'sql.js';
import type { Schema } from '../../../src/core/rubric/sql-checks.ts';
import { sharedData } from '../../helpers/shared-data.ts';

export const BIRD_DBS_HERE = ['student_club', 'superhero', 'toxicology'] as const;

export async function readBirdSchema(dbId: string): Promise<Schema> {
  const SQL = await initSqlJs();
  const db = new SQL.Database(readFileSync(sharedData('bird', 'databases', dbId, `${dbId}.sqlite`)));
  try {
    const schema: Record<string, string[]> = {};
    const tables = db
      .exec("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")[0]!
      .values.map((r) => String(r[0]));
    for (const t of tables) {
      const info = db.exec(`SELECT name FROM pragma_table_info(${JSON.stringify(t).replace(/^"|"$/g, "'")})`)[0];
      schema[t] = info ? info.values.map((r) => String(r[0])) : [];
    }
    return schema;
  } finally {
    db.close();
  }
}
