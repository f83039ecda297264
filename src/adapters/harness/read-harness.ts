/**
 * Reads a trainer's or harness's completions file into harness rows (src/core/formats/harness.ts):
 * verl and lm-eval JSONL as text; an Inspect log as JSON (`.json`) or as its zip (`.eval`,
 * whose `samples/<id>_epoch_<n>.json` entries are read one by one with zip.js).
 */
import { BlobReader, TextWriter, ZipReader, configure, type Entry, type FileEntry } from '@zip.js/zip.js';
import { WorkbenchError } from '../../core/errors.ts';
import { detectHarnessFormat, inspectLogSamples, inspectRows, lmEvalRows, verlRows, type HarnessFormat, type HarnessRow } from '../../core/formats/harness.ts';
import { parseJsonText } from '../../core/formats/questions.ts';
import { jsonLineRecords } from '../../core/formats/records.ts';

configure({ useWebWorkers: false });

async function inspectZipSamples(blob: Blob, fileName: string): Promise<Array<{ value: unknown; where: string }>> {
  let entries;
  try {
    entries = await new ZipReader(new BlobReader(blob)).getEntries();
  } catch (err) {
    throw new WorkbenchError('BAD_FORMAT', `not a readable Inspect .eval log (a zip): ${(err as Error).message}`, fileName);
  }
  const samples = entries.filter((e: Entry): e is FileEntry => !e.directory && /^samples\/[^/]+\.json$/.test(e.filename));
  if (samples.length === 0) throw new WorkbenchError('BAD_FORMAT', 'the .eval log holds no samples/*.json: was the eval run with --no-log-samples?', fileName);
  const out: Array<{ value: unknown; where: string }> = [];
  for (const e of samples) {
    const where = `${fileName}:${e.filename}`;
    out.push({ value: parseJsonText(await e.getData(new TextWriter()), where), where });
  }
  return out;
}

/** The rows of one file; `format` null detects it from the first record. */
export async function readHarnessFile(fileName: string, blob: Blob, format: HarnessFormat | null): Promise<{ format: HarnessFormat; rows: HarnessRow[] }> {
  if (/\.eval$/i.test(fileName)) {
    if (format && format !== 'inspect') throw new WorkbenchError('BAD_OPTION', `${fileName} is an Inspect .eval log, not ${format}`, '--from');
    return { format: 'inspect', rows: inspectRows(await inspectZipSamples(blob, fileName)) };
  }
  const text = await blob.text();
  if (text.trimStart().startsWith('{') && /\.json$/i.test(fileName)) {
    const log = parseJsonText(text, fileName);
    if (format && format !== 'inspect') throw new WorkbenchError('BAD_OPTION', `${fileName} is one JSON object (an Inspect log?), not ${format} JSON Lines`, '--from');
    return { format: 'inspect', rows: inspectRows(inspectLogSamples(log, fileName)) };
  }
  const records = jsonLineRecords(text, fileName);
  if (records.length === 0) throw new WorkbenchError('BAD_FORMAT', 'the file holds no rows', fileName);
  const found = format ?? detectHarnessFormat(records[0]!.value);
  if (!found) {
    throw new WorkbenchError('BAD_FORMAT', 'not a known completions dump: verl lines have "input", "output", "step"; lm-eval lines "doc_id", "resps"; Inspect samples "epoch", "output", "target". Name it with --from', records[0]!.where);
  }
  if (found === 'verl') return { format: found, rows: verlRows(records) };
  if (found === 'lm-eval') return { format: found, rows: lmEvalRows(records) };
  return { format: found, rows: inspectRows(records) };
}
