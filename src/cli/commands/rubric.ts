/**
 * `rubric`: score completions of a RaR-style dataset with a judge, under the chosen aggregations
 * of the registry (src/core/rubric/aggregations.ts; default explicit, implicit, Likert).
 */
import path from 'node:path';
import type { NodeHost } from '../node-host.ts';
import { isEngineError } from '../../core/engine/engine-error.ts';
import { WorkbenchError } from '../../core/errors.ts';
import { summarizeRubricScores } from '../../core/rubric/aggregate.ts';
import { MemoryJudgeCache, type JudgeCache } from '../../core/rubric/judge-cache.ts';
import { Judge } from '../../core/rubric/judge.ts';
import { applyWeighting, type WeightingName } from '../../core/rubric/model.ts';
import {
  criterionPassRates,
  passRateRecord,
  passRateSample,
  type CriterionPassRate,
} from '../../core/rubric/pass-rates.ts';
import { readRarInput } from './tabular-input.ts';
import { pairCompletions, type RarJob as Job } from '../../core/rubric/rar-run.ts';
import {
  DEFAULT_AGGREGATION_IDS,
  aggregateByGroup,
  aggregationDef,
  judgingsFor,
  parseAggregationIds,
  summarizeAggregations,
  type AggregationId,
} from '../../core/rubric/aggregations.ts';
import { scoreSample, type Aggregation } from '../../core/rubric/score.ts';
import type { Normalization, RubricScores } from '../../core/rubric/scores.ts';
import { readText } from './eval.ts';
import { bad, parseFlags, requireFlags, strings, switches } from '../flags.ts';
import { writeFileAtomic } from '../atomic-write.ts';
import { assertJudgeScoredSomething, judgeCallFlags } from '../judge-flags.ts';
import { run as runCheck } from './rubric-check.ts';
import { checkRubricOutputs } from '../preflight-commands.ts';
import { RUBRIC_USAGE } from '../usage.ts';

export const usage = RUBRIC_USAGE;

interface RubricArgs {
  dataset: string;
  completions: string;
  judgeUrl: string;
  judgeModel: string;
  apiKeyEnv: string | null;
  /** The registry's aggregations shown and written. */
  aggregations: AggregationId[];
  /** The judge calls they need. */
  judgings: Aggregation[];
  weighting: WeightingName | 'as-given';
  normalization: Normalization;
  clip: boolean;
  retries: number;
  temperature: number;
  maxTokens: number;
  concurrency: number;
  httpRetries: number;
  judgeTimeoutS: number;
  cache: string | null;
  out: string | null;
}

function oneOf<T extends string>(flag: string, v: string | undefined, allowed: readonly T[], def: T): T {
  if (v === undefined) return def;
  if (!(allowed as readonly string[]).includes(v))
    throw bad(flag, `expected one of ${allowed.join(', ')}, got ${JSON.stringify(v)}`);
  return v as T;
}

function parseRubricArgs(argv: string[]): RubricArgs {
  const { values } = parseFlags(
    argv,
    {
      ...strings(
        'dataset',
        'completions',
        'judge-url',
        'judge-model',
        'judge-api-key-env',
        'weighting',
        'normalization',
        'retries',
        'temperature',
        'max-tokens',
        'concurrency',
        'http-retries',
        'judge-timeout-s',
        'cache',
        'out',
      ),
      aggregation: { type: 'string', multiple: true },
      ...switches('no-clip'),
    },
    usage,
  );
  requireFlags(values, ['dataset', 'completions', 'judge-url', 'judge-model'], usage);
  // `--aggregation` repeated, or a comma-separated list, or `all`.
  const aggregations = values.aggregation
    ? parseAggregationIds(
        values.aggregation.flatMap((v) => v.split(',')),
        '--aggregation',
      )
    : [...DEFAULT_AGGREGATION_IDS];
  let judgeUrl: URL;
  try {
    judgeUrl = new URL(values['judge-url']!);
  } catch {
    throw bad('--judge-url', `not a URL: ${JSON.stringify(values['judge-url'])} (e.g. http://127.0.0.1:8000/v1)`);
  }
  if (judgeUrl.protocol !== 'http:' && judgeUrl.protocol !== 'https:')
    throw bad('--judge-url', `use an http(s) URL, got ${judgeUrl.protocol}`);
  const envName = values['judge-api-key-env'] ?? null;
  if (envName !== null && !process.env[envName])
    throw bad('--judge-api-key-env', `the environment variable ${envName} is not set`);
  return {
    dataset: values.dataset!,
    completions: values.completions!,
    judgeUrl: values['judge-url']!,
    judgeModel: values['judge-model']!,
    apiKeyEnv: envName,
    aggregations,
    judgings: judgingsFor(aggregations),
    weighting: oneOf('--weighting', values.weighting, ['as-given', 'paper', 'rar-integers'] as const, 'as-given'),
    normalization: oneOf('--normalization', values.normalization, ['positive', 'absolute'] as const, 'positive'),
    clip: !values['no-clip'],
    ...judgeCallFlags(values),
    cache: values.cache ?? null,
    out: values.out ?? null,
  };
}

const fmt = (x: number | null | undefined) => (x === null || x === undefined ? '—' : x.toFixed(3));

/** Why a sample can lack a value of an aggregation, for the means' lines. */
const REASONS: Record<AggregationId, string> = {
  explicit: 'unparseable, error or unresolved criteria',
  'explicit-abs': 'unparseable, error or unresolved criteria',
  'explicit-unclipped': 'unparseable, error or unresolved criteria',
  implicit: 'unparseable, error or unresolved criteria',
  likert: 'unparseable, error or unresolved criteria',
  veto: 'unresolved criteria and no veto, or no positive weight',
  minimum: 'unresolved criteria and none failed',
  'all-must-pass': 'unresolved criteria and none failed, or no Essential, Important or Pitfall criterion',
  'rule-x-judge': 'no rule_score in the completions line, or unresolved criteria',
  'group-rank': 'no explicit score, or the only scored sample of its question',
};

export async function run(argv: string[], host: NodeHost): Promise<number> {
  // `rubric check ...`: the judge checks, with this command's engine and cache file.
  if (argv[0] === 'check') return runCheck(argv.slice(1), host);
  const args = parseRubricArgs(argv);
  await checkRubricOutputs(args);
  const rows = await readRarInput(host, '--dataset', args.dataset);
  const jobs = pairCompletions(
    await readText('--completions', args.completions),
    path.basename(args.completions),
    rows,
  );
  const cache: JudgeCache = args.cache ? await host.openJudgeCache(args.cache) : new MemoryJudgeCache();
  const engine = host.openAiEngine({
    baseUrl: args.judgeUrl,
    apiKey: args.apiKeyEnv ? process.env[args.apiKeyEnv] : null,
    concurrency: args.concurrency,
    maxRetries: args.httpRetries,
    timeoutMs: args.judgeTimeoutS * 1000,
  });
  const judge = new Judge({
    engine,
    model: args.judgeModel,
    params: { temperature: args.temperature, maxTokens: args.maxTokens },
    retries: args.retries,
    cache,
  });
  const explicit = { normalization: args.normalization, clip: args.clip, unresolved: 'null' as const };

  const results: Array<{ job: Job; scores: RubricScores }> = [];
  try {
    await engine.load({ id: args.judgeModel, source: args.judgeUrl });
    for (const job of jobs) {
      const rubric = args.weighting === 'as-given' ? job.row.rubric : applyWeighting(job.row.rubric, args.weighting);
      const scores = await scoreSample(
        rubric,
        { question: job.row.question, reference: job.row.referenceAnswer, completion: job.completion },
        { aggregations: args.judgings, explicit, judge, concurrency: args.concurrency },
      );
      results.push({ job, scores });
    }
  } catch (err) {
    // A failure of the whole judge (unreachable, refused, unknown model): nothing to score with.
    if (!isEngineError(err)) throw err;
    const kept = args.cache ? `; the answers received so far are in ${args.cache}, a rerun asks only for the rest` : '';
    throw new WorkbenchError(
      'BAD_OPTION',
      `the judge failed after ${results.length} of ${jobs.length} sample(s): ${err.message}${kept}`,
      '--judge-url',
    );
  } finally {
    await engine.unload();
  }

  const itemsOf = (job: (typeof results)[number]['job']) =>
    (args.weighting === 'as-given' ? job.row.rubric : applyWeighting(job.row.rubric, args.weighting)).items;
  // The registry's aggregations per sample; group-rank ranks the samples of one dataset row.
  const values = aggregateByGroup(
    results,
    ({ job }) => job.row.index,
    ({ job, scores }) => ({
      items: itemsOf(job),
      scores,
      rule: job.rule,
    }),
    args.aggregations,
    explicit,
  );
  results.forEach((r, i) => (r.scores.aggregations = values[i]!));
  const summary = summarizeRubricScores(results.map((r) => r.scores));
  const means = summarizeAggregations(values, args.aggregations);
  // Columns: explicit, implicit and Likert as always, then the other chosen aggregations.
  const extra = args.aggregations.filter((id) => !DEFAULT_AGGREGATION_IDS.includes(id));
  const widths = [10, 10, 10, 10, 10, ...extra.map((id) => Math.max(10, id.length))];
  const cells = (c: string[]) =>
    c
      .map((x, i) => x.padEnd(widths[i] ?? 10))
      .join(' ')
      .trimEnd();
  const lines = [cells(['row', 'sample', 'explicit', 'implicit', 'likert', ...extra, 'flags'])];
  results.forEach(({ job, scores: s }, i) => {
    const flags = [
      s.explicit?.status === 'incomplete' ? `unresolved:${s.explicit.unresolved.join(',')}` : '',
      s.implicit && s.implicit.status !== 'ok' ? `implicit:${s.implicit.status}` : '',
      s.likert && s.likert.status !== 'ok' ? `likert:${s.likert.status}` : '',
      s.promptInjection.flagged ? `prompt-injection:${s.promptInjection.matches.map((m) => m.pattern).join(',')}` : '',
    ]
      .filter(Boolean)
      .join(' ');
    const more = extra.map((id) => fmt(values[i]!.find((v) => v.id === id)?.score));
    lines.push(
      cells([
        job.row.id,
        String(job.sample),
        fmt(s.explicit?.score),
        fmt(s.implicit?.score),
        fmt(s.likert?.score),
        ...more,
        flags,
      ]),
    );
  });
  lines.push('');
  for (const m of means) {
    const why = REASONS[m.id];
    lines.push(
      `${m.id.padEnd(9)} mean ${fmt(m.mean)} over ${m.n} sample(s)${m.missing ? `, ${m.missing} without a score (${why})` : ''}`,
    );
  }
  // Each row's criteria over the row's samples: the ones that do not tell samples apart.
  const passRates = criterionPassRates(
    results.map(({ job, scores }) => passRateSample(job.row.id, itemsOf(job), scores)),
  );
  lines.push('', ...passRateLines(passRates), '');
  lines.push(
    `judge ${args.judgeModel}: ${judge.stats.calls} call(s), ${judge.stats.cacheHits} cache hit(s), ${judge.stats.malformed} malformed answer(s), ${judge.stats.errors} failed call(s)`,
  );
  if (summary.promptInjection)
    lines.push(`warning: ${summary.promptInjection} completion(s) address the judge (prompt-injection flag)`);
  process.stdout.write(lines.join('\n') + '\n');

  if (args.out) {
    const out = {
      format: 'rlvr-workbench-rubric-scores',
      version: 1,
      inputs: { dataset: args.dataset, completions: args.completions },
      judge: { url: args.judgeUrl, ...judge.info },
      options: {
        aggregations: args.aggregations,
        aggregation_versions: Object.fromEntries(args.aggregations.map((id) => [id, aggregationDef(id).version])),
        weighting: args.weighting,
        normalization: args.normalization,
        clip: args.clip,
        retries: args.retries,
        temperature: args.temperature,
        max_tokens: args.maxTokens,
      },
      summary: {
        ...summary,
        aggregations: means,
        pass_rates: passRates.map(passRateRecord),
        judge_stats: { ...judge.stats },
      },
      items: results.map(({ job, scores }) => ({ index: job.row.index, id: job.row.id, sample: job.sample, scores })),
    };
    await writeFileAtomic(args.out, JSON.stringify(out, null, 1) + '\n');
  }
  assertJudgeScoredSomething(summary, args.judgings, judge.stats, results.length);
  return 0;
}

/** Criteria listed one per line up to this many; beyond, the count line alone (`--out` has them all). */
const PASS_RATE_LINES = 60;

/** The pass-rate block of standard output: a count line, then each criterion when there are few. */
function passRateLines(rates: readonly CriterionPassRate[]): string[] {
  const allPass = rates.filter((r) => r.notDiscriminating === 'all-pass').length;
  const allFail = rates.filter((r) => r.notDiscriminating === 'all-fail').length;
  const few = rates.filter((r) => r.n < 2).length;
  const head = `pass rates: ${rates.length} criteria (per row), ${allPass + allFail} not discriminating (${allPass} passed by every sample, ${allFail} failed by every sample), ${few} with fewer than 2 verdicts`;
  if (rates.length > PASS_RATE_LINES) return [`${head}; each criterion's rate is in --out (summary.pass_rates)`];
  return [
    head,
    ...rates.map(
      (r) =>
        `  ${r.group} ${r.criterion} [${r.category}] ${fmt(r.rate)} (${r.passed}/${r.n}${r.unresolved ? `, ${r.unresolved} without a verdict` : ''})${r.notDiscriminating ? ` not discriminating: ${r.notDiscriminating}` : ''}`,
    ),
  ];
}
