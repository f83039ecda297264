/**
 * The services the app's screens get (ui/context/services.ts), for the offline report: the
 * read-only store over the report's runs, result tables "as far as the run stored them" (the
 * verdicts and row counts; a run keeps no rows, and the report holds no database to re-run
 * them), and no engine, playground or probe (each refuses, naming where it can be done).
 */
import type { ItemResult } from '../core/types.ts';
import type { RunFile } from '../core/run/types.ts';
import { parquetWriter, type ParquetBlobWriter } from '../ui/context/parquet-export.ts';
import type { WorkbenchServices } from '../ui/context/services.ts';
import type { ReportPayload } from '../core/report/payload.ts';
import { previewOf, resultRowsText, type ItemRows } from '../core/report/result-rows.ts';
import { createReportStore, notInReport } from './report-store.ts';
import { createReportSeriesServices, stepRunFiles } from './report-series.ts';

const count = (n: number | null, what: string) =>
  n === null ? `no ${what} result` : `${n.toLocaleString('en')} ${what} ${n === 1 ? 'row' : 'rows'}`;

/** The key of a sample's kept rows. */
const rowsKey = (runId: string, index: number, sample: number) => `${runId}\u0000${index}\u0000${sample}`;

/** `parquetBlob`: the page's Parquet writer (the report's exports are the app's); without it, Parquet downloads are refused. */
export function createReportServices(
  payload: Pick<ReportPayload, 'runs' | 'series' | 'resultRows' | 'seriesSteps' | 'exclusions'>,
  parquetBlob?: ParquetBlobWriter,
): WorkbenchServices {
  const refuse = (what: string) => async (): Promise<never> => {
    throw notInReport(what);
  };
  const kept = payload.resultRows ?? null;
  const rows = new Map<string, ItemRows>(kept?.items.map((r) => [rowsKey(r.runId, r.index, r.sample), r]) ?? []);
  // The report's runs first (they carry the questions' texts), then every step of its training run.
  const runs: RunFile[] = [...payload.runs];
  for (const f of stepRunFiles(payload.series)) if (!runs.some((r) => r.run.id === f.run.id)) runs.push(f);
  return {
    readOnlyReport: true,
    store: createReportStore(runs, [
      ...(payload.series?.series.exclusions?.length
        ? [{ ownerId: payload.series.series.id, list: payload.series.series.exclusions }]
        : []),
      ...(payload.exclusions ?? []),
    ]),
    previews: {
      async preview(run, sample) {
        const result: ItemResult = sample;
        const have = rows.get(rowsKey(run.id, sample.index, sample.sample));
        if (have) return { preview: previewOf(have), result };
        const stored = `The run stored this item's verdict and row counts (${count(sample.predRowCount, 'predicted')}, ${count(sample.goldRowCount, 'gold')}), not the rows`;
        const why = !kept
          ? ": the workbench runs both queries again on the dataset's databases to show them, and this report was made without them."
          : sample.ex === 1
            ? `: this report keeps rows of wrong samples only (${resultRowsText(kept)}).`
            : `: this report's rows (${resultRowsText(kept)}) do not include this sample.`;
        return {
          preview: null,
          result,
          note: `${stored}${why} Import this report into the workbench with the databases to see the rows and their differences.`,
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
    series: createReportSeriesServices(payload.series, payload.seriesSteps ?? []),
    fetchDemoFile: refuse('The demo'),
    parquetBlob: parquetWriter(parquetBlob),
  };
}
