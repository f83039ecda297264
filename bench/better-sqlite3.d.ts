/**
 * The small part of better-sqlite3 12's API that the benchmark's native reference uses
 * (the package ships no types and @types/better-sqlite3 is not a dependency).
 */
declare module 'better-sqlite3' {
  namespace BetterSqlite3 {
    interface Statement {
      readonly reader: boolean;
      raw(toggle?: boolean): this;
      safeIntegers(toggle?: boolean): this;
      all(...params: unknown[]): unknown[];
      get(...params: unknown[]): unknown;
      run(...params: unknown[]): { changes: number; lastInsertRowid: number | bigint };
    }
    interface Database {
      prepare(sql: string): Statement;
      exec(sql: string): this;
      pragma(source: string, options?: { simple?: boolean }): unknown;
      close(): this;
      readonly inTransaction: boolean;
    }
    interface Options {
      readonly?: boolean;
      fileMustExist?: boolean;
    }
  }
  interface BetterSqlite3Constructor {
    new (filenameOrBuffer?: string | Buffer, options?: BetterSqlite3.Options): BetterSqlite3.Database;
  }
  const BetterSqlite3: BetterSqlite3Constructor;
  export default BetterSqlite3;
}
