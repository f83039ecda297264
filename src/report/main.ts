/**
 * The offline report's composition root (report.html; docs/report.md): reads the payload the
 * builder packed into the page (base64 of gzip, core/report/report-file.ts), decodes it with
 * the platform's DecompressionStream, and mounts the app's own screens over a read-only store
 * of the report's runs. No request leaves the page: the file's Content-Security-Policy allows
 * none, and nothing here asks for one.
 */
import { mount } from 'svelte';
import { streamGzip } from '../adapters/gzip-stream.ts';
import { parquetBlob } from '../adapters/parquet/write-parquet.ts';
import { errorMessage, WorkbenchError } from '../core/errors.ts';
import { openReportPayload, REPORT_DATA_ID, type ReportPayload } from '../core/report/payload.ts';
import { gunzipReportData } from '../core/report/report-file.ts';
import { base64Decode } from '../core/util/base64.ts';
import '../ui/shell/theme.css';
import { createReportServices } from './report-services.ts';
import { landingHash } from './report-routes.ts';
import ReportApp from './ReportApp.svelte';

async function readPayload(): Promise<ReportPayload> {
  performance.mark('report-start');
  const el = document.getElementById(REPORT_DATA_ID);
  if (!el)
    throw new WorkbenchError(
      'BAD_FORMAT',
      'this page carries no report data (it is the report template itself, or the file was cut short)',
    );
  const text = (el.textContent ?? '').trim();
  performance.mark('report-text');
  // Chromium 140+ and Firefox 133+ decode natively; the core's decoder otherwise.
  const bytes = Uint8Array.fromBase64 ? Uint8Array.fromBase64(text) : base64Decode(text, 'the report data');
  performance.mark('report-decoded');
  // Inflated within the bounds every reader of a report keeps (core/report/limits.ts).
  const json = await gunzipReportData(bytes, streamGzip, 'the report data');
  performance.mark('report-unzipped');
  const payload = openReportPayload(json, 'the report data');
  performance.mark('report-parsed');
  return payload;
}

const target = document.getElementById('app');
if (!target) throw new WorkbenchError('INTERNAL', 'report.html has no #app element');
try {
  const payload = await readPayload();
  if (location.hash === '' || location.hash === '#' || location.hash === '#/')
    history.replaceState(null, '', landingHash(payload));
  target.textContent = '';
  mount(ReportApp, {
    target,
    props: { services: createReportServices(payload, parquetBlob), payload },
  });
} catch (err) {
  const p = document.createElement('p');
  p.className = 'alert';
  p.setAttribute('role', 'alert');
  p.dataset.testid = 'report-error';
  p.textContent = `This report could not be opened: ${errorMessage(err)}`;
  target.replaceChildren(p);
}
