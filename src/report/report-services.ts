/**
 * The services the app's screens get (ui/workbench/services.ts), for the offline report: the
 * read-only store over the report's runs, result tables "as far as the run stored them" (the
 * verdicts and row counts; a run keeps no rows, and the report holds no database to re-run
 * them), and no engine, playground or probe (each refuses, naming where it can be done).
 */
import type { ItemResult } from '../core/types.ts';
import type { RunFile } from '../core/run/types.ts';
import { parquetWriter, type ParquetBlobWriter } from '../ui/workbench/parquet-export.ts';
import type { WorkbenchServices } from '../ui/workbench/services.ts';
import type { SeriesServices } from '../ui/series/series-state.svelte.ts';
import { createReportStore, notInReport } from './report-store.ts';

const count = (n: number | null, what: string) =>
  n === null ? `no ${what} result` : `${n.toLocaleString('en')} ${what} ${n === 1 ? 'row' : 'rows'}`;

/** `parquetBlob`: the page's Parquet writer (the report's exports are the app's); without it, Parquet downloads are refused. */
export function createReportServices(runs: readonly RunFile[], parquetBlob?: ParquetBlobWriter): WorkbenchServices {
  const refuse = (what: string) => async (): Promise<never> => {
    throw notInReport(what);
  };
  return {
    readOnlyReport: true,
    store: createReportStore(runs),
    previews: {
      async preview(_run, sample) {
        const result: ItemResult = sample;
        return {
          preview: null,
          result,
          note:
            `The run stored this item's verdict and row counts (${count(sample.predRowCount, 'predicted')}, ` +
            `${count(sample.goldRowCount, 'gold')}), not the rows: the workbench runs both queries again on the ` +
            "dataset's databases to show them. Import this report into the workbench with the databases to see the rows and their differences.",
        };
      },
      release: async () => undefined,
    },
    playground: { attempt: refuse('The reward playground'), release: async () => undefined },
    probe: { run: refuse('The reward-hacking probe') },
    engines: {
      gguf: refuse('Loading a model'),
      openai: refuse('Loading a model'),
      webllm: refuse('Loading a model'),
      checkWebLlm: refuse('Checking the GPU'),
      recommendGguf: refuse('Checking the machine'),
      webllmModels: {
        customRecord: refuse('Adding a model'),
        preflight: refuse('Adding a model'),
        listCached: refuse('Listing downloaded models'),
        deleteCached: refuse('Deleting a downloaded model'),
        importLocal: refuse('Importing a model'),
      },
    },
    rubricRepositories: refuse('Rubrics'),
    series: reportSeries(refuse),
    fetchDemoFile: refuse('The demo'),
    parquetBlob: parquetWriter(parquetBlob),
  };
}

/**
 * Training runs in the report: its store holds runs, not series (a series given to the CLI's
 * `report --series` is shown by the report's own training-run page, SeriesPanel.svelte). So the
 * app's series screens find none, and everything that would make or read one refuses.
 */
function reportSeries(refuse: (what: string) => () => Promise<never>): SeriesServices {
  const what = 'Training runs of the app';
  return {
    service: {
      list: async () => [],
      ofRun: async () => [],
      trainerScores: async () => null,
      get: refuse(what),
      rename: refuse(what),
      delete: refuse(what),
      stepRule: () => '',
      importDumps: refuse(what),
      addDumps: refuse(what),
      importSeriesFile: refuse(what),
      groupRuns: refuse(what),
      folder: async () => undefined,
      createFollowed: refuse(what),
      follow: refuse(what),
    },
    analysis: {
      seriesView: refuse(what),
      seriesQuestion: refuse(what),
      seriesExport: refuse(what),
      seriesReport: refuse(what),
    },
    folders: {
      canPick: () => false,
      pick: async () => null,
      permission: async () => 'denied' as const,
      ask: async () => 'denied' as const,
      open: () => {
        throw notInReport(what);
      },
    },
  };
}
