declare module 'comlink/dist/esm/node-adapter.mjs' {
  export { default } from 'comlink/dist/esm/node-adapter';
}

/** sql.js 1.8.0 under the npm alias `sql.js-1.8` (workers/sql-legacy.worker.ts): the same API as sql.js. */
declare module 'sql.js-1.8' {
  import initSqlJs from 'sql.js';
  export default initSqlJs;
}

/** The version of the sql.js package the app is built with (vite.config.ts `define`): the verdict cache's key names it. */
declare const __SQLJS_VERSION__: string | undefined;
