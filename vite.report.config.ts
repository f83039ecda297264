/**
 * The offline report's page (report.html, src/report/main.ts) as one HTML file: every script
 * and stylesheet inlined by vite-plugin-singlefile (dynamic imports folded into the one
 * module), no public folder, no service worker. scripts/build-report.mjs runs this build and
 * adds the Content-Security-Policy (docs/report.md); the CLI's `report` command and the app's
 * "Export report" buttons fill the template's data element.
 */
import { svelte } from '@sveltejs/vite-plugin-svelte';
import { defineConfig } from 'vite';
import { viteSingleFile } from 'vite-plugin-singlefile';

export default defineConfig({
  plugins: [svelte(), viteSingleFile({ removeViteModuleLoader: true })],
  base: './',
  publicDir: false,
  build: {
    target: 'es2022',
    sourcemap: false,
    emptyOutDir: true,
    rollupOptions: { input: 'report.html' },
  },
  logLevel: 'warn',
});
