/**
 * The worker contracts (workers/*.api.ts): each depends only on the core or on the store's
 * records module (so contract and adapters never import each other), each worker body satisfies
 * its contract, and each adapter holds the contract's comlink `Remote`. The type assertions are
 * checked by `npm run check` (tsc over tests/); the import rule at run time.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Remote } from 'comlink';
import { describe, expect, expectTypeOf, it } from 'vitest';
import type { WorkerHandle } from '../../src/adapters/sql-pool.ts';
import type { AnalysisWorkerApi } from '../../workers/analysis.api.ts';
import { createAnalysisEngine } from '../../workers/analysis-engine.ts';
import type { ImportWorkerApi } from '../../workers/import.api.ts';
import { createSqlEngine } from '../../workers/sql-engine.ts';
import type { SqlWorkerApi } from '../../workers/sql.api.ts';
import type { WllamaWorkerApi } from '../../workers/wllama.api.ts';
import type { importInWorker } from '../../src/adapters/browser/import-client.ts';
import type { DatasetRecord } from '../../src/app/records.ts';

const WORKERS = path.resolve(import.meta.dirname, '../../workers');
const contracts = readdirSync(WORKERS).filter((f) => f.endsWith('.api.ts'));

function importsOf(file: string): string[] {
  const text = readFileSync(path.join(WORKERS, file), 'utf8');
  return [...text.matchAll(/from\s+'([^']+)'/g)].map((m) => m[1]!);
}

describe('worker contracts', () => {
  it('exist for the analysis, SQL, import and wllama workers', () => {
    expect(contracts.sort()).toEqual(['analysis.api.ts', 'import.api.ts', 'sql.api.ts', 'wllama.api.ts']);
  });

  it.each(contracts)("%s imports only the core or the app's records, nothing that imports it back", (file) => {
    const bad = importsOf(file).filter((p) => !p.startsWith('../src/core/') && p !== '../src/app/records.ts');
    expect(bad).toEqual([]);
  });

  it('the SQL worker body is its contract, and the pool holds its Remote', () => {
    expectTypeOf(createSqlEngine).returns.toEqualTypeOf<SqlWorkerApi>();
    expectTypeOf<WorkerHandle['api']>().toEqualTypeOf<Remote<SqlWorkerApi>>();
    expect(typeof createSqlEngine).toBe('function');
  });

  it('the import worker answers with plain outcomes that the client unwraps into records', () => {
    expectTypeOf<Awaited<ReturnType<ImportWorkerApi['importDataset']>>>().toEqualTypeOf<
      { ok: true; value: DatasetRecord } | { ok: false; error: import('../../src/core/errors.ts').ErrorData }
    >();
    expectTypeOf<Awaited<ReturnType<typeof importInWorker>>>().toEqualTypeOf<DatasetRecord>();
    expect(importsOf('import.api.ts')).toContain('../src/app/records.ts');
  });

  it('the wllama worker replies with engine error data, never thrown objects', () => {
    expectTypeOf<Awaited<ReturnType<WllamaWorkerApi['countTokens']>>>().toEqualTypeOf<
      | { ok: true; value: number }
      | { ok: false; error: import('../../src/core/engine/engine-error.ts').EngineErrorData }
    >();
    expect(importsOf('wllama.api.ts').every((p) => p.startsWith('../src/core/'))).toBe(true);
  });

  it('the analysis worker body is its contract and returns prompts without sample records', () => {
    expectTypeOf(createAnalysisEngine).returns.toEqualTypeOf<AnalysisWorkerApi>();
    expectTypeOf<
      Extract<Awaited<ReturnType<AnalysisWorkerApi['runStats']>>, { ok: true }>['value']['prompts'][number]
    >().not.toHaveProperty('samples');
    expect(typeof createAnalysisEngine).toBe('function');
  });
});
