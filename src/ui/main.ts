/**
 * Browser composition root: the workbench (IndexedDB store, sql.js Web Workers, previews, the
 * reward-hacking probe) mounted into index.html. Screens are chosen by the address's hash
 * (#/datasets, #/runs…); the first page (#/) shows the embedded demo as a stored run, added the
 * first time it is shown (src/ui/home/demo-library.svelte.ts).
 */
import { mount } from 'svelte';
import { createBrowserSqlPool } from '../adapters/browser/sql-worker-host.ts';
import { createBrowserEngineFactory } from '../adapters/engines/engine-factory.ts';
import { browserFolders } from '../adapters/browser/directory-folder.ts';
import { openRubricDb, RubricRepository } from '../adapters/judge/idb-judge-cache.ts';
import { RarRepository } from '../adapters/judge/rar-store.ts';
import { IdbLabelRepository } from '../adapters/judge/label-store.ts';
import { sha256Of } from '../adapters/import/hash-stream.ts';
import { streamGzip } from '../adapters/gzip-stream.ts';
import { parquetBlob } from '../adapters/parquet/write-parquet.ts';
import { createRubricRunService } from '../app/rubric-run-service.ts';
import App from './App.svelte';
import { AppUpdate } from './app-update.svelte.ts';
import { createBrowserStore } from './browser-store.ts';
import { createPreviewService } from '../app/preview-service.ts';
import { createProbeService } from '../app/probe-service.ts';
import { createPlaygroundService } from '../app/playground-service.ts';
import { runExclusions } from '../app/run-exclusions.ts';
import { resultRowsPort } from '../app/report-rows.ts';
import './shell/theme.css';
import { showTestDoubles, testDoublesFromUrl } from './test-doubles.ts';
import UpdateBanner from './UpdateBanner.svelte';
import type { RubricRepositories, WorkbenchServices } from './context/services.ts';
import { createReportExporter, fetchReportTemplate } from './workbench/report-export.ts';
import { WorkbenchError } from '../core/errors.ts';

/** `rlvr-workbench <version>`, from package.json (vite.config.ts defines it). */
declare const __RLVR_PRODUCT__: string;
const PRODUCT = __RLVR_PRODUCT__;

/** The embedded demo's files, relative to the page so that the built app works from any folder. */
async function fetchDemoFile(path: string): Promise<Blob> {
  const url = `./demo/${path}`;
  const res = await fetch(url);
  if (!res.ok)
    throw new WorkbenchError(
      'FAILED',
      `could not load ${url}: HTTP ${res.status} ${res.statusText}; reload the page (or reinstall the app)`,
    );
  return res.blob();
}

// Browser tests may simulate a full disk through the address (shown on the page when active).
const testing = testDoublesFromUrl(location.search);
if (testing) showTestDoubles(testing);
const store = createBrowserStore({ testing });
let rubricsOpen: Promise<RubricRepositories> | null = null;

const services: WorkbenchServices = {
  store,
  previews: createPreviewService({
    dbSource: (run) => store.datasets.source(run.dataset.databases, run.dataset.name),
    createExecutor: (source) => createBrowserSqlPool(source, 1),
  }),
  playground: createPlaygroundService({
    dbSource: (dataset) => store.datasets.source(dataset.databases, dataset.name),
    suiteCache: (dataset) => store.datasets.suiteCache(dataset.databases),
    createExecutor: (source, suiteCache) => createBrowserSqlPool(source, 1, suiteCache),
  }),
  probe: createProbeService({
    dbSource: (dataset) => store.datasets.source(dataset.databases, dataset.name),
    createExecutor: (source) => createBrowserSqlPool(source),
  }),
  engines: createBrowserEngineFactory(),
  rubricRepositories: () =>
    (rubricsOpen ??= openRubricDb()
      .then((db) => {
        const rubrics = new RubricRepository(db);
        const rar = new RarRepository(db);
        const rarRuns = createRubricRunService({
          rar,
          judgeCache: () => rubrics.cache(),
          hashText: sha256Of,
          newId: () => crypto.randomUUID(),
          now: () => new Date().toISOString(),
        });
        return { rubrics, rar, rarRuns, labels: new IdbLabelRepository(db) };
      })
      .catch((err: unknown) => {
        rubricsOpen = null; // a later call tries again
        throw err;
      })),
  series: { service: store.seriesService, analysis: store.seriesAnalysis, folders: browserFolders },
  fetchDemoFile,
  parquetBlob,
  reports: createReportExporter({
    store,
    template: fetchReportTemplate,
    product: `${PRODUCT} (app)`,
    gzip: streamGzip,
    seriesReport: (seriesId, input, resultRows) => store.seriesAnalysis.seriesReport(seriesId, input, { resultRows }),
    // The wrong samples' rows, re-executed as the explorer's result tables are, in a pool of their own.
    resultRows: resultRowsPort({
      dbSource: (run) => store.datasets.source(run.dataset.databases, run.dataset.name),
      createExecutor: (source) => createBrowserSqlPool(source, 2),
    }),
    exclusionsOf: (runId) =>
      runExclusions(
        { exclusions: store.runs.exclusions?.bind(store.runs), seriesOf: (id) => store.seriesService.ofRun(id) },
        runId,
      ),
  }),
};

const target = document.getElementById('app');
if (!target) throw new WorkbenchError('INTERNAL', 'index.html has no #app element');
mount(App, { target, props: { services } });

// Offline use (service worker) and new versions, in their own element beside the app.
const appUpdate = new AppUpdate(() => store.runs.activeIds());
// Before the app: the "ready to work offline" note is a strip above the page, never over its charts.
mount(UpdateBanner, {
  target: document.body.insertBefore(document.createElement('div'), document.body.firstChild),
  props: { update: appUpdate },
});
appUpdate.register();
