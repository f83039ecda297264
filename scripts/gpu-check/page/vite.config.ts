/**
 * Production build of the GPU check's page (scripts/gpu-check/run.ts builds it beside the app's
 * own build, served from the same origin): the app's settings that matter to its engine code,
 * i.e. module workers (the sql.js and wllama workers import modules) and the same target.
 */
import { defineConfig } from 'vite';

export default defineConfig({
  base: './',
  worker: { format: 'es' },
  build: { target: 'es2022', sourcemap: false },
});
