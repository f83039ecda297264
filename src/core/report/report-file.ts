/**
 * The offline report as one HTML file (docs/report.md): the report page's template (the
 * single-file build of report.html: its script, styles and Content-Security-Policy inlined)
 * with the payload, gzip-compressed and base64-encoded, in a non-executable
 * `<script type="application/octet-stream">` element at the end of the body. The one builder of
 * the CLI's `report` command and the app's "Export report" buttons, and the one reader of the
 * app's import. Gzip is the host's (zlib in Node, CompressionStream in a browser).
 *
 * Nothing from a run is written into the HTML as text: the payload's only characters are
 * base64's (A-Z a-z 0-9 + / =), so no run content (`</script>`, `<!--`, quotes) can end the
 * element early or become markup; the page renders every string as text.
 */
import { errorMessage, WorkbenchError } from '../errors.ts';
import { base64Decode, base64Encode, isBase64 } from '../util/base64.ts';
import {
  cutLongTexts,
  fmtBytes,
  inflationLimit,
  REPORT_LIMITS,
  utf8Length,
  type ReportLimits,
  type TextsCut,
} from './limits.ts';
import { packReport, parseReportPayload, REPORT_DATA_ID, type ReportPayload } from './payload.ts';

/** Where the template takes the payload (report.html): replaced by the data element. */
export const REPORT_DATA_PLACEHOLDER = '<!--rlvr-report-data-->';
const DATA_OPEN = `<script type="application/octet-stream" id="${REPORT_DATA_ID}">`;
const DATA_CLOSE = '</script>';

/**
 * Gzip of the host: zlib in Node, CompressionStream / DecompressionStream in a browser or worker.
 * `gunzip` stops as soon as the inflated bytes pass `maxBytes` (when given) and throws
 * `InflationLimitError` then: nothing past the bound is held in memory.
 */
export interface GzipPort {
  gzip(text: string): Promise<Uint8Array>;
  gunzip(bytes: Uint8Array, maxBytes?: number): Promise<string>;
}

/** Thrown by a `GzipPort.gunzip` whose output passed its `maxBytes`. */
export class InflationLimitError extends WorkbenchError {
  constructor(readonly maxBytes: number) {
    super('TOO_LARGE', `the data inflates to more than ${maxBytes} bytes`);
  }
}

function occurrences(text: string, part: string): number {
  let n = 0;
  for (let at = text.indexOf(part); at >= 0; at = text.indexOf(part, at + part.length)) n++;
  return n;
}

/** Refuses a template that is not the report page's build (the placeholder once, its CSP meta). */
function checkReportTemplate(template: string, where: string): void {
  const count = occurrences(template, REPORT_DATA_PLACEHOLDER);
  if (count !== 1)
    throw new WorkbenchError(
      'INTERNAL',
      `the report template must hold ${REPORT_DATA_PLACEHOLDER} once, found ${count}: rebuild it (npm run build:cli)`,
      where,
    );
  if (!/<meta http-equiv="Content-Security-Policy" content="default-src 'none';/.test(template))
    throw new WorkbenchError(
      'INTERNAL',
      "the report template has no Content-Security-Policy starting default-src 'none': rebuild it (npm run build:cli)",
      where,
    );
}

/** A report's HTML, and how many of its texts were cut to the bound (`cut`, null when none). */
interface BuiltReport {
  html: string;
  cut: TextsCut | null;
}

/**
 * The report's HTML: the template with the payload packed into its data element. Every text
 * longer than `limits.textChars` is cut with a marker ("… (N characters more)") and the payload
 * says how many were (`textsCut`); data that the readers would refuse (past `dataBytes`, or
 * compressed past the ratio) and HTML past `htmlBytes` are refused here, before anything is
 * written, so every report made can be read back.
 */
export async function buildReport(
  template: string,
  payload: ReportPayload,
  gzip: GzipPort,
  where = 'report template',
  limits: ReportLimits = REPORT_LIMITS,
): Promise<BuiltReport> {
  checkReportTemplate(template, where);
  const counter = { count: 0 };
  const bounded = cutLongTexts(
    { runs: payload.runs, series: payload.series, ...(payload.resultRows ? { resultRows: payload.resultRows } : {}) },
    limits.textChars,
    counter,
  );
  const cut = counter.count > 0 ? { count: counter.count, maxChars: limits.textChars } : null;
  const htmlBytes = utf8Length(template) - REPORT_DATA_PLACEHOLDER.length + DATA_OPEN.length + DATA_CLOSE.length;
  // `textsCut` only when a text was cut: a report whose texts are whole is the payload as packed.
  const json = JSON.stringify(
    packReport({ ...payload, ...bounded, ...(cut ? { textsCut: cut } : {}), shellBytes: htmlBytes }),
  );
  const fewer = 'make a report of fewer samples (a run of fewer questions or samples, without --compare or --series)';
  const dataBytes = utf8Length(json);
  if (dataBytes > limits.dataBytes)
    throw new WorkbenchError(
      'TOO_LARGE',
      `the report's data would be ${fmtBytes(dataBytes)}, more than the ${fmtBytes(limits.dataBytes)} a report may carry: ${fewer}`,
    );
  const zipped = await gzip.gzip(json);
  if (dataBytes > inflationLimit(zipped.length, limits))
    throw new WorkbenchError(
      'TOO_LARGE',
      `the report's data would compress ${fmtBytes(dataBytes)} to ${fmtBytes(zipped.length)}, more than the ${limits.ratio} to 1 that reading a report back allows: ${fewer}`,
    );
  const total = htmlBytes + 4 * Math.ceil(zipped.length / 3);
  if (total > limits.htmlBytes)
    throw new WorkbenchError(
      'TOO_LARGE',
      `the report would be ${fmtBytes(total)}, more than the ${fmtBytes(limits.htmlBytes)} a report may be: ${fewer}`,
    );
  const data = base64Encode(zipped);
  // By construction; checked because the HTML's safety rests on it.
  if (!isBase64(data)) throw new WorkbenchError('INTERNAL', 'the packed report data is not base64');
  const at = template.indexOf(REPORT_DATA_PLACEHOLDER);
  const html =
    template.slice(0, at) + DATA_OPEN + data + DATA_CLOSE + template.slice(at + REPORT_DATA_PLACEHOLDER.length);
  return { html, cut };
}

/** The report's HTML (`buildReport`'s). */
export async function buildReportHtml(
  template: string,
  payload: ReportPayload,
  gzip: GzipPort,
  where = 'report template',
  limits: ReportLimits = REPORT_LIMITS,
): Promise<string> {
  return (await buildReport(template, payload, gzip, where, limits)).html;
}

/** The packed payload (base64) of a report's HTML; null when `text` is not a workbench report. */
export function reportDataOf(text: string): string | null {
  const head = text
    .slice(0, 200)
    .replace(/^\uFEFF/, '')
    .trimStart()
    .toLowerCase();
  if (!head.startsWith('<!doctype html')) return null;
  // The data element is the page's last: run content never reaches the HTML as text.
  const open = text.lastIndexOf(DATA_OPEN);
  if (open < 0) return null;
  const from = open + DATA_OPEN.length;
  const close = text.indexOf(DATA_CLOSE, from);
  return close < 0 ? text.slice(from) : text.slice(from, close);
}

/** True when `text` looks like a workbench report (an HTML page with the report's data element). */
export function isReportHtml(text: string): boolean {
  return reportDataOf(text) !== null;
}

/**
 * The payload's JSON text from the data's gzip bytes, inflated within bounds: at most
 * `limits.ratio` times the compressed bytes once past `limits.ratioFloorBytes`, and never past
 * `limits.dataBytes` (the rule of the zips: a report of a few MB cannot become gigabytes).
 */
export async function gunzipReportData(
  bytes: Uint8Array,
  gzip: GzipPort,
  where: string,
  limits: ReportLimits = REPORT_LIMITS,
): Promise<string> {
  const max = inflationLimit(bytes.length, limits);
  try {
    return await gzip.gunzip(bytes, max);
  } catch (err) {
    if (err instanceof InflationLimitError) {
      const why =
        max >= limits.dataBytes
          ? `the ${fmtBytes(limits.dataBytes)} a report may carry`
          : `${limits.ratio} to 1 past ${fmtBytes(limits.ratioFloorBytes)}, which no report the workbench makes reaches: it looks like a gzip bomb`;
      throw new WorkbenchError(
        'TOO_LARGE',
        `the report's data inflates ${fmtBytes(bytes.length)} to more than ${fmtBytes(max)} (${why}); nothing was read: make the report again (the CLI's report command, or Export report in the app)`,
        where,
        { cause: err },
      );
    }
    throw new WorkbenchError(
      'BAD_FORMAT',
      `the report's data is not gzip (the file was cut short or changed): ${errorMessage(err)}`,
      where,
      { cause: err },
    );
  }
}

/** The payload's JSON text from the data element's base64 (the page's and the import's first step). */
export async function unpackReportData(
  data: string,
  gzip: GzipPort,
  where: string,
  limits: ReportLimits = REPORT_LIMITS,
): Promise<string> {
  return gunzipReportData(base64Decode(data.trim(), where), gzip, where, limits);
}

/** The validated payload of a report file (the app's import); errors name the file. */
export async function readReportFile(
  text: string,
  fileName: string,
  gzip: GzipPort,
  limits: ReportLimits = REPORT_LIMITS,
): Promise<ReportPayload> {
  const data = reportDataOf(text);
  if (data === null)
    throw new WorkbenchError(
      'BAD_FORMAT',
      `not a workbench report: no <script type="application/octet-stream" id="${REPORT_DATA_ID}"> element`,
      fileName,
    );
  return parseReportPayload(await unpackReportData(data, gzip, fileName, limits), fileName);
}
