/**
 * Browser composition root: the workbench (IndexedDB store, sql.js Web Workers) and the demo
 * run, mounted into index.html. Screens are chosen by the address's hash (#/datasets, #/runs…);
 * the demo page is the default and starts its run the first time it is shown.
 */
import { mount } from 'svelte';
import { createBrowserSqlPool, memoryDbSource } from '../adapters/browser/sql-worker-host.ts';
import { createIdbStore } from '../adapters/store/idb-store.ts';
import { AppUpdate } from './app-update.svelte.ts';
import { createDemoRun, type Phase } from './demo-run.svelte.ts';
import { createPreviewService } from './preview-service.ts';
import { createProbeService } from './probe/probe-service.ts';
import Shell from './Shell.svelte';
import { showTestDoubles, testDoublesFromUrl } from './test-doubles.ts';
import UpdateBanner from './UpdateBanner.svelte';
import './shell/theme.css';

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
const demo = createDemoRun({
  fetchText: async (url) => (await fetchOk(url)).text(),
  fetchBytes: async (url) => new Uint8Array(await (await fetchOk(url)).arrayBuffer()),
  createExecutor: (dbs, workers) => createBrowserSqlPool(memoryDbSource(dbs), workers),
  defaultWorkers: Math.min(4, cores),
  maxWorkers: Math.max(8, cores),
});

const diagnostics: WorkbenchDiagnostics = Object.freeze({
  get phase() {
    return demo.phase;
  },
  get workers() {
    return demo.shownSettings?.workers ?? null;
  },
  get done() {
    return demo.done;
  },
  get total() {
    return demo.total;
  },
});
Object.defineProperty(window, '__workbench', { value: diagnostics, enumerable: false });

// Browser tests may simulate a full disk through the address (shown on the page when active).
const testing = testDoublesFromUrl(location.search);
if (testing) showTestDoubles(testing);
const store = createIdbStore({ testing });
const previews = createPreviewService();

const target = document.getElementById('app');
if (!target) throw new Error('index.html has no #app element');
mount(Shell, { target, props: { services: { store, previews, probe: createProbeService() }, demo, ondemo: () => void demo.run() } });

// Offline use (service worker) and new versions, in their own element beside the shell.
const appUpdate = new AppUpdate(() => store.activeRunIds());
mount(UpdateBanner, { target: document.body.appendChild(document.createElement('div')), props: { update: appUpdate } });
appUpdate.register();
