declare module 'comlink/dist/esm/node-adapter.mjs' {
  export { default } from 'comlink/dist/esm/node-adapter';
}

/** The version of the sql.js package the app is built with (vite.config.ts `define`): the verdict cache's key names it. */
declare const __SQLJS_VERSION__: string | undefined;
