/**
 * The series file: a whole training run as one versioned JSON file, to open on another machine.
 * `{"format": "rlvr-workbench-series", "version": 1, "series": {...}, "steps": [{"step",
 * "wallTime", "wallTimeSource", "source", "trainerScores", "trainerRewards"?, "run": <a run file>}]}`
 * (`wallTimeSource` absent in files written before it was kept: read as null; `trainerRewards`, the
 * trainer's reward columns per sample, only where the dump had some): each step's run is a complete
 * run file (src/core/run/types.ts, RUN_FILE_FORMAT) and is read by the run file's own reader.
 */
import { WorkbenchError, errorMessage } from '../errors.ts';
import { checkedExclusion, type Exclusion } from '../eval/exclusions.ts';
import { parseJsonText } from '../formats/questions.ts';
import { exportedSample } from '../runfile/export.ts';
import { parseRunFile } from '../runfile/run-file.ts';
import { JsonReader, checkVersion } from '../formats/validate.ts';
import { WALL_TIME_SOURCES, type Series, type SeriesStep, type TrainerRewards, type WallTimeSource } from './model.ts';

export const SERIES_FILE_FORMAT = 'rlvr-workbench-series';
const SERIES_FILE_VERSION = 1;

export interface SeriesFile {
  format: typeof SERIES_FILE_FORMAT;
  version: typeof SERIES_FILE_VERSION;
  series: Omit<Series, 'steps'>;
  steps: SeriesStep[];
}

export function toSeriesFile(series: Series): SeriesFile {
  const { steps, ...header } = series;
  return { format: SERIES_FILE_FORMAT, version: SERIES_FILE_VERSION, series: header, steps };
}

/** Each step's run as every run export writes it: a sample never scored has null scores (runfile/export.ts). */
export function seriesFileJson(series: Series): string {
  const file = toSeriesFile(series);
  const steps = file.steps.map((s) => ({ ...s, run: { ...s.run, samples: s.run.samples.map(exportedSample) } }));
  return JSON.stringify({ ...file, steps }) + '\n';
}

/** The series' header as the file writes it (its own fields, in this order). */
function fileHeader(series: Omit<Series, 'steps'>): Omit<Series, 'steps'> {
  return {
    id: series.id,
    name: series.name,
    createdAt: series.createdAt,
    dataset: series.dataset,
    stepRule: series.stepRule,
    ...(series.exclusions?.length ? { exclusions: series.exclusions } : {}),
  };
}

/**
 * The same text as `seriesFileJson`, one step at a time (a series of 490,880 samples is hundreds
 * of MB: the app's worker writes it as Blob parts, never one string).
 */
export async function* seriesFileParts(
  series: Omit<Series, 'steps'>,
  steps: AsyncIterable<SeriesStep> | Iterable<SeriesStep>,
): AsyncGenerator<string> {
  yield (
    JSON.stringify({ format: SERIES_FILE_FORMAT, version: SERIES_FILE_VERSION, series: fileHeader(series) }).slice(
      0,
      -1,
    ) + ',"steps":['
  );
  let first = true;
  for await (const step of steps) {
    yield (first ? '' : ',') + JSON.stringify(step);
    first = false;
  }
  yield ']}\n';
}

/** The header's fields, validated (errors name the file and the field). */
function readHeader(r: JsonReader, value: unknown): Omit<Series, 'steps'> {
  const h = r.obj(value, 'series');
  return {
    id: r.str(h, 'id', 'series'),
    name: r.str(h, 'name', 'series'),
    createdAt: r.str(h, 'createdAt', 'series'),
    dataset: r.str(h, 'dataset', 'series'),
    stepRule: r.str(h, 'stepRule', 'series'),
    ...(h.exclusions === undefined ? {} : { exclusions: readExclusions(r, h.exclusions) }),
  };
}

/** The header's `exclusions`: each `{questionId, reason, author, date}` checked (errors name the file and the entry). */
function readExclusions(r: JsonReader, value: unknown): Exclusion[] {
  return r.arr(value, 'series.exclusions').map((x, i) => {
    const at = `series.exclusions[${i}]`;
    const o = r.obj(x, at);
    try {
      return checkedExclusion(o as unknown as Exclusion, at);
    } catch (err) {
      throw new WorkbenchError('BAD_FORMAT', errorMessage(err), r.file);
    }
  });
}

/** Step `i` of a series file (`prev`: the step number before it), validated; its run by the run file's own reader. */
function readStep(r: JsonReader, value: unknown, i: number, prev: number | null, fileName: string): SeriesStep {
  const path = `steps[${i}]`;
  const o = r.obj(value, path);
  const step = r.int(o, 'step', path);
  const wallTime = r.nullable(o, 'wallTime', path, r.str);
  const source_ = o.wallTimeSource ?? null;
  if (source_ !== null && !WALL_TIME_SOURCES.includes(source_ as WallTimeSource))
    r.fail(`${path}.wallTimeSource`, `one of ${WALL_TIME_SOURCES.join(', ')} or null`, source_);
  const wallTimeSource = source_ as WallTimeSource | null;
  const source = r.str(o, 'source', path);
  // The step's run is a run file: its own reader validates it, errors naming the step.
  const run = parseRunFile(JSON.stringify(r.obj(o.run, `${path}.run`)), `${fileName} ${path}.run`);
  const scores = r
    .arr(o.trainerScores, `${path}.trainerScores`)
    .map((x, j) =>
      x === null || (typeof x === 'number' && Number.isFinite(x))
        ? x
        : r.fail(`${path}.trainerScores[${j}]`, 'a finite number or null', x),
    );
  if (scores.length !== run.samples.length)
    r.fail(`${path}.trainerScores`, `one entry per sample of the step's run (${run.samples.length})`, scores);
  const rewards =
    o.trainerRewards === undefined ? undefined : readRewards(r, o.trainerRewards, path, run.samples.length);
  const notes =
    o.notes === undefined
      ? undefined
      : r
          .arr(o.notes, `${path}.notes`)
          .map((n, j) => (typeof n === 'string' ? n : r.fail(`${path}.notes[${j}]`, 'a string', n)));
  if (prev !== null && step <= prev)
    r.fail(`${path}.step`, `greater than the previous step (${prev}): steps are in increasing order, each once`, step);
  return {
    step,
    wallTime,
    wallTimeSource,
    source,
    run,
    trainerScores: scores,
    ...(rewards ? { trainerRewards: rewards } : {}),
    ...(notes?.length ? { notes } : {}),
  };
}

/** A step's `trainerRewards`: one entry per sample, each null or an object of reward names to finite numbers or null. */
function readRewards(r: JsonReader, value: unknown, path: string, samples: number): Array<TrainerRewards | null> {
  const at = `${path}.trainerRewards`;
  const rewards = r.arr(value, at).map((x, j) => {
    if (x === null) return null;
    const o = r.obj(x, `${at}[${j}]`);
    const out: TrainerRewards = {};
    for (const [k, v] of Object.entries(o))
      out[k] =
        v === null || (typeof v === 'number' && Number.isFinite(v))
          ? v
          : r.fail(`${at}[${j}].${k}`, 'a finite number or null', v);
    return out;
  });
  if (rewards.length !== samples) r.fail(at, `one entry per sample of the step's run (${samples})`, value);
  return rewards;
}

/** Reads and validates a series file; errors name the file and the field. */
export function parseSeriesFile(text: string, fileName: string): Series {
  const data = parseJsonText(text.replace(/^\uFEFF/, ''), fileName);
  const r = new JsonReader(fileName);
  const top = r.obj(data, 'the file');
  if (top.format !== SERIES_FILE_FORMAT) {
    throw new WorkbenchError(
      'BAD_FORMAT',
      `not a series file: expected {"format": "${SERIES_FILE_FORMAT}", "version": ${SERIES_FILE_VERSION}, "series": {...}, "steps": [...]}`,
      fileName,
    );
  }
  checkVersion(top.version, SERIES_FILE_VERSION, 'series file', fileName);
  const header = readHeader(r, top.series);
  const steps: SeriesStep[] = [];
  for (const [i, v] of r.arr(top.steps, 'steps').entries())
    steps.push(readStep(r, v, i, steps.at(-1)?.step ?? null, fileName));
  return { ...header, steps };
}

/**
 * The series file that `seriesFileParts(series, steps)` writes, as `parseSeriesFile` reads it
 * back (`toSeriesFile` of it), without the file's text: each step goes through the file's
 * reader as it comes (a JSON round trip of its own fields, its run by the run file's reader),
 * so a store's series (the app's analysis worker, a 490,880-sample series) is never one string.
 */
export async function readSeriesFileSteps(
  series: Omit<Series, 'steps'>,
  steps: AsyncIterable<SeriesStep> | Iterable<SeriesStep>,
  fileName: string,
): Promise<SeriesFile> {
  const r = new JsonReader(fileName);
  const header = readHeader(r, fileHeader(series));
  const read: SeriesStep[] = [];
  for await (const { run, ...rest } of steps) {
    const fields = JSON.parse(JSON.stringify(rest)) as Record<string, unknown>;
    read.push(readStep(r, { ...fields, run }, read.length, read.at(-1)?.step ?? null, fileName));
  }
  return toSeriesFile({ ...header, steps: read });
}
