/**
 * The JSON report of `eval --out` read as a run: its items become samples. The report holds
 * no SQL texts and no checksums, so `sql`/`goldSql` are empty and the header's sha256 fields
 * are empty strings (comparisons then warn that the databases cannot be checked).
 */
import { maxOf } from '../util/numbers.ts';
import { METRICS, type MetricName } from '../eval/executor.ts';
import { compileRewardFormula, DEFAULT_REWARD_FORMULA, formatReward } from '../eval/reward.ts';
import {
  DEFAULT_RUN_CONFIG,
  RUN_FILE_FORMAT,
  RUN_FILE_VERSION,
  type FileRef,
  type RunFile,
  type SampleRecord,
} from '../run/types.ts';
import { DIFFICULTY_VALUES, JsonReader, RULE_VALUES, STATUS_VALUES, type Obj } from '../formats/validate.ts';

const baseName = (p: string) => p.split(/[\\/]/).pop() ?? p;
const unknownFile = (name: string): FileRef => ({ name, sha256: '', bytes: 0 });

export function readEvalReport(r: JsonReader, top: Obj): RunFile {
  const summary = r.obj(top.summary, 'summary');
  const inputs: Obj = summary.inputs === undefined ? {} : r.obj(summary.inputs, 'summary.inputs');
  const formulaText =
    summary.reward_formula === undefined ? DEFAULT_REWARD_FORMULA : r.str(summary, 'reward_formula', 'summary');
  const formula = compileRewardFormula(formulaText);
  const metrics = Array.isArray(summary.metrics)
    ? summary.metrics.filter((m): m is MetricName => (METRICS as readonly unknown[]).includes(m))
    : DEFAULT_RUN_CONFIG.metrics;
  const samples = r.arr(top.items, 'items').map((v, i): SampleRecord => {
    const path = `items[${i}]`;
    const o = r.obj(v, path);
    const rule = r.oneOf(o, 'extraction', path, RULE_VALUES);
    // A sample never scored is written with null scores (json-report.ts); kept as ex 0 with its status.
    const ex = o.status === 'missing-db' && o.ex === null ? 0 : r.oneOf(o, 'ex', path, [0, 1] as const);
    const softF1 = o.soft_f1 === undefined ? null : r.nullable(o, 'soft_f1', path, r.num);
    const format = formatReward(rule);
    const rec: SampleRecord = {
      index: r.int(o, 'index', path),
      questionId: r.int(o, 'question_id', path),
      dbId: r.str(o, 'db_id', path),
      difficulty: r.oneOf(o, 'difficulty', path, DIFFICULTY_VALUES),
      ex,
      softF1,
      rves: o.r_ves === undefined ? null : r.nullable(o, 'r_ves', path, r.num),
      timeRatio: o.time_ratio === undefined ? null : r.nullable(o, 'time_ratio', path, r.num),
      ...(o.r_ves_not_timed === undefined ? {} : { rvesNotTimed: r.str(o, 'r_ves_not_timed', path) }),
      status: r.oneOf(o, 'status', path, STATUS_VALUES),
      error: o.error === undefined ? null : r.nullable(o, 'error', path, r.str),
      mutatedDb: o.mutated_db === undefined ? false : r.bool(o, 'mutated_db', path),
      extraction: { rule, thinkStripped: o.think_stripped === undefined ? false : r.bool(o, 'think_stripped', path) },
      predRowCount: o.pred_rows === undefined ? null : r.nullable(o, 'pred_rows', path, r.int),
      goldRowCount: o.gold_rows === undefined ? null : r.nullable(o, 'gold_rows', path, r.int),
      elapsedMs: o.elapsed_ms === undefined ? null : r.nullable(o, 'elapsed_ms', path, r.num),
      sample: o.sample === undefined ? 0 : r.int(o, 'sample', path),
      sql: '',
      goldSql: '',
      format,
      reward: formula.evaluate({ ex, format, softF1 }),
    };
    const key = r.optional(o, 'result_key', path, r.str);
    if (key !== undefined) rec.resultKey = key;
    return rec;
  });
  const perQuestion = new Map<string, number>();
  for (const s of samples)
    perQuestion.set(`${s.index}:${s.questionId}`, (perQuestion.get(`${s.index}:${s.questionId}`) ?? 0) + 1);
  const str = (k: string) => (typeof inputs[k] === 'string' ? (inputs[k] as string) : '');
  const predictions = baseName(str('predictions')) || r.file;
  const questionsName = baseName(str('dataset') || str('gold'));
  return {
    format: RUN_FILE_FORMAT,
    version: RUN_FILE_VERSION,
    run: {
      id: r.file,
      name: predictions,
      // The report records no time.
      createdAt: '',
      updatedAt: '',
      status: 'done',
      source: { kind: 'replay', predictions: unknownFile(predictions) },
      dataset: {
        id: questionsName,
        name: questionsName,
        questions: unknownFile(questionsName),
        gold: str('gold') ? unknownFile(baseName(str('gold'))) : null,
        databases: {},
      },
      subset: {
        description: `items of the eval report ${r.file}`,
        indices: [...new Set(samples.map((s) => s.index))].sort((a, b) => a - b),
      },
      config: {
        ...DEFAULT_RUN_CONFIG,
        metrics,
        timeoutMs: typeof inputs.timeout_s === 'number' ? inputs.timeout_s * 1000 : DEFAULT_RUN_CONFIG.timeoutMs,
        readOnly: inputs.read_only === true,
        vesIterations:
          typeof inputs.ves_iterations === 'number' ? inputs.ves_iterations : DEFAULT_RUN_CONFIG.vesIterations,
        rewardFormula: formulaText,
      },
      samplesPerQuestion: maxOf([...perQuestion.values()], 1),
      // `executor` (e.g. `sql.js 1.17.0`) is in reports since run files exist; older ones say nothing comparable.
      executor: typeof summary.executor === 'string' ? summary.executor : '',
    },
    samples,
  };
}
