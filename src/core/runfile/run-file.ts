/**
 * Run files at the boundary: `parseRunFile` reads (a) a run file exported by the app or written
 * by `eval --run-out` and (b) the JSON report of `eval --out`, converted to samples, and
 * validates every field it keeps. The samples of a run file are made by the run recipe
 * (`toSampleRecord`, core/run/score-run.ts); `toRunFile` (export.ts) writes the file.
 */
import { WorkbenchError } from '../errors.ts';
import { METRICS, type MetricName } from '../eval/executor.ts';
import { parseJsonText } from '../formats/questions.ts';
import { compileRewardFormula } from '../eval/reward.ts';
import type { TsCounterexample } from '../types.ts';
import { readRubricScores } from '../rubric/read-scores.ts';
import type { SuiteSpec } from '../ts/suite.ts';
import { readEvalReport } from './eval-report.ts';
import { readEpisode, readRunPreset } from './read-episode.ts';
import { toRunFile } from './export.ts';
import {
  RUN_FILE_FORMAT,
  RUN_FILE_VERSION,
  type FileRef,
  type RunFile,
  type RunHeader,
  type RunQuestion,
  type SampleGeneration,
  type SampleRecord,
} from '../run/types.ts';
import {
  DIFFICULTY_VALUES,
  JsonReader,
  RULE_VALUES,
  STATUS_VALUES,
  type Obj,
  checkVersion,
} from '../formats/validate.ts';

function fileRef(r: JsonReader, v: unknown, path: string): FileRef {
  const o = r.obj(v, path);
  return { name: r.str(o, 'name', path), sha256: r.str(o, 'sha256', path), bytes: r.int(o, 'bytes', path) };
}

function readHeader(r: JsonReader, v: unknown): RunHeader {
  const o = r.obj(v, 'run');
  const src = r.obj(o.source, 'run.source');
  const kind = r.oneOf(src, 'kind', 'run.source', ['replay', 'generation'] as const);
  const source: RunHeader['source'] =
    kind === 'replay'
      ? { kind, predictions: fileRef(r, src.predictions, 'run.source.predictions') }
      : {
          kind,
          engine: r.str(src, 'engine', 'run.source'),
          model: r.str(src, 'model', 'run.source'),
          template: r.str(src, 'template', 'run.source'),
        };
  const ds = r.obj(o.dataset, 'run.dataset');
  const dbs = r.obj(ds.databases, 'run.dataset.databases');
  const databases: Record<string, string> = {};
  for (const k of Object.keys(dbs)) databases[k] = r.str(dbs, k, 'run.dataset.databases');
  const subset = r.obj(o.subset, 'run.subset');
  const cfg = r.obj(o.config, 'run.config');
  const metrics = r
    .arr(cfg.metrics, 'run.config.metrics')
    .map((m, i) =>
      (METRICS as readonly unknown[]).includes(m)
        ? (m as MetricName)
        : r.fail(`run.config.metrics[${i}]`, `one of ${METRICS.join(', ')}`, m),
    );
  const rewardFormula = r.str(cfg, 'rewardFormula', 'run.config');
  try {
    compileRewardFormula(rewardFormula);
  } catch (err) {
    throw new WorkbenchError(
      'BAD_FORMAT',
      `run.config.rewardFormula is not a valid formula: ${(err as Error).message}`,
      r.file,
    );
  }
  const header: RunHeader = {
    id: r.str(o, 'id', 'run'),
    name: r.str(o, 'name', 'run'),
    createdAt: r.str(o, 'createdAt', 'run'),
    updatedAt: r.str(o, 'updatedAt', 'run'),
    status: r.oneOf(o, 'status', 'run', ['running', 'done', 'cancelled', 'failed'] as const),
    source,
    dataset: {
      id: r.str(ds, 'id', 'run.dataset'),
      name: r.str(ds, 'name', 'run.dataset'),
      questions: fileRef(r, ds.questions, 'run.dataset.questions'),
      gold: ds.gold === null ? null : fileRef(r, ds.gold, 'run.dataset.gold'),
      databases,
    },
    subset: {
      description: r.str(subset, 'description', 'run.subset'),
      indices: r
        .arr(subset.indices, 'run.subset.indices')
        .map((x, i) =>
          Number.isSafeInteger(x) && (x as number) >= 0
            ? (x as number)
            : r.fail(`run.subset.indices[${i}]`, 'an integer >= 0', x),
        ),
    },
    config: {
      metrics,
      timeoutMs: r.num(cfg, 'timeoutMs', 'run.config'),
      readOnly: r.bool(cfg, 'readOnly', 'run.config'),
      vesIterations: r.int(cfg, 'vesIterations', 'run.config', 1),
      fence: r.oneOf(cfg, 'fence', 'run.config', ['first', 'last'] as const),
      rewardFormula,
      ...(cfg.suite !== undefined ? { suite: readSuiteSpec(r, cfg.suite) } : {}),
      ...(cfg.exRule !== undefined
        ? { exRule: r.oneOf(cfg, 'exRule', 'run.config', ['bird', 'spider'] as const) }
        : {}),
      ...(cfg.verdictCache !== undefined ? { verdictCache: r.bool(cfg, 'verdictCache', 'run.config') } : {}),
    },
    samplesPerQuestion: r.int(o, 'samplesPerQuestion', 'run', 1),
    executor: r.str(o, 'executor', 'run'),
  };
  if (o.executions !== undefined) {
    const x = r.obj(o.executions, 'run.executions');
    header.executions = {
      executed: r.int(x, 'executed', 'run.executions', 0),
      reused: r.int(x, 'reused', 'run.executions', 0),
    };
    if (x.fromCache !== undefined) header.executions.fromCache = r.int(x, 'fromCache', 'run.executions', 0);
  }
  if (o.shard !== undefined) {
    const x = r.obj(o.shard, 'run.shard');
    header.shard = { k: r.int(x, 'k', 'run.shard', 1), n: r.int(x, 'n', 'run.shard', 1) };
  }
  if (o.device !== undefined) {
    const x = r.obj(o.device, 'run.device');
    const device: RunHeader['device'] = {
      device: r.str(x, 'device', 'run.device'),
      reason: r.nullable(x, 'reason', 'run.device', r.str),
    };
    const detail = r.optional(x, 'detail', 'run.device', r.str);
    if (detail !== undefined) device.detail = detail;
    header.device = device;
  }
  const sqliteVersion = r.optional(o, 'sqliteVersion', 'run', r.str);
  if (sqliteVersion !== undefined) header.sqliteVersion = sqliteVersion;
  if (o.versionCheck !== undefined) {
    const x = r.obj(o.versionCheck, 'run.versionCheck');
    header.versionCheck = {
      sqliteVersion: r.str(x, 'sqliteVersion', 'run.versionCheck'),
      checked: r.int(x, 'checked', 'run.versionCheck', 0),
      differing: r.int(x, 'differing', 'run.versionCheck', 0),
    };
    const planner = r.optional(x, 'planner', 'run.versionCheck', (v, k, at) => r.int(v, k, at, 0));
    if (planner !== undefined) header.versionCheck.planner = planner;
  }
  if (o.goldOverlay !== undefined) {
    const at = 'run.goldOverlay';
    const x = r.obj(o.goldOverlay, at);
    header.goldOverlay = {
      name: r.str(x, 'name', at),
      covered: r.int(x, 'covered', at, 0),
      goldsChanged: r.int(x, 'goldsChanged', at, 0),
      officialEx: r.nullable(x, 'officialEx', at, r.num),
      correctedEx: r.nullable(x, 'correctedEx', at, r.num),
    };
  }
  if (o.score !== undefined) {
    const x = r.obj(o.score, 'run.score');
    header.score = {
      ex: x.ex === null ? null : r.num(x, 'ex', 'run.score'),
      questions: r.int(x, 'questions', 'run.score', 0),
      samples: r.int(x, 'samples', 'run.score', 0),
    };
  }
  if (o.preset !== undefined) header.preset = readRunPreset(r, o.preset, 'run.preset');
  return header;
}

function readSuiteSpec(r: JsonReader, v: unknown): SuiteSpec {
  const o = r.obj(v, 'run.config.suite');
  const at = 'run.config.suite';
  return {
    seed: r.int(o, 'seed', at),
    size: r.int(o, 'size', at, 1),
    candidates: r.int(o, 'candidates', at, 1),
    maxRows: r.int(o, 'maxRows', at, 1),
    sampleRows: r.int(o, 'sampleRows', at, 1),
  };
}

function readSample(r: JsonReader, v: unknown, path: string): SampleRecord {
  const o = r.obj(v, path);
  // An unscored sample is exported with null scores (export.ts): the store keeps ex 0, reward 0.
  const unscored = o.status === 'missing-db';
  const nullScore = (key: string, read: () => number) => (unscored && o[key] === null ? 0 : read());
  const ext = r.obj(o.extraction, `${path}.extraction`);
  const rec: SampleRecord = {
    index: r.int(o, 'index', path),
    questionId: r.int(o, 'questionId', path),
    dbId: r.str(o, 'dbId', path),
    difficulty: r.oneOf(o, 'difficulty', path, DIFFICULTY_VALUES),
    ex: nullScore('ex', () => r.oneOf(o, 'ex', path, [0, 1] as const)) as 0 | 1,
    softF1: r.nullable(o, 'softF1', path, r.num),
    rves: r.nullable(o, 'rves', path, r.num),
    timeRatio: r.nullable(o, 'timeRatio', path, r.num),
    status: r.oneOf(o, 'status', path, STATUS_VALUES),
    error: r.nullable(o, 'error', path, r.str),
    mutatedDb: r.bool(o, 'mutatedDb', path),
    extraction: {
      rule: r.oneOf(ext, 'rule', `${path}.extraction`, RULE_VALUES),
      thinkStripped: r.bool(ext, 'thinkStripped', `${path}.extraction`),
    },
    predRowCount: r.nullable(o, 'predRowCount', path, r.int),
    goldRowCount: r.nullable(o, 'goldRowCount', path, r.int),
    elapsedMs: r.nullable(o, 'elapsedMs', path, r.num),
    sample: r.int(o, 'sample', path),
    sql: r.str(o, 'sql', path),
    goldSql: r.str(o, 'goldSql', path),
    format: r.oneOf(o, 'format', path, [0, 1] as const),
    reward: nullScore('reward', () => r.num(o, 'reward', path)),
  };
  const resultKey = r.optional(o, 'resultKey', path, r.str);
  const rvesNotTimed = r.optional(o, 'rvesNotTimed', path, r.str);
  if (rvesNotTimed !== undefined) rec.rvesNotTimed = rvesNotTimed;
  const completion = r.optional(o, 'completion', path, r.str);
  const meanLogprob = r.optional(o, 'meanLogprob', path, r.num);
  const rubricScore = r.optional(o, 'rubricScore', path, r.num);
  const predColumnCount = r.optional(o, 'predColumnCount', path, r.int);
  const goldColumnCount = r.optional(o, 'goldColumnCount', path, r.int);
  if (predColumnCount !== undefined) rec.predColumnCount = predColumnCount;
  if (goldColumnCount !== undefined) rec.goldColumnCount = goldColumnCount;
  if (resultKey !== undefined) rec.resultKey = resultKey;
  if (completion !== undefined) rec.completion = completion;
  if (meanLogprob !== undefined) rec.meanLogprob = meanLogprob;
  if (rubricScore !== undefined) rec.rubricScore = rubricScore;
  // The findings: kept through export and import (validated, never required).
  if (o.versionFeatures !== undefined) {
    rec.versionFeatures = r.arr(o.versionFeatures, `${path}.versionFeatures`).map((f, i) => {
      const fo = r.obj(f, `${path}.versionFeatures[${i}]`);
      return {
        feature: r.str(fo, 'feature', `${path}.versionFeatures[${i}]`),
        since: r.str(fo, 'since', `${path}.versionFeatures[${i}]`),
        where: r.oneOf(fo, 'where', `${path}.versionFeatures[${i}]`, ['pred', 'gold'] as const),
      };
    });
  }
  if (o.versionCheck !== undefined) {
    const at = `${path}.versionCheck`;
    const x = r.obj(o.versionCheck, at);
    rec.versionCheck = {
      sqliteVersion: r.str(x, 'sqliteVersion', at),
      ex: r.oneOf(x, 'ex', at, [0, 1] as const),
      softF1: r.nullable(x, 'softF1', at, r.num),
      status: r.oneOf(x, 'status', at, STATUS_VALUES),
      error: r.nullable(x, 'error', at, r.str),
      differs: r.bool(x, 'differs', at),
    };
    if (r.optional(x, 'planner', at, r.bool) === true) rec.versionCheck.planner = true;
  }
  if (o.corrected !== undefined) {
    const at = `${path}.corrected`;
    const x = r.obj(o.corrected, at);
    rec.corrected = {
      ex: r.oneOf(x, 'ex', at, [0, 1] as const),
      softF1: r.nullable(x, 'softF1', at, r.num),
      status: r.oneOf(x, 'status', at, STATUS_VALUES),
      goldSql: r.str(x, 'goldSql', at),
      changed: r.bool(x, 'changed', at),
    };
  }
  if (o.goldIssues !== undefined) {
    rec.goldIssues = r.arr(o.goldIssues, `${path}.goldIssues`).map((g, i) => {
      const go = r.obj(g, `${path}.goldIssues[${i}]`);
      return {
        kind: r.str(go, 'kind', `${path}.goldIssues[${i}]`),
        reason: r.str(go, 'reason', `${path}.goldIssues[${i}]`),
      };
    });
  }
  // Metric ts (docs/test-suite.md).
  if (o.ts !== undefined) rec.ts = o.ts === null ? null : r.oneOf(o, 'ts', path, [0, 1] as const);
  if (o.tsCounterexample !== undefined)
    rec.tsCounterexample = r.obj(o.tsCounterexample, `${path}.tsCounterexample`) as unknown as TsCounterexample;
  const goldOrderDependent = r.optional(o, 'goldOrderDependent', path, r.bool);
  const passesByRowOrder = r.optional(o, 'passesByRowOrder', path, r.bool);
  if (goldOrderDependent !== undefined) rec.goldOrderDependent = goldOrderDependent;
  if (passesByRowOrder !== undefined) rec.passesByRowOrder = passesByRowOrder;
  const rubric = r.optional(o, 'rubric', path, readRubricScores);
  if (rubric !== undefined) rec.rubric = rubric;
  if (o.generation !== undefined) rec.generation = readGeneration(r, o.generation, `${path}.generation`);
  if (o.episode !== undefined) rec.episode = readEpisode(r, o.episode, `${path}.episode`);
  return rec;
}

/** A generation run's per-sample record (prompt, fit, tokens, timing, seed, engine, model). */
function readGeneration(r: JsonReader, v: unknown, path: string): SampleGeneration {
  const o = r.obj(v, path);
  const prompt = r.arr(o.prompt, `${path}.prompt`).map((m, i) => {
    const mo = r.obj(m, `${path}.prompt[${i}]`);
    return {
      role: r.oneOf(mo, 'role', `${path}.prompt[${i}]`, ['system', 'user', 'assistant'] as const),
      content: r.str(mo, 'content', `${path}.prompt[${i}]`),
    };
  });
  const f = r.obj(o.fit, `${path}.fit`);
  const cut = r.obj(f.cut, `${path}.fit.cut`);
  const names = (k: string) => r.arr(cut[k], `${path}.fit.cut.${k}`).map((x) => String(x));
  const gen: SampleGeneration = {
    prompt,
    templateId: r.str(o, 'templateId', path),
    templateFingerprint: r.str(o, 'templateFingerprint', path),
    fit: {
      limit: r.nullable(f, 'limit', `${path}.fit`, r.int),
      tokens: r.int(f, 'tokens', `${path}.fit`),
      counter: r.oneOf(f, 'counter', `${path}.fit`, ['engine', 'chars/4'] as const),
      fits: r.bool(f, 'fits', `${path}.fit`),
      cut: { sampleRows: names('sampleRows'), descriptions: names('descriptions'), tables: names('tables') },
    },
    tokensIn: r.nullable(o, 'tokensIn', path, r.int),
    tokensOut: r.nullable(o, 'tokensOut', path, r.int),
    latencyMs: r.num(o, 'latencyMs', path),
    finishReason: r.oneOf(o, 'finishReason', path, ['stop', 'length', 'abort', 'error'] as const),
    seed: r.nullable(o, 'seed', path, r.num),
    engine: r.str(o, 'engine', path),
    model: r.str(o, 'model', path),
  };
  const error = r.optional(o, 'error', path, r.str);
  if (error !== undefined) gen.error = error;
  const device = r.optional(o, 'device', path, r.str);
  if (device !== undefined) gen.device = device;
  const deviceReason = r.optional(o, 'deviceReason', path, r.str);
  if (deviceReason !== undefined) gen.deviceReason = deviceReason;
  const deviceDetail = r.optional(o, 'deviceDetail', path, r.str);
  if (deviceDetail !== undefined) gen.deviceDetail = deviceDetail;
  const servedModel = r.optional(o, 'servedModel', path, r.str);
  if (servedModel !== undefined) gen.servedModel = servedModel;
  const fingerprint = r.optional(o, 'systemFingerprint', path, r.str);
  if (fingerprint !== undefined) gen.systemFingerprint = fingerprint;
  return gen;
}

function readQuestions(r: JsonReader, v: unknown): RunQuestion[] {
  return r.arr(v, 'questions').map((q, i) => {
    const path = `questions[${i}]`;
    const o: Obj = r.obj(q, path);
    return {
      index: r.int(o, 'index', path),
      questionId: r.int(o, 'questionId', path),
      dbId: r.str(o, 'dbId', path),
      question: r.str(o, 'question', path),
      evidence: r.str(o, 'evidence', path),
    };
  });
}

/** Checks that no (question, sample) appears twice: a merged or corrupted file would double-count. */
function checkUniqueSamples(samples: readonly SampleRecord[], file: string): void {
  const seen = new Set<string>();
  for (const [i, s] of samples.entries()) {
    const key = `${s.index}:${s.questionId}:${s.sample}`;
    if (seen.has(key)) {
      throw new WorkbenchError(
        'BAD_FORMAT',
        `samples[${i}] repeats sample ${s.sample} of question ${s.questionId} (index ${s.index})`,
        file,
      );
    }
    seen.add(key);
  }
}

/**
 * A run from its parts as plain JSON values (a run header, samples, questions), validated as a
 * run file's fields are: the samples Parquet table's rows are read through here
 * (samples-table.ts), so its errors name the file and the field as a run file's do.
 */
export function runFileFromParts(
  header: unknown,
  samples: readonly { value: unknown; where: string }[],
  questions: unknown,
  fileName: string,
): RunFile {
  const r = new JsonReader(fileName);
  const file = toRunFile(
    readHeader(r, header),
    samples.map((s) => readSample(r, s.value, s.where)),
    questions === undefined ? undefined : readQuestions(r, questions),
  );
  checkUniqueSamples(file.samples, fileName);
  return file;
}

/** Reads a run file or an `eval --out` report; errors name the file and the field. */
export function parseRunFile(text: string, fileName: string): RunFile {
  const data = parseJsonText(text.replace(/^\uFEFF/, ''), fileName);
  const r = new JsonReader(fileName);
  const top = r.obj(data, 'the file');
  let file: RunFile;
  if (top.format === RUN_FILE_FORMAT) {
    checkVersion(top.version, RUN_FILE_VERSION, 'run file', fileName);
    const samples = r.arr(top.samples, 'samples').map((s, i) => readSample(r, s, `samples[${i}]`));
    file = toRunFile(
      readHeader(r, top.run),
      samples,
      top.questions === undefined ? undefined : readQuestions(r, top.questions),
    );
  } else if ('summary' in top && 'items' in top) {
    file = readEvalReport(r, top);
  } else {
    throw new WorkbenchError(
      'BAD_FORMAT',
      `not a run file: expected {"format": "${RUN_FILE_FORMAT}", "version": 1, "run": {...}, "samples": [...]} ` +
        'or the JSON report written by `eval --out` ({"summary": {...}, "items": [...]})',
      fileName,
    );
  }
  checkUniqueSamples(file.samples, fileName);
  return file;
}
