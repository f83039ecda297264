/**
 * The app's "Export report" (docs/report.md): stored runs as one offline HTML file, built by the
 * same builder as the CLI's `report` command (core/report/report-file.ts) into the report
 * template that the app's build serves beside it (report-template.html). The runs are the run
 * files the Runs page would export, with the questions' texts from their dataset while it is
 * stored; the report's import stores them back exactly as those run files would be. A training
 * run's report is built by the analysis worker, which holds the series (every step's samples):
 * the page gets the finished HTML as a Blob and only downloads it.
 */
import type { SeriesReportInput } from '../../app/records.ts';
import type { WorkbenchStore } from '../../app/store-ports.ts';
import { errorMessage, WorkbenchError } from '../../core/errors.ts';
import { reportPayload, withQuestionTexts, type ReportInput } from '../../core/report/payload.ts';
import { buildReportHtml, type GzipPort } from '../../core/report/report-file.ts';
import type { RunFile } from '../../core/run/types.ts';
import type { Exclusion } from '../../core/eval/exclusions.ts';
import type { ResultRows, ResultRowsBudget } from '../../core/report/result-rows.ts';
import { reportResultRows, type ResultRowsPort } from '../../app/report-rows.ts';
import { downloadBlob, downloadText, safeFileName } from '../shell/download.ts';
import type { ReportExporter } from '../context/services.ts';

interface ReportExportPorts {
  store: Pick<WorkbenchStore, 'runs' | 'datasets'>;
  /** The report template's text (the single-file build of report.html). */
  template(): Promise<string>;
  /** `rlvr-workbench 0.1.0 (app)`. */
  product: string;
  /** Compresses the report's data (the platform's CompressionStream in the browser). */
  gzip: GzipPort;
  /**
   * A stored training run's report, built off the page (the analysis worker: every step as its
   * "series file (share)" export holds it, the last step's run as the report's run). The worker
   * hands `resultRows` the wrong samples of every step and puts the rows it answers in the report.
   */
  seriesReport?(
    seriesId: string,
    input: SeriesReportInput,
    resultRows: (runs: RunFile[]) => Promise<ResultRows | null>,
  ): Promise<{ name: string; html: Blob }>;
  /**
   * The result rows of the wrong samples, re-executed on the run's stored databases as the
   * explorer's result tables are (app/report-rows.ts): `rows` runs one sample, `release`
   * frees its worker once the report has them. Absent: the report keeps no rows.
   */
  resultRows?: ResultRowsPort;
  /** What is excluded from a stored run's metrics (app/run-exclusions.ts); absent: the report lists none. */
  exclusionsOf?(runId: string): Promise<Exclusion[]>;
  /** The rows' budget (tests pass small ones). */
  rowsBudget?: ResultRowsBudget;
}

/**
 * The rows of the wrong samples of `runs` within the budget; null when they cannot be had (the
 * dataset's databases are no longer stored): the report is made without them and says so.
 */
function rowsOf(ports: ReportExportPorts, runs: readonly RunFile[]): Promise<ResultRows | null> {
  return reportResultRows(runs, ports.resultRows, ports.rowsBudget);
}

/** The run file with its questions' texts, when its dataset is still stored. */
async function withQuestions(store: ReportExportPorts['store'], file: RunFile): Promise<RunFile> {
  if (file.questions) return file;
  return withQuestionTexts(file, (await store.datasets.get(file.run.dataset.id))?.questions);
}

export function createReportExporter(ports: ReportExportPorts): ReportExporter {
  const save = async (input: Omit<ReportInput, 'product' | 'createdAt'>, name: string): Promise<string | null> => {
    try {
      const template = await ports.template();
      const payload = reportPayload({ ...input, product: ports.product, createdAt: new Date().toISOString() });
      const html = await buildReportHtml(template, payload, ports.gzip);
      downloadText(`${name}.report.html`, html, 'text/html');
      return null;
    } catch (err) {
      return `The report could not be made: ${errorMessage(err)}`;
    }
  };
  return {
    async download(runIds) {
      let runs: RunFile[];
      try {
        runs = await Promise.all(
          runIds.map(async (id) => withQuestions(ports.store, await ports.store.runs.export(id))),
        );
      } catch (err) {
        return `The report could not be made: ${errorMessage(err)}`;
      }
      let exclusions;
      try {
        exclusions = await Promise.all(
          runs.map(async (f) => ({ ownerId: f.run.id, list: (await ports.exclusionsOf?.(f.run.id)) ?? [] })),
        );
      } catch (err) {
        return `The report could not be made: the run's excluded questions could not be read: ${errorMessage(err)}`;
      }
      const resultRows = await rowsOf(ports, runs);
      return save(
        { runs, compare: runs.length > 1, resultRows, exclusions },
        runs.map((f) => safeFileName(f.run.name)).join('-vs-'),
      );
    },
    async downloadSeries(seriesId) {
      try {
        if (!ports.seriesReport) throw new WorkbenchError('UNSUPPORTED', 'this app was built without training runs');
        const { name, html } = await ports.seriesReport(
          seriesId,
          { template: await ports.template(), product: ports.product, createdAt: new Date().toISOString() },
          (runs) => rowsOf(ports, runs),
        );
        downloadBlob(`${safeFileName(name)}.report.html`, html);
        return null;
      } catch (err) {
        return `The report could not be made: ${errorMessage(err)}`;
      }
    },
  };
}

/** The template beside the app (its build copies it there, vite.config.ts), fetched from the app's own origin. */
export async function fetchReportTemplate(url = './report-template.html'): Promise<string> {
  const res = await fetch(url);
  if (!res.ok)
    throw new WorkbenchError(
      'FAILED',
      `the report template ${url} could not be loaded: HTTP ${res.status} ${res.statusText}; reload the app (or rebuild it)`,
    );
  return res.text();
}
