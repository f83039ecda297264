/**
 * What the Runs page's import stores: a run file (or an `eval --out` report) as one run, or an
 * offline report (core/report, docs/report.md) as the run files it carries, each stored exactly
 * as the run file itself would be (storeRunFile). A report's run already stored is left as it is
 * (a comparison exported from this browser holds runs it has); when every run of the report is
 * already stored, the import fails naming them.
 */
import { isStoreError, StoreError } from '../../app/store-errors.ts';
import { storeRunFile } from './run-file-store.ts';
import type { WorkbenchIdb } from './schema.ts';
import { isReportHtml, readReportFile } from '../../core/report/report-file.ts';
import type { RunHeader } from '../../core/run/types.ts';
import { streamGzip } from '../gzip-stream.ts';

/** Stores the runs of an uploaded file; returns the runs stored. */
export async function storeRunUpload(idb: WorkbenchIdb, text: string, fileName: string): Promise<RunHeader[]> {
  if (!isReportHtml(text)) return [await storeRunFile(idb, text, fileName)];
  const report = await readReportFile(text, fileName, streamGzip);
  const stored: RunHeader[] = [];
  const already: string[] = [];
  for (const [i, file] of report.runs.entries()) {
    try {
      stored.push(await storeRunFile(idb, JSON.stringify(file), `${fileName} runs[${i}]`));
    } catch (err) {
      if (!(isStoreError(err) && err.code === 'ALREADY_EXISTS')) throw err;
      already.push(`"${file.run.name}"`);
    }
  }
  if (stored.length === 0)
    throw new StoreError(
      'ALREADY_EXISTS',
      `${fileName}: ${already.length === 1 ? 'the run of this report is' : `the ${already.length} runs of this report are`} already stored (${already.join(', ')})`,
    );
  return stored;
}
