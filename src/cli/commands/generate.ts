/**
 * `generate`: a policy preset (src/core/prompt/presets.ts) run against an OpenAI-compatible chat
 * server, single- or multi-turn, and scored by the run recipe like a replay (`eval`). Multi-turn
 * presets play each sample as an episode whose probes run in the run's SQL pool, read-only; the
 * run file keeps every turn (`SampleRecord.episode`) and the preset's whole content in its header.
 */
import { randomUUID } from 'node:crypto';
import { stat } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import type { NodeHost } from '../node-host.ts';
import { WorkbenchError } from '../../core/errors.ts';
import { EX_RULE_LABEL, type ExRule } from '../../core/compare/spider-ex.ts';
import { OFFICIAL_TIMEOUT_S } from '../../core/eval/constants.ts';
import { itemJson, summaryJson } from '../../core/eval/json-report.ts';
import { officialTable, samplesNote } from '../../core/eval/report.ts';
import { summarize } from '../../core/eval/summary.ts';
import { parseGoldSql } from '../../core/formats/gold.ts';
import { presetFingerprint, type PolicyPreset } from '../../core/prompt/presets.ts';
import { remainingJobs } from '../../core/run/generation.ts';
import { presetSampling, runPresetGeneration, type PresetSampling } from '../../core/run/preset-generation.ts';
import { generationScorer } from '../../core/run/score-run.ts';
import { DEFAULT_RUN_CONFIG, type RunHeader, type SampleRecord } from '../../core/run/types.ts';
import { runFileJson, toRunFile } from '../../core/runfile/export.ts';
import { SPIDER_LEVELS, type Question } from '../../core/types.ts';
import { writeFileAtomic } from '../atomic-write.ts';
import { checkTimerFlags, workersFlag } from '../bounds.ts';
import { assertSomethingScored } from '../nothing-scored.ts';
import { checkOutputs } from '../preflight.ts';
import { GENERATE_USAGE } from '../usage.ts';
import { resolveDbRoot } from './db-root-zip.ts';
import { bad, numberFlag, parseFlags, requireFlags, strings, switches } from '../flags.ts';
import {
  checkTablesCover,
  needsTables,
  openPresetSchemas,
  presetFlag,
  readTables,
  tablesFile,
} from './preset-flags.ts';
import { executorName, fileRef, hashDatabases, checkDatabasesUnchanged, runQuestions } from './run-out.ts';
import { readQuestionsInput, readText } from './tabular-input.ts';

export const usage = GENERATE_USAGE;

interface GenerateArgs {
  endpoint: string;
  model: string;
  preset: PolicyPreset;
  dataset: string;
  gold: string;
  dbRoot: string;
  tables: string | null;
  sampling: PresetSampling;
  limit: number | null;
  concurrency: number;
  apiKeyEnv: string | null;
  timeoutS: number;
  workers: number | null;
  out: string | null;
  runOut: string | null;
}

function parseGenerateArgs(argv: string[]): GenerateArgs {
  const { values } = parseFlags(
    argv,
    {
      ...strings(
        'endpoint',
        'model',
        'preset',
        'dataset',
        'gold',
        'db-root',
        'tables',
        'n',
        'seed',
        'limit',
        'concurrency',
        'api-key-env',
        'timeout-s',
        'workers',
        'out',
        'run-out',
      ),
      ...switches('self-consistency'),
    },
    GENERATE_USAGE,
  );
  requireFlags(values, ['endpoint', 'model', 'preset', 'dataset', 'gold', 'db-root'], GENERATE_USAGE);
  let url: URL;
  try {
    url = new URL(values.endpoint!);
  } catch {
    throw bad('--endpoint', `not a URL: ${JSON.stringify(values.endpoint)} (e.g. http://127.0.0.1:8000/v1)`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw bad('--endpoint', `use an http(s) URL, got ${url.protocol}`);
  const preset = presetFlag(values.preset!);
  if (values.n !== undefined && values['self-consistency'])
    throw bad('--n', 'cannot be combined with --self-consistency, which sets the samples per question: give one');
  const n = values.n === undefined ? undefined : numberFlag('--n', values.n, 1, { min: 1, max: 1000, integer: true });
  if (values['self-consistency'] && !preset.sampling.selfConsistency)
    throw bad('--self-consistency', `preset ${preset.id} publishes no self-consistency setting: leave the flag out`);
  const seed = numberFlag('--seed', values.seed, 0, { min: 0, max: 2 ** 31 - 1, integer: true });
  const envName = values['api-key-env'] ?? null;
  if (envName !== null && !process.env[envName])
    throw bad('--api-key-env', `the environment variable ${envName} is not set`);
  const timeoutS = numberFlag('--timeout-s', values['timeout-s'], OFFICIAL_TIMEOUT_S, {
    min: 0,
    max: Infinity,
    minExclusive: true,
  });
  checkTimerFlags(timeoutS, null);
  return {
    endpoint: values.endpoint!,
    model: values.model!,
    preset,
    dataset: values.dataset!,
    gold: values.gold!,
    dbRoot: values['db-root']!,
    tables: values.tables ?? null,
    sampling: presetSampling(preset, { n, selfConsistency: values['self-consistency'] ?? false, seed }),
    limit:
      values.limit === undefined
        ? null
        : numberFlag('--limit', values.limit, 1, { min: 1, max: Number.MAX_SAFE_INTEGER, integer: true }),
    concurrency: numberFlag('--concurrency', values.concurrency, 4, { min: 1, max: 256, integer: true }),
    apiKeyEnv: envName,
    timeoutS,
    workers: workersFlag(values.workers),
    out: values.out ?? null,
    runOut: values['run-out'] ?? null,
  };
}

export async function run(argv: string[], host: NodeHost): Promise<number> {
  const args = parseGenerateArgs(argv);
  const tables = needsTables(args.preset) ? await tablesFile(args.preset, args) : null;
  await checkOutputs({
    outputs: [
      { flag: '--out', file: args.out },
      { flag: '--run-out', file: args.runOut },
    ],
    inputs: [
      { flag: '--gold', file: args.gold },
      { flag: '--dataset', file: args.dataset },
      { flag: '--tables', file: tables },
    ],
    inputDirs: [{ flag: '--db-root', file: args.dbRoot }],
  });
  const root = await resolveDbRoot(host, args.dbRoot);
  try {
    await generate(host, args, root.dir, tables);
  } finally {
    await root.cleanup();
  }
  return 0;
}

/** The EX rule of the dataset: Spider's when its questions carry Spider's levels. */
const ruleOf = (questions: readonly Question[]): ExRule =>
  questions.some((q) => SPIDER_LEVELS.includes(q.difficulty)) ? 'spider' : 'bird';

async function generate(host: NodeHost, args: GenerateArgs, dbRoot: string, tables: string | null): Promise<void> {
  const { preset, sampling } = args;
  const dbRootStat = await stat(dbRoot).catch(() => null);
  if (!dbRootStat?.isDirectory())
    throw new WorkbenchError(
      'MISSING_FILE',
      `not a directory: ${dbRoot} (expected <db-root>/<db_id>/<db_id>.sqlite)`,
      '--db-root',
    );
  const questions = await readQuestionsInput(host, '--dataset', args.dataset);
  const gold = parseGoldSql(await readText('--gold', args.gold), path.basename(args.gold));
  if (gold.length !== questions.length)
    throw new WorkbenchError(
      'MISMATCH',
      `${path.basename(args.gold)} has ${gold.length} gold queries but ${path.basename(args.dataset)} has ${questions.length} questions: name the gold file of this dataset`,
      '--gold',
    );
  const indices = questions.map((_, i) => i).slice(0, args.limit ?? questions.length);
  const dbIds = [...new Set(indices.map((i) => questions[i]!.dbId))];
  const entries = tables ? await readTables(tables) : [];
  if (tables) checkTablesCover(preset, entries, tables, dbIds);
  const exRule = ruleOf(questions);
  const config = {
    ...DEFAULT_RUN_CONFIG,
    timeoutMs: args.timeoutS * 1000,
    ...(exRule === 'spider' ? { exRule } : {}),
  };
  const apiKey = args.apiKeyEnv ? process.env[args.apiKeyEnv]! : null;
  const engine = host.openAiEngine({
    baseUrl: args.endpoint,
    model: args.model,
    apiKey,
    concurrency: args.concurrency,
  });
  const pool = host.sql.pool({ dbRoot, workers: args.workers ?? availableParallelism() });
  let disposeSchemas = () => {};
  try {
    await engine.load({ id: args.model, source: args.endpoint });
    const hashed = args.runOut ? await hashDatabases(dbRoot, dbIds) : undefined;
    const schemas = await openPresetSchemas(host, preset, dbRoot, entries);
    disposeSchemas = schemas.dispose;
    const schema = schemas.schema;
    const scorer = generationScorer(config, { executor: pool, questionOf: (i) => questions[i]?.question ?? null });
    const records: SampleRecord[] = [];
    const jobs = remainingJobs({ indices, questions, gold, n: sampling.n }, new Set());
    const outcome = await runPresetGeneration(
      { engine: 'openai', model: { id: args.model, source: args.endpoint }, preset, sampling },
      config,
      jobs,
      {
        engine,
        schema,
        probe: (dbId, sql, o) => pool.probe(dbId, sql, o),
        evaluate: (items, signal) => scorer.evaluate(items, signal),
        store: (samples) => records.push(...samples),
        now: () => performance.now(),
      },
      { signal: new AbortController().signal, concurrency: engine.concurrency },
    );
    if (outcome.kind !== 'done')
      throw new WorkbenchError('FAILED', `the generation stopped (${outcome.kind}) before every question was scored`);
    if (hashed) await checkDatabasesUnchanged(dbRoot, hashed, args.dbRoot);
    records.sort((a, b) => a.index - b.index || a.sample - b.sample);
    assertSomethingScored(records, dbRoot);
    const summary = summarize(records, config.metrics);
    const facts = scorer.facts();
    process.stdout.write(officialTable(summary) + '\n');
    process.stdout.write(`EX rule: ${EX_RULE_LABEL[exRule]}\n`);
    process.stdout.write(`preset: ${preset.id} (${presetFingerprint(preset)}), ${sampling.n} sample(s) per question\n`);
    const note = samplesNote(summary);
    if (note) process.stdout.write(`${note} Use \`stats\` for pass@k and maj@k.\n`);
    if (preset.multiTurn) process.stdout.write(episodeLine(records) + '\n');
    const failed = records.filter((r) => r.generation?.error !== undefined).length;
    if (failed > 0)
      process.stderr.write(`warning: ${failed} sample(s) ended on an engine error (scored without SQL)\n`);
    if (args.out) {
      const report = {
        summary: summaryJson(summary, {
          inputs: {
            endpoint: args.endpoint,
            model: args.model,
            preset: preset.id,
            preset_fingerprint: presetFingerprint(preset),
            dataset: args.dataset,
            gold: args.gold,
            db_root: args.dbRoot,
            tables,
            samples_per_question: sampling.n,
            timeout_s: args.timeoutS,
          },
          executor: executorName(),
          sqlite_version: facts.sqliteVersion,
          ex_rule: exRule,
        }),
        items: records.map((r) => ({
          ...itemJson(r),
          ...(r.episode
            ? {
                turns: r.episode.turnsUsed,
                end_reason: r.episode.endReason,
                preset_reward: r.episode.presetReward,
              }
            : {}),
        })),
      };
      await writeFileAtomic(args.out, JSON.stringify(report, null, 1) + '\n');
    }
    if (args.runOut) {
      const header = await runHeader(args, records, indices, hashed!, engine.device()?.detail);
      if (facts.sqliteVersion) header.sqliteVersion = facts.sqliteVersion;
      const file = toRunFile(header, records, runQuestions(records, questions));
      await writeFileAtomic(args.runOut, runFileJson(file) + '\n');
    }
  } finally {
    disposeSchemas();
    await pool.dispose();
    await engine.unload();
  }
}

/** The episodes of a multi-turn run in one line: turns used, probes that failed, how they ended. */
function episodeLine(records: readonly SampleRecord[]): string {
  const eps = records.flatMap((r) => (r.episode ? [r.episode] : []));
  const count = (reason: string) => eps.filter((e) => e.endReason === reason).length;
  const turns = eps.reduce((s, e) => s + e.turnsUsed, 0);
  const failed = eps.reduce((s, e) => s + e.probesFailed, 0);
  return (
    `episodes: ${eps.length}, ${turns} turns (${eps.length ? (turns / eps.length).toFixed(2) : '0'} per episode), ${failed} probe(s) failed; ` +
    `ended at the solution ${count('solution')}, at the turn limit ${count('turn-limit')}, ` +
    `with a format failure ${count('format-failure')}, on an engine error ${count('engine-error')}`
  );
}

async function runHeader(
  args: GenerateArgs,
  records: readonly SampleRecord[],
  indices: readonly number[],
  hashed: ReadonlyMap<string, string>,
  deviceDetail: string | undefined,
): Promise<RunHeader> {
  const present = [...new Set(records.filter((r) => r.status !== 'missing-db').map((r) => r.dbId))].sort();
  const databases: Record<string, string> = {};
  for (const db of present) {
    const sha = hashed.get(db);
    if (sha) databases[db] = sha;
  }
  const now = new Date().toISOString();
  const name = path.basename(args.dataset);
  const { preset } = args;
  return {
    id: randomUUID(),
    name: `${args.model} · ${preset.id}`,
    createdAt: now,
    updatedAt: now,
    status: 'done',
    source: { kind: 'generation', engine: 'openai', model: args.model, template: preset.id },
    dataset: {
      id: name,
      name,
      questions: await fileRef(args.dataset),
      gold: await fileRef(args.gold),
      databases,
    },
    subset: {
      description: args.limit === null ? 'every question' : `the first ${indices.length} questions`,
      indices: [...indices],
    },
    config: {
      ...DEFAULT_RUN_CONFIG,
      timeoutMs: args.timeoutS * 1000,
      ...(ruleOfRecords(records) === 'spider' ? { exRule: 'spider' as const } : {}),
    },
    samplesPerQuestion: args.sampling.n,
    executor: executorName(),
    device: { device: 'server', reason: null, ...(deviceDetail ? { detail: deviceDetail } : {}) },
    preset: { id: preset.id, fingerprint: presetFingerprint(preset), content: structuredClone(preset) },
  };
}

const ruleOfRecords = (records: readonly SampleRecord[]): ExRule =>
  records.some((r) => SPIDER_LEVELS.includes(r.difficulty)) ? 'spider' : 'bird';
