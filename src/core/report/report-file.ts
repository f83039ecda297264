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
import { packReport, parseReportPayload, REPORT_DATA_ID, type ReportPayload } from './payload.ts';

/** Where the template takes the payload (report.html): replaced by the data element. */
export const REPORT_DATA_PLACEHOLDER = '<!--rlvr-report-data-->';
const DATA_OPEN = `<script type="application/octet-stream" id="${REPORT_DATA_ID}">`;
const DATA_CLOSE = '</script>';

/** Gzip of the host: zlib in Node, CompressionStream / DecompressionStream in a browser or worker. */
export interface GzipPort {
  gzip(text: string): Promise<Uint8Array>;
  gunzip(bytes: Uint8Array): Promise<string>;
}

function occurrences(text: string, part: string): number {
  let n = 0;
  for (let at = text.indexOf(part); at >= 0; at = text.indexOf(part, at + part.length)) n++;
  return n;
}

/** Refuses a template that is not the report page's build (the placeholder once, its CSP meta). */
export function checkReportTemplate(template: string, where: string): void {
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

/** The report's HTML: the template with the payload packed into its data element. */
export async function buildReportHtml(
  template: string,
  payload: ReportPayload,
  gzip: GzipPort,
  where = 'report template',
): Promise<string> {
  checkReportTemplate(template, where);
  const data = base64Encode(await gzip.gzip(JSON.stringify(packReport(payload))));
  // By construction; checked because the HTML's safety rests on it.
  if (!isBase64(data)) throw new WorkbenchError('INTERNAL', 'the packed report data is not base64');
  const at = template.indexOf(REPORT_DATA_PLACEHOLDER);
  return template.slice(0, at) + DATA_OPEN + data + DATA_CLOSE + template.slice(at + REPORT_DATA_PLACEHOLDER.length);
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

/** The payload's JSON text from the data element's base64 (the page's and the import's first step). */
export async function unpackReportData(data: string, gzip: GzipPort, where: string): Promise<string> {
  const bytes = base64Decode(data.trim(), where);
  try {
    return await gzip.gunzip(bytes);
  } catch (err) {
    throw new WorkbenchError(
      'BAD_FORMAT',
      `the report's data is not gzip (the file was cut short or changed): ${errorMessage(err)}`,
      where,
      { cause: err },
    );
  }
}

/** The validated payload of a report file (the app's import); errors name the file. */
export async function readReportFile(text: string, fileName: string, gzip: GzipPort): Promise<ReportPayload> {
  const data = reportDataOf(text);
  if (data === null)
    throw new WorkbenchError(
      'BAD_FORMAT',
      `not a workbench report: no <script type="application/octet-stream" id="${REPORT_DATA_ID}"> element`,
      fileName,
    );
  return parseReportPayload(await unpackReportData(data, gzip, fileName), fileName);
}
