/**
 * The SQL worker's body (workers/sql-engine.ts) in-process on real sql.js, over one database
 * built from a schema script: a new engine per test with the pristine database loaded, and the
 * database loaded again whenever the engine asks for it.
 */
import initSqlJs from 'sql.js';
import { beforeAll, beforeEach } from 'vitest';
import { createSqlEngine } from '../../workers/sql-engine.ts';
import type { ExecDone, ExecRequest, SqlWorkerApi } from '../../workers/sql.api.ts';

export interface SqlEngineFixture {
  /** The running test's engine. */
  readonly engine: SqlWorkerApi;
  /** The database file as the schema built it (tests load copies). */
  readonly pristine: Uint8Array;
  /** One prediction against one gold on the database, with the fixture's request defaults. */
  run(predSql: string, goldSql: string, extra?: Partial<ExecRequest>): Promise<ExecDone>;
}

/** Registers the fixture's beforeAll / beforeEach hooks in the calling test file. */
export function sqlEngineFixture(
  dbId: string,
  schema: string,
  defaults: Pick<ExecRequest, 'softF1' | 'previewRows'>,
): SqlEngineFixture {
  let engine: SqlWorkerApi;
  let pristine: Uint8Array;
  beforeAll(async () => {
    const SQL = await initSqlJs();
    const db = new SQL.Database();
    db.exec(schema);
    pristine = db.export();
    db.close();
  });
  beforeEach(async () => {
    engine = createSqlEngine(() => initSqlJs());
    await engine.init({ cacheBytes: 64 * 1024 * 1024 });
    await engine.loadDb(dbId, pristine.slice());
  });
  return {
    get engine() {
      return engine;
    },
    get pristine() {
      return pristine;
    },
    async run(predSql, goldSql, extra = {}) {
      const req: ExecRequest = { dbId, predSql, goldSql, readOnly: false, ...defaults, ...extra };
      let r = await engine.evaluate(req);
      if (r.kind === 'need-db') {
        await engine.loadDb(dbId, pristine.slice());
        r = await engine.evaluate(req);
      }
      if (r.kind !== 'done') throw new Error('database not loaded');
      return r;
    },
  };
}
