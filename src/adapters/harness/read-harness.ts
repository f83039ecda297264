/**
 * Reads a trainer's or harness's completions file into harness rows (src/core/formats/harness.ts):
 * verl, lm-eval, prime-rl (rollouts and traces) and SkyRL JSONL as text; TRL's completions Parquet
 * with hyparquet (row group by row group); an Inspect log as JSON (`.json`) or as its zip (`.eval`,
 * whose `samples/<id>_epoch_<n>.json` entries are read one by one with zip.js).
 */
import { configure } from '@zip.js/zip.js';
import { InflationBudget, entryText, readZipEntries } from '../zip/zip-entries.ts';
import { WorkbenchError } from '../../core/errors.ts';
import {
  detectHarnessFormat,
  inspectLogSamples,
  inspectLogWallTime,
  inspectRows,
  lmEvalRows,
  primeRlRows,
  primeRlTraceRows,
  skyrlRows,
  trlRows,
  verlRows,
  type HarnessFormat,
  type HarnessRow,
} from '../../core/formats/harness.ts';
import { parseJsonText } from '../../core/formats/questions.ts';
import { jsonLineRecords, type SourceRecord } from '../../core/formats/records.ts';
import { blobAsyncBuffer, isParquetName, readParquetRecords } from '../parquet/read-parquet.ts';

configure({ useWebWorkers: false });

/**
 * One sample's JSON is read whole (it is parsed as one value): bounded well below the longest
 * string JavaScript holds, and every sample of the log shares the zip's inflation budget.
 */
const MAX_INSPECT_SAMPLE_BYTES = 256 * 1024 * 1024;
const INSPECT_ADVICE =
  'check the log was written by Inspect (inspect log dump FILE prints it as JSON; give that .json instead)';

async function inspectZipSamples(
  blob: Blob,
  fileName: string,
): Promise<{ samples: Array<{ value: unknown; where: string }>; wallTime: string | null }> {
  const budget = new InflationBudget();
  const isSample = (p: string) => /^samples\/[^/]+\.json$/.test(p);
  let entries;
  try {
    entries = await readZipEntries(blob, fileName, {
      budget,
      maxEntryBytes: (p) => (isSample(p) ? MAX_INSPECT_SAMPLE_BYTES : Number.MAX_SAFE_INTEGER),
      advice: INSPECT_ADVICE,
    });
  } catch (err) {
    if ((err as Error).message.includes('not a readable zip')) {
      throw new WorkbenchError(
        'BAD_FORMAT',
        `not a readable Inspect .eval log (a zip): ${(err as Error).message}`,
        fileName,
      );
    }
    throw err;
  }
  const samples = entries.filter((z) => isSample(z.path));
  if (samples.length === 0)
    throw new WorkbenchError(
      'BAD_FORMAT',
      'the .eval log holds no samples/*.json: was the eval run with --no-log-samples?',
      fileName,
    );
  const out: Array<{ value: unknown; where: string }> = [];
  for (const z of samples) {
    const where = `${fileName}:${z.path}`;
    const text = await entryText(z, where, { budget, maxEntryBytes: MAX_INSPECT_SAMPLE_BYTES, advice: INSPECT_ADVICE });
    out.push({ value: parseJsonText(text, where), where });
  }
  // The log's own time: header.json (written when the eval ends), else the journal's start.
  let wallTime: string | null = null;
  for (const p of ['header.json', '_journal/start.json']) {
    const z = entries.find((e) => e.path === p);
    if (!z || wallTime) continue;
    const where = `${fileName}:${p}`;
    wallTime = inspectLogWallTime(
      parseJsonText(
        await entryText(z, where, { budget, maxEntryBytes: MAX_INSPECT_SAMPLE_BYTES, advice: INSPECT_ADVICE }),
        where,
      ),
    );
  }
  return { samples: out, wallTime };
}

/**
 * The rows of one file; `format` null detects it from the first record. `wallTime` is the dump's
 * own time when its format has one in the file (an Inspect log's), else null.
 */
export async function readHarnessFile(
  fileName: string,
  blob: Blob,
  format: HarnessFormat | null,
): Promise<{ format: HarnessFormat; rows: HarnessRow[]; wallTime: string | null }> {
  if (/\.eval$/i.test(fileName)) {
    if (format && format !== 'inspect')
      throw new WorkbenchError('BAD_OPTION', `${fileName} is an Inspect .eval log, not ${format}`, '--from');
    const zip = await inspectZipSamples(blob, fileName);
    return { format: 'inspect', rows: inspectRows(zip.samples), wallTime: zip.wallTime };
  }
  if (isParquetName(fileName)) {
    // TRL's completions/completions_<step>.parquet: read row group by row group.
    const records = await readParquetRecords({ name: fileName, file: blobAsyncBuffer(blob) });
    const found = harnessFormat(records, format, fileName);
    return { format: found, rows: rowsOf(records, found), wallTime: null };
  }
  const text = await blob.text();
  if (text.trimStart().startsWith('{') && /\.json$/i.test(fileName)) {
    const log = parseJsonText(text, fileName);
    if (format && format !== 'inspect')
      throw new WorkbenchError(
        'BAD_OPTION',
        `${fileName} is one JSON object (an Inspect log?), not ${format} JSON Lines`,
        '--from',
      );
    return {
      format: 'inspect',
      rows: inspectRows(inspectLogSamples(log, fileName)),
      wallTime: inspectLogWallTime(log),
    };
  }
  const records = jsonLineRecords(text, fileName);
  const found = harnessFormat(records, format, fileName);
  // JSON Lines carry no time of the file (lm-eval's is in its results file: series-dump.ts).
  return { format: found, rows: rowsOf(records, found), wallTime: null };
}

/** The format of a file's records: the one named, else detected from the first record. */
function harnessFormat(
  records: readonly SourceRecord[],
  format: HarnessFormat | null,
  fileName: string,
): HarnessFormat {
  if (records.length === 0) throw new WorkbenchError('BAD_FORMAT', 'the file holds no rows', fileName);
  const found = format ?? detectHarnessFormat(records[0]!.value);
  if (!found) {
    throw new WorkbenchError(
      'BAD_FORMAT',
      'not a known completions dump: verl lines have "input", "output", "step"; lm-eval lines "doc_id", "resps"; Inspect samples "epoch", "output", "target"; prime-rl rollouts "example_id", "completion", "reward"; SkyRL eval lines "input_prompt", "output_response"; TRL completions rows "step", "prompt", "completion", "advantage"; prime-rl traces "task", "traces". Name it with --from',
      records[0]!.where,
    );
  }
  return found;
}

function rowsOf(records: readonly SourceRecord[], format: HarnessFormat): HarnessRow[] {
  switch (format) {
    case 'verl':
      return verlRows(records);
    case 'lm-eval':
      return lmEvalRows(records);
    case 'prime-rl':
      return primeRlRows(records);
    case 'skyrl':
      return skyrlRows(records);
    case 'trl':
      return trlRows(records);
    case 'prime-rl-traces':
      return primeRlTraceRows(records);
    case 'inspect':
      return inspectRows(records);
  }
}
