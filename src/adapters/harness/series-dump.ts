/**
 * One file of a training run as the steps of a series (docs/series.md, "Where steps come from"),
 * for the CLI's `series` and the app's series import and folder watch alike:
 * - a trainer's or harness's dump (verl, lm-eval, Inspect, prime-rl rollouts and traces, SkyRL, TRL;
 *   read-harness.ts): verl and TRL rows carry their step (a file holding several steps gives
 *   several), the others take the step from the file's path by the step rule; of prime-rl's
 *   traces only one split is read (eval/all unless asked otherwise);
 * - a predictions file (BIRD JSON, JSONL, `.sql`) whose path carries the step by the rule.
 * Each step comes with the records (or text) the core's replay plan pairs with the gold, the
 * trainer's own score of each sample, the mapping report and how its step was found.
 */
import { WorkbenchError } from '../../core/errors.ts';
import {
  detectHarnessFormat,
  isLmEvalResults,
  lmEvalResultsName,
  lmEvalResultsWallTime,
  mapHarnessRows,
  mappingReport,
  type HarnessFormat,
  type HarnessRow,
} from '../../core/formats/harness.ts';
import { blobAsyncBuffer, isParquetName, readParquetRecords } from '../parquet/read-parquet.ts';
import { stepFromName, type StepRule } from '../../core/series/step-name.ts';
import type { Question } from '../../core/types.ts';
import { stepRuleText, type SeriesDump } from '../../core/series/dump-step.ts';
import { readHarnessFile } from './read-harness.ts';

/** prime-rl's traces split read by default (`rollouts/step_<N>/<kind>/<subset>/traces.jsonl`). */
const DEFAULT_TRACES_SPLIT = 'eval/all';
const TRACES_PATH = /(?:^|[\\/])((?:train|eval)[\\/](?:all|effective))[\\/]traces\.jsonl$/i;

/** Whether a file's first record (or whole JSON object) is a harness dump; reads no more than needed. */
async function harnessFormatOf(name: string, blob: Blob): Promise<HarnessFormat | null> {
  if (/\.eval$/i.test(name)) return 'inspect';
  if (isParquetName(name)) {
    const records = await readParquetRecords({ name, file: blobAsyncBuffer(blob) });
    return records.length ? detectHarnessFormat(records[0]!.value) : null;
  }
  const head = await blob.slice(0, 1 << 20).text();
  const trimmed = head.trimStart();
  if (/\.json$/i.test(name) && trimmed.startsWith('{') && trimmed.includes('"samples"')) {
    // An Inspect .json log is one object: detection needs the whole of it.
    try {
      return detectHarnessFormat(JSON.parse(await blob.text()));
    } catch {
      return null;
    }
  }
  const firstLine = trimmed.slice(0, (trimmed + '\n').indexOf('\n'));
  try {
    return detectHarnessFormat(JSON.parse(firstLine));
  } catch {
    return null;
  }
}

function noStep(name: string, rule: StepRule | undefined): WorkbenchError {
  return new WorkbenchError(
    'BAD_FORMAT',
    `no training step in the name ${JSON.stringify(name)} by the rule (${stepRuleText(rule)}): rename the file, or give a step pattern: a regular expression with the step's digits in a capture group (CLI: --step-pattern REGEX)`,
    name,
  );
}

/** An lm-eval results file (`results_<date>.json`): read for its samples files' time, no step of its own. */
async function lmEvalResultsFile(fileName: string, blob: Blob): Promise<boolean> {
  if (!/^results_.*\.json$/i.test(fileName)) return false;
  try {
    return isLmEvalResults(JSON.parse(await blob.text()));
  } catch {
    return false;
  }
}

/** The `date` of the results file beside an lm-eval samples file, when `sibling` finds it. */
async function lmEvalWallTime(
  fileName: string,
  sibling: ((fileName: string) => Promise<Blob | null>) | undefined,
): Promise<string | null> {
  const results = lmEvalResultsName(fileName);
  const blob = results && sibling ? await sibling(results).catch(() => null) : null;
  if (!blob) return null;
  try {
    return lmEvalResultsWallTime(JSON.parse(await blob.text()));
  } catch {
    return null;
  }
}

/**
 * The steps of one file. `name` is its path under the folder given (the step rule reads its
 * folders too); `format` forces a dump format (null detects it; a file that is no dump is read
 * as a predictions file named by its step). `sibling` reads a file of the same folder by name
 * (an lm-eval samples file's results file, for its date); without it, or when it finds nothing,
 * an lm-eval step has no time of its own. An lm-eval results file gives no step.
 */
export async function readSeriesDump(
  name: string,
  blob: Blob,
  questions: readonly Question[],
  options: {
    format?: HarnessFormat | null;
    rule?: StepRule;
    sibling?: (fileName: string) => Promise<Blob | null>;
    /** prime-rl traces: the split read (`eval/all` by default); a traces file of another split gives no step. */
    tracesSplit?: string;
  } = {},
): Promise<SeriesDump> {
  const fileName = name.split(/[\\/]/).pop() ?? name;
  const split = TRACES_PATH.exec(name)?.[1]?.replace(/\\/g, '/').toLowerCase();
  const wanted = options.tracesSplit ?? DEFAULT_TRACES_SPLIT;
  if (split !== undefined && split !== wanted)
    return {
      format: 'prime-rl-traces',
      notes: [`${name}: prime-rl traces of the ${split} split, left out (the ${wanted} split is read)`],
      steps: [],
    };
  if (!options.format && /^aggregated_results\.jsonl$/i.test(fileName))
    return {
      format: 'skyrl',
      notes: [`${name}: SkyRL's aggregated eval metrics (no samples), left out`],
      steps: [],
    };
  if (!options.format && (await lmEvalResultsFile(fileName, blob)))
    return {
      format: 'lm-eval',
      notes: [`${name}: an lm-eval results file (no samples): read only for the date of its samples files`],
      steps: [],
    };
  const fromName = stepFromName(name, options.rule);
  const format = options.format ?? (await harnessFormatOf(fileName, blob));
  if (format === null) {
    if (!fromName) throw noStep(name, options.rule);
    return {
      format: 'predictions',
      notes: [`${name}: step ${fromName.step} (from the name by ${fromName.rule}; read as a predictions file)`],
      steps: [
        {
          step: fromName.step,
          source: name,
          format: 'predictions',
          // A Parquet predictions file: its rows are the JSONL format's records.
          predictions: isParquetName(fileName)
            ? { name: fileName, records: await readParquetRecords({ name: fileName, file: blobAsyncBuffer(blob) }) }
            : { name: fileName, text: await blob.text() },
          sampleScores: new Map(),
          sampleRewards: new Map(),
          sampleTurns: new Map(),
          sampleEnds: new Map(),
          report: null,
          matched: null,
          wallTime: null,
        },
      ],
    };
  }
  const got = await readHarnessFile(fileName, blob, format);
  const notes: string[] = [];
  let rows: HarnessRow[] = got.rows;
  if (rows.every((r) => r.step === null)) {
    if (!fromName) throw noStep(name, options.rule);
    rows = rows.map((r) => ({ ...r, step: fromName.step }));
    notes.push(`${name}: step ${fromName.step} (from the name by ${fromName.rule})`);
  } else {
    const steps = [...new Set(rows.map((r) => r.step))];
    notes.push(`${name}: step${steps.length > 1 ? 's' : ''} ${steps.join(', ')} (from the rows' "step")`);
    if (fromName && (steps.length > 1 || steps[0] !== fromName.step)) {
      notes.push(
        `warning: ${name}: its name says step ${fromName.step} but its rows say ${steps.join(', ')}; the rows' steps are used`,
      );
    }
  }
  const runs = mapHarnessRows(rows, questions);
  const wallTime = got.wallTime ?? (got.format === 'lm-eval' ? await lmEvalWallTime(fileName, options.sibling) : null);
  return {
    format: got.format,
    notes,
    steps: runs.map((r) => ({
      step: r.step!,
      source: runs.length > 1 ? `${name} step ${r.step}` : name,
      format: got.format,
      predictions: { name: fileName, records: r.records },
      sampleScores: r.sampleScores,
      sampleRewards: r.sampleRewards,
      sampleTurns: r.sampleTurns,
      sampleEnds: r.sampleEnds,
      report: mappingReport(got.format, name, r),
      matched: r.records.length,
      pairing: { rows: r.rows, unmatched: r.unmatched },
      wallTime,
    })),
  };
}
