/**
 * What an offline report carries (docs/report.md): one or more run files exactly as `eval
 * --run-out` or the app's export wrote them (after the run file's own reader), whether the
 * report shows their comparison, a training run (series file) when given, and who made the
 * report when. The page (src/report/) shows it with the app's own screens; the app's import
 * stores its runs as the run files would be stored (report-file.ts reads it back).
 */
import { errorMessage, WorkbenchError } from '../errors.ts';
import { parseJsonText } from '../formats/questions.ts';
import { JsonReader, checkVersion } from '../formats/validate.ts';
import { parseRunFile } from '../runfile/run-file.ts';
import type { Question } from '../types.ts';
import type { RunFile } from '../run/types.ts';
import { parseSeriesFile, toSeriesFile, type SeriesFile } from '../series/file.ts';
import type { TextsCut } from './limits.ts';
import type { ResultRows } from './result-rows.ts';
import { checkedExclusion, type Exclusion } from '../eval/exclusions.ts';
import { packSamples, StringTable, unpackSamples, type PackedSamples } from './pack.ts';

const REPORT_FORMAT = 'rlvr-workbench-report';
export const REPORT_VERSION = 1;
/** The id of the element that holds the packed payload in the report's HTML. */
export const REPORT_DATA_ID = 'rlvr-report-data';

export interface ReportPayload {
  format: typeof REPORT_FORMAT;
  version: typeof REPORT_VERSION;
  /** ISO 8601: when the report was made. */
  createdAt: string;
  /** The product, its version and the host that made the report (`rlvr-workbench 0.1.0 (CLI)`). */
  product: string;
  /** The report's run first; with a comparison, the runs compared with it after it (B − A, the first is A). */
  runs: RunFile[];
  /** The report shows the comparison of runs[0] (the baseline A) with every other run. */
  compare: boolean;
  /** A training run (a series file), when one was given. */
  series: SeriesFile | null;
  /**
   * How many texts the builder cut to its bound (report-file.ts, limits.ts), or null/absent:
   * those texts end in "… (N characters more)" and are not the run's whole texts.
   */
  textsCut?: TextsCut | null;
  /**
   * The first rows of each side of the wrong samples, within a stated budget (result-rows.ts);
   * absent when the report was made without the databases (the CLI).
   */
  resultRows?: ResultRows | null;
  /**
   * What the app kept with each step of the training run beyond its series file: the notes of
   * its import (rows paired, mapping, findings) and how its verdicts were reached (executed,
   * reused, from the verdict cache). Absent when no step has any.
   */
  seriesSteps?: SeriesStepExtras[] | null;
  /**
   * The questions excluded from the metrics of each of the report's runs (its own exclusions and
   * its training runs', as the app honours them, or the CLI's `--exclude`); absent when none.
   */
  exclusions?: RunExclusionList[] | null;
  /**
   * The bytes of the report's HTML around its data element's base64 text, written by the
   * builder: with that text's length, the page states the file's size.
   */
  shellBytes?: number;
}

/** The exclusions that hold for one run (or a training run) of the report, by its id. */
interface RunExclusionList {
  ownerId: string;
  list: Exclusion[];
}

/** A step's import notes and verdict counts, as the app stores them (app/records.ts, SeriesStepRecord). */
export interface SeriesStepExtras {
  step: number;
  notes?: string[];
  executions?: { executed: number; reused: number; fromCache?: number };
}

export interface ReportInput {
  runs: RunFile[];
  compare: boolean;
  series?: SeriesFile | null;
  product: string;
  createdAt: string;
  textsCut?: TextsCut | null;
  resultRows?: ResultRows | null;
  seriesSteps?: SeriesStepExtras[] | null;
  exclusions?: RunExclusionList[] | null;
}

/**
 * The run file with its questions' texts from its dataset's questions (the app adds them while
 * the dataset is stored; `questions` undefined when it is not): a file that has texts keeps them.
 */
export function withQuestionTexts(file: RunFile, questions: readonly Question[] | undefined): RunFile {
  if (file.questions || !questions) return file;
  const texts = file.run.subset.indices.flatMap((index) => {
    const q = questions[index];
    return q ? [{ index, questionId: q.questionId, dbId: q.dbId, question: q.question, evidence: q.evidence }] : [];
  });
  return { ...file, questions: texts };
}

/** The payload of a report; refuses what the report could not show (no run, a comparison of one run, a run twice). */
export function reportPayload(input: ReportInput): ReportPayload {
  if (input.runs.length === 0) throw new WorkbenchError('BAD_OPTION', 'a report needs a run (--run FILE)');
  if (input.compare && input.runs.length < 2)
    throw new WorkbenchError('BAD_OPTION', 'a comparison needs a second run (--compare FILE)');
  const seen = new Map<string, string>();
  for (const f of input.runs) {
    const had = seen.get(f.run.id);
    if (had !== undefined)
      throw new WorkbenchError(
        'MISMATCH',
        `run "${f.run.name}" and run "${had}" are the same run (id ${f.run.id}): a comparison needs two different runs`,
      );
    seen.set(f.run.id, f.run.name);
  }
  return {
    format: REPORT_FORMAT,
    version: REPORT_VERSION,
    createdAt: input.createdAt,
    product: input.product,
    runs: input.runs,
    compare: input.compare,
    series: input.series ?? null,
    ...(input.textsCut ? { textsCut: input.textsCut } : {}),
    ...(input.resultRows ? { resultRows: input.resultRows } : {}),
    ...(input.seriesSteps && input.seriesSteps.length > 0 ? { seriesSteps: input.seriesSteps } : {}),
    ...exclusionsOf(input.exclusions),
  };
}

/** The non-empty lists, each exclusion checked (a hand-made file names the entry that is wrong). */
function exclusionsOf(lists: readonly RunExclusionList[] | null | undefined): { exclusions?: RunExclusionList[] } {
  const kept = (lists ?? [])
    .filter((e) => e.list.length > 0)
    .map((e, i) => ({
      ownerId: e.ownerId,
      list: e.list.map((x, j) => checkedExclusion(x, `the report's exclusions[${i}][${j}]`)),
    }));
  return kept.length > 0 ? { exclusions: kept } : {};
}

/** A run file as the report carries it: its samples in columns (pack.ts). */
type PackedRunFile = Omit<RunFile, 'samples'> & { samples: PackedSamples };

/** The payload as written into the report: every run's (and series step's) samples packed, one string table. */
interface PackedReport extends Omit<ReportPayload, 'runs' | 'series'> {
  strings: string[];
  runs: PackedRunFile[];
  series:
    | (Omit<SeriesFile, 'steps'> & { steps: (Omit<SeriesFile['steps'][number], 'run'> & { run: PackedRunFile })[] })
    | null;
}

export function packReport(payload: ReportPayload): PackedReport {
  const table = new StringTable();
  const pack = (f: RunFile): PackedRunFile => ({ ...f, samples: packSamples(f.samples, table) });
  const runs = payload.runs.map(pack);
  const series = payload.series
    ? { ...payload.series, steps: payload.series.steps.map((st) => ({ ...st, run: pack(st.run) })) }
    : null;
  return { ...payload, strings: table.strings, runs, series };
}

/** The payload of its packed form (no validation: `parseReportPayload` adds it). */
function unpackReport(packed: PackedReport, where: string): ReportPayload {
  const { strings, ...rest } = packed;
  if (!Array.isArray(strings)) throw new WorkbenchError('BAD_FORMAT', 'the report data has no string table', where);
  const unpack = (f: PackedRunFile, at: string): RunFile => ({ ...f, samples: unpackSamples(f.samples, strings, at) });
  return {
    ...rest,
    runs: packed.runs.map((f, i) => unpack(f, `${where} runs[${i}]`)),
    series: packed.series
      ? {
          ...packed.series,
          steps: packed.series.steps.map((st, i) => ({ ...st, run: unpack(st.run, `${where} series.steps[${i}]`) })),
        }
      : null,
  };
}

function checkFormat(r: JsonReader, top: Record<string, unknown>, fileName: string): void {
  if (top.format !== REPORT_FORMAT)
    throw new WorkbenchError(
      'BAD_FORMAT',
      `not the data of a workbench report: expected {"format": "${REPORT_FORMAT}", ...}`,
      fileName,
    );
  checkVersion(top.version, REPORT_VERSION, 'report', fileName);
  r.arr(top.runs, 'runs');
}

/**
 * The payload of a report's JSON, every run through the run file's own reader and the series
 * through the series file's (what the app's import stores; errors name the file and the field).
 */
export function parseReportPayload(text: string, fileName: string): ReportPayload {
  const r = new JsonReader(fileName);
  const top = r.obj(parseJsonText(text, fileName), 'the report');
  checkFormat(r, top, fileName);
  r.arr(top.strings, 'strings');
  r.arr(top.runs, 'runs').forEach((v, i) => r.obj(r.obj(v, `runs[${i}]`).samples, `runs[${i}].samples`));
  let unpacked: ReportPayload;
  try {
    unpacked = unpackReport(top as unknown as PackedReport, fileName);
  } catch (err) {
    if (err instanceof WorkbenchError) throw err;
    throw new WorkbenchError('BAD_FORMAT', `the packed samples cannot be read: ${errorMessage(err)}`, fileName);
  }
  const runs = unpacked.runs.map((f, i) => parseRunFile(JSON.stringify(f), `${fileName} runs[${i}]`));
  const series = unpacked.series
    ? toSeriesFile(parseSeriesFile(JSON.stringify(unpacked.series), `${fileName} series`))
    : null;
  return reportPayload({
    runs,
    compare: r.bool(top, 'compare', 'the report'),
    series,
    product: r.str(top, 'product', 'the report'),
    createdAt: r.str(top, 'createdAt', 'the report'),
    textsCut: textsCutOf(r, top.textsCut),
    exclusions: exclusionListsOf(r, top.exclusions),
  });
}

/** The report's `exclusions` read back (each entry then checked by `reportPayload`); null when absent. */
function exclusionListsOf(r: JsonReader, v: unknown): RunExclusionList[] | null {
  if (v === undefined || v === null) return null;
  return r.arr(v, 'exclusions').map((e, i) => {
    const o = r.obj(e, `exclusions[${i}]`);
    return {
      ownerId: r.str(o, 'ownerId', `exclusions[${i}]`),
      list: r
        .arr(o.list, `exclusions[${i}].list`)
        .map((x, j) => r.obj(x, `exclusions[${i}].list[${j}]`) as unknown as Exclusion),
    };
  });
}

/** The report's `textsCut` (absent or null in a report whose texts are whole). */
function textsCutOf(r: JsonReader, v: unknown): TextsCut | null {
  if (v === undefined || v === null) return null;
  const o = r.obj(v, 'textsCut');
  return { count: r.num(o, 'count', 'textsCut'), maxChars: r.num(o, 'maxChars', 'textsCut') };
}

/**
 * The payload as the report page reads it: the format and version checked, the runs taken as
 * the builder wrote them (it validated them, and the page renders every string as text): a
 * 100,000-sample run opens without being validated twice.
 */
export function openReportPayload(text: string, where: string): ReportPayload {
  const r = new JsonReader(where);
  const top = r.obj(parseJsonText(text, where), 'the report');
  checkFormat(r, top, where);
  return unpackReport(top as unknown as PackedReport, where);
}
