/**
 * The schema text of a database as a preset renders it: BIRD's CREATE TABLE statements
 * (render-schema.ts) or OmniSQL's DDL with comments and example values (omnisql-schema.ts).
 * Render once per database and preset; every question of the database shares it.
 */
import { loadDatabaseContext } from './build-prompt.ts';
import { loadOmniSqlValues, renderOmniSqlSchema, type BirdTablesEntry, type ReadOnlyQuery } from './omnisql-schema.ts';
import type { PolicyPreset } from './presets.ts';
import { hasDescriptions, renderSchema, type TableParts } from './render-schema.ts';
import type { SchemaSource } from './schema-source.ts';
import { WorkbenchError } from '../errors.ts';

export interface PresetSchemaSources {
  /** Tables and sample rows (bird-create-table). */
  schemaSource: SchemaSource;
  /** Read-only queries on the database (omnisql-ddl's example values). */
  query: ReadOnlyQuery;
  /** The database's entry of the dataset's tables.json (omnisql-ddl), undefined when there is none. */
  tablesEntry(dbId: string): BirdTablesEntry | undefined;
}

export async function renderPresetSchema(
  preset: PolicyPreset,
  dbId: string,
  sources: PresetSchemaSources,
): Promise<string> {
  const spec = preset.schema;
  if (spec.renderer === 'bird-create-table') {
    const db = await loadDatabaseContext(sources.schemaSource, dbId, {
      sampleRows: spec.sampleRows,
      descriptions: spec.descriptions,
    });
    const parts = new Map<string, TableParts>(
      db.tables.map((t) => [
        t.name,
        { rows: t.sample ? spec.sampleRows : 0, descriptions: spec.descriptions && hasDescriptions(t) },
      ]),
    );
    return renderSchema(db.tables, parts);
  }
  const entry = sources.tablesEntry(dbId);
  if (!entry) {
    throw new WorkbenchError(
      'NOT_FOUND',
      `preset ${preset.id} renders the schema from the dataset's tables.json (column comments and types), ` +
        `but it has no entry for database "${dbId}": load the tables.json that belongs to the questions (BIRD: dev_tables.json)`,
    );
  }
  return renderOmniSqlSchema(entry, await loadOmniSqlValues(sources.query, entry, spec.valueLimit));
}
