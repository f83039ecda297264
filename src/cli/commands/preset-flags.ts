/**
 * `--preset ID` and `--tables FILE`, shared by `generate`, `batch export` / `batch import` and
 * `harness`: the preset by id (an unknown id names the presets), the dataset's tables.json that
 * OmniSQL's schema renderer needs (found beside the questions when not given), and the schema
 * text of each database as the preset renders it, read by one SQL worker of its own.
 */
import { stat } from 'node:fs/promises';
import path from 'node:path';
import type { NodeHost } from '../node-host.ts';
import { WorkbenchError, errorMessage } from '../../core/errors.ts';
import type { BirdTablesEntry } from '../../core/prompt/omnisql-schema.ts';
import { renderPresetSchema } from '../../core/prompt/preset-schema.ts';
import { requirePreset, type PolicyPreset } from '../../core/prompt/presets.ts';
import { bad } from '../flags.ts';
import { readText } from './tabular-input.ts';

/** The preset named by `--preset`; an unknown id is a BAD_OPTION naming the flag and the presets. */
export function presetFlag(id: string): PolicyPreset {
  try {
    return requirePreset(id);
  } catch (err) {
    throw bad('--preset', errorMessage(err));
  }
}

/** Whether the preset renders its schema from the dataset's tables.json (OmniSQL's renderer). */
export const needsTables = (preset: PolicyPreset): boolean => preset.schema.renderer === 'omnisql-ddl';

/** The dataset's tables.json: --tables, else dev_tables.json beside --dataset or in the folder above --db-root. */
export async function tablesFile(
  preset: PolicyPreset,
  args: { tables: string | null; dataset: string; dbRoot: string },
): Promise<string> {
  if (args.tables) return args.tables;
  const candidates = [
    path.join(path.dirname(args.dataset), 'dev_tables.json'),
    path.join(path.dirname(path.resolve(args.dbRoot)), 'dev_tables.json'),
  ];
  for (const c of candidates) if ((await stat(c).catch(() => null))?.isFile()) return c;
  throw bad(
    '--tables',
    `preset ${preset.id} renders the schema from the dataset's tables.json (OmniSQL's column comments and types), ` +
      `and none was found (looked for ${candidates.join(' and ')}): give it with --tables FILE (BIRD: dev_tables.json)`,
  );
}

export async function readTables(file: string): Promise<BirdTablesEntry[]> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readText('--tables', file));
  } catch (err) {
    if (err instanceof WorkbenchError) throw err;
    throw bad('--tables', `${file} is not JSON (${errorMessage(err)}): give the dataset's tables.json`);
  }
  const ok = (e: unknown): e is BirdTablesEntry =>
    typeof e === 'object' &&
    e !== null &&
    typeof (e as BirdTablesEntry).db_id === 'string' &&
    Array.isArray((e as BirdTablesEntry).table_names_original) &&
    Array.isArray((e as BirdTablesEntry).column_names_original) &&
    Array.isArray((e as BirdTablesEntry).column_names) &&
    Array.isArray((e as BirdTablesEntry).column_types);
  if (!Array.isArray(parsed) || !parsed.every(ok))
    throw bad(
      '--tables',
      `${file} is not a tables.json (a list of databases with db_id, table_names_original, column_names_original, column_names, column_types): give the dataset's tables.json`,
    );
  return parsed;
}

/** Refuses a tables.json that has no entry for one of the run's databases, naming it. */
export function checkTablesCover(
  preset: PolicyPreset,
  entries: readonly BirdTablesEntry[],
  tables: string,
  dbIds: Iterable<string>,
): void {
  for (const dbId of dbIds) {
    if (!entries.some((e) => e.db_id === dbId))
      throw bad(
        '--tables',
        `preset ${preset.id} renders the schema of database "${dbId}" from the tables.json, and ${tables} has no entry for it: ` +
          'give the tables.json that belongs to the questions (BIRD: dev_tables.json) with --tables FILE',
      );
  }
}

export interface PresetSchemas {
  /** The schema text of a database as the preset renders it, rendered once per database. */
  schema(dbId: string): Promise<string>;
  dispose(): void;
}

/** The schema texts of the databases under `dbRoot`, read by one SQL worker of their own. */
export async function openPresetSchemas(
  host: NodeHost,
  preset: PolicyPreset,
  dbRoot: string,
  entries: readonly BirdTablesEntry[],
): Promise<PresetSchemas> {
  const reader = await host.sql.openSchemaReader(dbRoot, { descriptions: false });
  const { source: schemaSource, query } = reader;
  const schemas = new Map<string, Promise<string>>();
  return {
    schema(dbId) {
      let s = schemas.get(dbId);
      if (!s) {
        s = renderPresetSchema(preset, dbId, {
          schemaSource,
          query,
          tablesEntry: (id) => entries.find((e) => e.db_id === id),
        }).catch((err: unknown) => {
          throw new WorkbenchError(
            'FAILED',
            `preset ${preset.id}: the schema of database "${dbId}" could not be rendered (${errorMessage(err)})`,
            '--db-root',
          );
        });
        schemas.set(dbId, s);
      }
      return s;
    },
    dispose: () => reader.dispose(),
  };
}
