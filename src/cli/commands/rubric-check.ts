/**
 * `rubric check`: judge checks that need no people (src/core/rubric/judge-checks.ts): repeat
 * consistency (`--repeat K`), position bias (`--swap`) and preferred vs perturbed
 * (`--perturbed FILE` or `--perturb`), any of them in one run, with `rubric`'s judge flags.
 */
import path from 'node:path';
import { isEngineError } from '../../core/engine/engine-error.ts';
import { WorkbenchError } from '../../core/errors.ts';
import { parseAggregationIds } from '../../core/rubric/aggregations.ts';
import { GREEDY } from '../../core/engine/engine.ts';
import {
  parsePerturbedPairs,
  perturbReferences,
  positionBias,
  preferredVsPerturbed,
  repeatCache,
  repeatConsistency,
  samplePairs,
  type CheckSample,
  type PerturbedPair,
  type PerturbedReport,
  type RepeatReport,
  type ResponsePair,
  type SwapReport,
} from '../../core/rubric/judge-checks.ts';
import { MemoryJudgeCache, type JudgeCache } from '../../core/rubric/judge-cache.ts';
import { Judge, type JudgeStats } from '../../core/rubric/judge.ts';
import { applyWeighting, type WeightingName } from '../../core/rubric/model.ts';
import type { RarRow } from '../../core/rubric/rar-dataset.ts';
import { pairCompletions } from '../../core/rubric/rar-run.ts';
import type { Normalization } from '../../core/rubric/scores.ts';
import { writeFileAtomic } from '../atomic-write.ts';
import { judgeCallFlags } from '../judge-flags.ts';
import { checkOutputs, pathFlags } from '../preflight.ts';
import { RUBRIC_USAGE } from '../usage.ts';
import { bad, numberFlag, parseFlags, requireFlags, strings, switches } from '../flags.ts';
import { readRarInput, readText } from './tabular-input.ts';
import type { NodeHost } from '../node-host.ts';

const usage = RUBRIC_USAGE;

/** More repeats than this only multiply the judge's calls: 2–10 show its variance. */
const MAX_REPEATS = 100;

function parseCheckArgs(argv: string[]) {
  const { values } = parseFlags(
    argv,
    {
      ...strings(
        'dataset',
        'completions',
        'repeat',
        'perturbed',
        'perturb-model',
        'perturb-max-tokens',
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
      ...switches('swap', 'perturb', 'no-clip'),
    },
    usage,
  );
  requireFlags(values, ['judge-url', 'judge-model'], usage);
  const repeat =
    values.repeat === undefined
      ? null
      : numberFlag('--repeat', values.repeat, 2, { min: 2, max: MAX_REPEATS, integer: true });
  const swap = values.swap === true;
  const perturbedFile = values.perturbed ?? null;
  const perturb = values.perturb === true;
  if (repeat === null && !swap && perturbedFile === null && !perturb)
    throw bad('rubric check', `name a check: --repeat K, --swap, --perturbed FILE or --perturb\n${usage}`);
  if (perturbedFile !== null && perturb)
    throw bad(
      '--perturb',
      'give either --perturbed FILE (pairs from a file) or --perturb (made by an engine), not both',
    );
  if (repeat !== null && !values.completions)
    throw bad('--repeat', 'the repeat check judges the samples of --completions: give --dataset and --completions');
  if (swap && !values.completions && perturbedFile === null && !perturb)
    throw bad(
      '--swap',
      'the swap check needs pairs: the samples of a row of --completions (two or more per row), or --perturbed FILE / --perturb',
    );
  if ((values.completions || perturb) && !values.dataset)
    throw bad(
      '--dataset',
      `${values.completions ? '--completions' : '--perturb'} needs --dataset (a RaR-style JSONL file)`,
    );
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
  const weighting = values.weighting ?? 'as-given';
  if (!['as-given', 'paper', 'rar-integers'].includes(weighting))
    throw bad('--weighting', `expected one of as-given, paper, rar-integers, got ${JSON.stringify(weighting)}`);
  const normalization = values.normalization ?? 'positive';
  if (normalization !== 'positive' && normalization !== 'absolute')
    throw bad('--normalization', `expected one of positive, absolute, got ${JSON.stringify(normalization)}`);
  return {
    dataset: values.dataset ?? null,
    completions: values.completions ?? null,
    repeat,
    swap,
    perturbedFile,
    perturb,
    perturbModel: values['perturb-model'] ?? values['judge-model']!,
    perturbMaxTokens: numberFlag('--perturb-max-tokens', values['perturb-max-tokens'], 1024, {
      min: 1,
      max: 1_048_576,
      integer: true,
    }),
    judgeUrl: values['judge-url']!,
    judgeModel: values['judge-model']!,
    apiKeyEnv: envName,
    aggregations: values.aggregation
      ? parseAggregationIds(
          values.aggregation.flatMap((v) => v.split(',')),
          '--aggregation',
        )
      : parseAggregationIds(['all'], '--aggregation'),
    weighting: weighting as WeightingName | 'as-given',
    normalization: normalization as Normalization,
    clip: !values['no-clip'],
    ...judgeCallFlags(values),
    cache: values.cache ?? null,
    out: values.out ?? null,
  };
}

const pct = (x: number | null) => (x === null ? '—' : `${(100 * x).toFixed(1)} %`);

function addStats(total: JudgeStats, s: JudgeStats): void {
  total.calls += s.calls;
  total.cacheHits += s.cacheHits;
  total.malformed += s.malformed;
  total.errors += s.errors;
}

function repeatLines(r: RepeatReport): string[] {
  const lines = [
    `repeat consistency (k = ${r.k}): ${r.overall.flipped} of ${r.overall.n} (sample, criterion) verdict(s) changed across the repeats (${pct(r.overall.share)})` +
      (r.overall.unresolved ? `; ${r.overall.unresolved} without a verdict in some repeat, counted apart` : ''),
  ];
  for (const c of r.perCategory)
    lines.push(`  ${c.category.padEnd(10)} ${c.flipped} of ${c.n} changed (${pct(c.share)})`);
  for (const c of r.perCriterion.filter((c) => c.flipped > 0))
    lines.push(`  ${c.row} ${c.criterion} "${c.title}": ${c.flipped} of ${c.n} sample(s) changed`);
  for (const f of r.flips)
    lines.push(
      `  flip: ${f.row} sample ${f.sample} ${f.criterion}: ${f.verdicts.map((v) => (v === null ? '?' : v ? 'met' : 'not met')).join(' / ')}`,
    );
  return lines;
}

function swapLines(r: SwapReport): string[] {
  return [
    `position bias (${r.pairs} pair(s), each judged with A and B swapped): the winner changes with the order in ${r.flipped} of ${r.resolved} pair(s) (${pct(r.flipShare)})`,
    `  first position wins ${r.firstWins} of ${r.decisive} decisive verdict(s) (${pct(r.firstPositionWinRate)}; 50 % without position bias); A both times in ${r.followsFirst} pair(s), B both times in ${r.followsSecond}` +
      (r.ties ? `; ${r.ties} tie verdict(s)` : '') +
      (r.unresolved ? `; ${r.unresolved} verdict(s) unparseable or failed` : ''),
    ...r.results.filter((p) => p.flipped).map((p) => `  flip: ${p.id}: ${p.xFirst} then ${p.yFirst} (swapped)`),
  ];
}

function perturbedLines(r: PerturbedReport, skipped: Array<{ id: string; reason: string }>): string[] {
  const lines = [`preferred vs perturbed (${r.pairs} pair(s)): share of pairs whose reference gets the higher reward`];
  for (const a of r.aggregations)
    lines.push(
      `  ${`${a.id}@${a.version}`.padEnd(22)} ${pct(a.rate).padStart(8)}  (${a.preferred} of ${a.scored}; ${a.ties} tie(s), perturbed higher ${a.perturbedPreferred}` +
        (a.missing ? `, ${a.missing} without both rewards` : '') +
        ')',
    );
  for (const s of skipped) lines.push(`  skipped ${s.id}: ${s.reason}`);
  return lines;
}

/** `rubric check`: the judge's engine and cache file come from the host of `rubric`. */
export async function run(argv: string[], host: NodeHost): Promise<number> {
  const args = parseCheckArgs(argv);
  await checkOutputs({
    outputs: pathFlags({ '--out': args.out, '--cache': args.cache }),
    inputs: pathFlags({
      '--dataset': args.dataset,
      '--completions': args.completions,
      '--perturbed': args.perturbedFile,
    }),
  });
  const rows: RarRow[] | null = args.dataset ? await readRarInput(host, '--dataset', args.dataset) : null;
  const weighted = (rubric: RarRow['rubric']) =>
    args.weighting === 'as-given' ? rubric : applyWeighting(rubric, args.weighting);
  const samples: CheckSample[] = [];
  if (args.completions && rows) {
    const jobs = pairCompletions(
      await readText('--completions', args.completions),
      path.basename(args.completions),
      rows,
    );
    for (const j of jobs)
      samples.push({
        row: j.row.id,
        index: j.row.index,
        sample: j.sample,
        question: j.row.question,
        reference: j.row.referenceAnswer,
        rubric: weighted(j.row.rubric),
        response: j.completion,
      });
  }
  let filePairs: PerturbedPair[] | null = null;
  if (args.perturbedFile)
    filePairs = parsePerturbedPairs(
      await readText('--perturbed', args.perturbedFile),
      path.basename(args.perturbedFile),
      rows,
    ).map((p) => ({ ...p, rubric: weighted(p.rubric) }));
  const swapPairs = (perturbed: readonly PerturbedPair[]): ResponsePair[] =>
    samples.length > 0
      ? samplePairs(samples)
      : perturbed.map((p) => ({ id: p.id, question: p.question, rubric: p.rubric, x: p.reference, y: p.perturbed }));
  if (args.swap && samples.length > 0 && samplePairs(samples).length === 0)
    throw bad(
      '--swap',
      `no row of ${args.completions} has two or more samples: the swap check compares a row's samples`,
    );

  const cache: JudgeCache = args.cache ? await host.openJudgeCache(args.cache) : new MemoryJudgeCache();
  const engine = host.openAiEngine({
    baseUrl: args.judgeUrl,
    apiKey: args.apiKeyEnv ? process.env[args.apiKeyEnv] : null,
    concurrency: args.concurrency,
    maxRetries: args.httpRetries,
    timeoutMs: args.judgeTimeoutS * 1000,
  });
  const newJudge = (c: JudgeCache) =>
    new Judge({
      engine,
      model: args.judgeModel,
      params: { temperature: args.temperature, maxTokens: args.maxTokens },
      retries: args.retries,
      cache: c,
    });
  const explicit = { normalization: args.normalization, clip: args.clip, unresolved: 'null' as const };
  const stats: JudgeStats = { calls: 0, cacheHits: 0, malformed: 0, errors: 0 };
  const checks: { repeat?: RepeatReport; swap?: SwapReport; perturbed?: PerturbedReport } = {};
  let skipped: Array<{ id: string; reason: string }> = [];
  const lines: string[] = [];
  try {
    await engine.load({ id: args.judgeModel, source: args.judgeUrl });
    let pairs = filePairs;
    if (args.perturb && rows) {
      const made = await perturbReferences({
        rows,
        engine,
        model: args.perturbModel,
        params: { ...GREEDY, maxTokens: args.perturbMaxTokens },
        cache,
        concurrency: args.concurrency,
      });
      pairs = made.pairs.map((p) => ({ ...p, rubric: weighted(p.rubric) }));
      skipped = made.skipped;
      if (pairs.length === 0)
        throw bad(
          '--perturb',
          `no perturbed answer could be made: ${skipped.map((s) => `${s.id}: ${s.reason}`).join('; ')}`,
        );
    }
    if (args.repeat !== null) {
      const judges: Judge[] = [];
      checks.repeat = await repeatConsistency({
        samples,
        k: args.repeat,
        judgeFor: (r) => {
          const j = newJudge(repeatCache(cache, r));
          judges.push(j);
          return j;
        },
        concurrency: args.concurrency,
      });
      judges.forEach((j) => addStats(stats, j.stats));
      lines.push(...repeatLines(checks.repeat));
    }
    if (args.swap) {
      const judge = newJudge(cache);
      checks.swap = await positionBias({ pairs: swapPairs(pairs ?? []), judge, concurrency: args.concurrency });
      addStats(stats, judge.stats);
      lines.push(...swapLines(checks.swap));
    }
    if (pairs) {
      const judge = newJudge(cache);
      checks.perturbed = await preferredVsPerturbed({
        pairs,
        judge,
        aggregations: args.aggregations,
        explicit,
        concurrency: args.concurrency,
      });
      addStats(stats, judge.stats);
      lines.push(...perturbedLines(checks.perturbed, skipped));
    }
  } catch (err) {
    if (!isEngineError(err)) throw err;
    const kept = args.cache ? `; the answers received so far are in ${args.cache}, a rerun asks only for the rest` : '';
    throw new WorkbenchError('BAD_OPTION', `the judge failed: ${err.message}${kept}`, '--judge-url');
  } finally {
    await engine.unload();
  }
  lines.push(
    `judge ${args.judgeModel}: ${stats.calls} call(s), ${stats.cacheHits} cache hit(s), ${stats.malformed} malformed answer(s), ${stats.errors} failed call(s)`,
  );
  process.stdout.write(lines.join('\n') + '\n');
  if (args.out) {
    const out = {
      format: 'rlvr-workbench-judge-checks',
      version: 1,
      inputs: { dataset: args.dataset, completions: args.completions, perturbed: args.perturbedFile },
      judge: { url: args.judgeUrl, ...newJudge(cache).info },
      options: {
        repeat: args.repeat,
        swap: args.swap,
        perturb: args.perturb ? { model: args.perturbModel, prompt: 'rar-perturb-v1' } : null,
        aggregations: args.aggregations,
        weighting: args.weighting,
        normalization: args.normalization,
        clip: args.clip,
        retries: args.retries,
        temperature: args.temperature,
        max_tokens: args.maxTokens,
      },
      checks,
      skipped,
      judge_stats: stats,
    };
    await writeFileAtomic(args.out, JSON.stringify(out, null, 1) + '\n');
  }
  const nothing =
    (checks.repeat && checks.repeat.overall.n === 0) ||
    (checks.swap && checks.swap.resolved === 0) ||
    (checks.perturbed && checks.perturbed.aggregations.every((a) => a.scored === 0));
  if (nothing)
    throw new WorkbenchError(
      'BAD_OPTION',
      `a check got no verdict to count (the judge made ${stats.calls} call(s): ${stats.malformed} malformed answer(s), ${stats.errors} failed): check the judge server, --judge-model (a model that follows the JSON format), --max-tokens and --judge-timeout-s`,
      '--judge-url',
    );
  return 0;
}
