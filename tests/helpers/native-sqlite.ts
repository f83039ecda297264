/**
 * Native SQLite (better-sqlite3, a dev dependency) for tests that need files SQLite itself
 * wrote: WAL databases, hot journals, large synthetic tables. Loaded through require with the
 * small typed surface used here, since the package ships no types.
 */
import { createRequire } from 'node:module';

export interface NativeStatement {
  run(...params: unknown[]): unknown;
  get(...params: unknown[]): unknown;
}

export interface NativeDb {
  exec(sql: string): NativeDb;
  prepare(sql: string): NativeStatement;
  pragma(source: string): unknown;
  transaction<F extends (...args: never[]) => void>(fn: F): F;
  close(): void;
}

export const NativeDatabase = createRequire(import.meta.url)('better-sqlite3') as new (file: string) => NativeDb;
