/** Browser composition root: the demo run with sql.js Web Workers, mounted into index.html. */
import { mount } from 'svelte';
import { createBrowserSqlPool, memoryDbSource } from '../adapters/browser/sql-worker-host.ts';
import App from './App.svelte';
import { createDemoRun, type Phase } from './demo-run.svelte.ts';

/** Read-only facts for tests and curious users (`window.__workbench` in the console). */
export interface WorkbenchDiagnostics {
  readonly phase: Phase;
  /** Web Workers the run on screen used. */
  readonly workers: number | null;
  readonly done: number;
  readonly total: number;
}

declare global {
  interface Window {
    readonly __workbench?: WorkbenchDiagnostics;
  }
}

async function fetchOk(url: string): Promise<Response> {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`could not load ${url}: HTTP ${res.status} ${res.statusText}`);
  return res;
}

const cores = Math.max(1, navigator.hardwareConcurrency || 2);
const run = createDemoRun({
  fetchText: async (url) => (await fetchOk(url)).text(),
  fetchBytes: async (url) => new Uint8Array(await (await fetchOk(url)).arrayBuffer()),
  createExecutor: (dbs, workers) => createBrowserSqlPool(memoryDbSource(dbs), workers),
  defaultWorkers: Math.min(4, cores),
  maxWorkers: Math.max(8, cores),
});

const diagnostics: WorkbenchDiagnostics = Object.freeze({
  get phase() {
    return run.phase;
  },
  get workers() {
    return run.shownSettings?.workers ?? null;
  },
  get done() {
    return run.done;
  },
  get total() {
    return run.total;
  },
});
Object.defineProperty(window, '__workbench', { value: diagnostics, enumerable: false });

const target = document.getElementById('app');
if (!target) throw new Error('index.html has no #app element');
mount(App, { target, props: { run } });
void run.run();
