/**
 * What `stats` prints and writes. The JSON keys `questions`, `samples_per_question`,
 * `pass_at_k`, `maj_at_k`, `zero_variance_share` and `frontier_share` are a contract
 * (fractions in [0, 1], k as string keys); the rest may grow.
 */
import { ALL_SCORERS, SCORERS } from './best-of-n.ts';
import { explain, pct } from './explanations.ts';
import { GRPO_EPSILON } from './grpo.ts';
import type { Bin } from './histogram.ts';
import type { RunStats, StatsBucket } from './run-stats.ts';
import { maxOf } from '../util/numbers.ts';

interface StatsMeta {
  runName: string;
  runId: string;
  rewardFormula: string;
  seed: number;
}

export const MAJ_METHOD =
  'k < n: exact expectation over all k-sample subsets, a tie between t groups giving each 1/t; ' +
  'k = n: one vote over all samples, ties broken by mulberry32(seed); samples that did not execute or held no SQL do not vote';

const keyed = (r: Record<number, number>) => Object.fromEntries(Object.entries(r).map(([k, v]) => [String(k), v]));
const binJson = (b: Bin) => ({
  label: b.label,
  lo: b.lo,
  hi: b.hi,
  lo_open: b.loOpen,
  hi_open: b.hiOpen,
  count: b.count,
});

function bucketJson(b: StatsBucket) {
  return {
    questions: b.questions,
    samples: b.samples,
    samples_per_question: b.nMin,
    samples_per_question_max: b.nMax,
    mean_ex: b.meanEx,
    mean_reward: b.meanReward,
    pass_at_k: keyed(b.passAtK),
    maj_at_k: keyed(b.majAtK),
    best_of_n: b.bestOfN,
    zero_variance_share: b.zeroVarianceShare,
    no_gradient_share: b.noGradientShare,
    frontier_share: b.frontierShare,
    all_correct_share: b.allCorrectShare,
    all_wrong_share: b.allWrongShare,
    grpo: {
      epsilon: GRPO_EPSILON,
      mean_abs_advantage: b.meanAbsAdvantage,
      advantage_histogram: b.advantageHistogram.map(binJson),
    },
    pass_rate_histogram: b.passRateHistogram.map(binJson),
  };
}

/** One line per statistic with the run's values (for the JSON, the table footer and the UI). */
export function statsExplanations(b: StatsBucket, ks: readonly number[]): Record<string, string> {
  const out: Record<string, string> = {
    questions: explain('questions'),
    mean_ex: explain('mean_ex', { share: b.meanEx }),
  };
  for (const k of ks) {
    out[`pass_at_${k}`] = explain('pass_at_k', { k, share: b.passAtK[k]! });
    out[`maj_at_${k}`] = explain('maj_at_k', { k, share: b.majAtK[k]! });
  }
  for (const s of ALL_SCORERS) {
    const v = b.bestOfN[s.id];
    if (typeof v === 'number')
      out[`best_of_n_${s.id}`] = explain(`best_of_n_${s.id}` as 'best_of_n_oracle', { n: b.nMin, share: v });
  }
  out.zero_variance_share = explain('zero_variance_share', { share: b.zeroVarianceShare });
  out.no_gradient_share = explain('no_gradient_share', { share: b.noGradientShare });
  out.frontier_share = explain('frontier_share', { share: b.frontierShare });
  out.all_correct_share = explain('all_correct_share', { share: b.allCorrectShare });
  out.all_wrong_share = explain('all_wrong_share', { share: b.allWrongShare });
  out.mean_abs_advantage = explain('mean_abs_advantage', { value: b.meanAbsAdvantage.toFixed(3) });
  out.pass_rate_histogram = explain('pass_rate_histogram');
  out.advantage_histogram = explain('advantage_histogram');
  return out;
}

export function statsJson(stats: Omit<RunStats, 'prompts'>, meta: StatsMeta) {
  return {
    run: { id: meta.runId, name: meta.runName, reward_formula: meta.rewardFormula },
    ...bucketJson(stats.overall),
    excluded_missing_db: stats.missingDb,
    seed: meta.seed,
    ks: stats.ks,
    maj_at_k_method: MAJ_METHOD,
    by_difficulty: Object.fromEntries(Object.entries(stats.byDifficulty).map(([d, b]) => [d, bucketJson(b!)])),
    explanations: statsExplanations(stats.overall, stats.ks),
  };
}

const pad = (s: string, w: number) => s.padEnd(w);
const fmt = (v: number | null | undefined) => (typeof v === 'number' ? pct(v) : '-');

function histogramLines(bins: readonly Bin[]): string[] {
  const max = Math.max(1, maxOf(bins.map((b) => b.count)));
  const w = maxOf(bins.map((b) => b.label.length)) + 2;
  return bins.map((b) =>
    `  ${pad(b.label, w)}${pad(String(b.count), 6)}${'#'.repeat(Math.round((b.count / max) * 40))}`.trimEnd(),
  );
}

export function statsTable(stats: RunStats, meta: StatsMeta): string {
  const o = stats.overall;
  const nText = o.nMin === o.nMax ? `n = ${o.nMin}` : `n = ${o.nMin} to ${o.nMax}`;
  const lines: string[] = [
    `run: ${meta.runName}`,
    `${o.questions} questions, ${nText} samples per question (${o.samples} samples), reward = ${meta.rewardFormula}`,
  ];
  if (stats.missingDb > 0) lines.push(`(${stats.missingDb} samples left out: database missing)`);
  lines.push('', `${pad('k', 6)}${pad('pass@k', 10)}maj@k`);
  for (const k of stats.ks) lines.push(`${pad(String(k), 6)}${pad(fmt(o.passAtK[k]), 10)}${fmt(o.majAtK[k])}`);
  lines.push(`maj@k: ${MAJ_METHOD.replace('mulberry32(seed)', `mulberry32(${meta.seed})`)}`);
  const shown = ALL_SCORERS.filter((s) => SCORERS.includes(s) || o.bestOfN[s.id] !== undefined);
  lines.push('', `best-of-${o.nMin}: ` + shown.map((s) => `${s.label} ${fmt(o.bestOfN[s.id])}`).join('   '));
  if (o.nMax > 1) {
    lines.push(
      '',
      `GRPO groups (verl: advantage = (r - mean) / (std + ${GRPO_EPSILON.toExponential()}), unbiased std; one sample: mean 0, std 1)`,
      `  zero variance ${pct(o.zeroVarianceShare)}   no gradient ${pct(o.noGradientShare)}   frontier ${pct(o.frontierShare)}   ` +
        `all right ${pct(o.allCorrectShare)}   all wrong ${pct(o.allWrongShare)}   mean |advantage| ${o.meanAbsAdvantage.toFixed(3)}`,
    );
  } else {
    // n = 1: a group is a prompt's samples; with one there is none, and no group statistic means anything.
    lines.push('', 'GRPO groups: none (n = 1; GRPO needs n >= 2 samples per prompt to compare them)');
  }
  const kTop = stats.ks[stats.ks.length - 1]!;
  const kCols = kTop > 1 ? [`pass@${kTop}`, `maj@${kTop}`] : [];
  const groups = o.nMax > 1;
  lines.push(
    '',
    [
      pad('difficulty', 13),
      pad('questions', 11),
      pad('pass@1', 9),
      ...kCols.map((c) => pad(c, 9)),
      ...(groups ? [pad('zero-var', 10), 'frontier'] : []),
    ]
      .join('')
      .trimEnd(),
  );
  for (const [d, b] of [...Object.entries(stats.byDifficulty), ['total', o] as const]) {
    const kVals = kTop > 1 ? [fmt(b!.passAtK[kTop]), fmt(b!.majAtK[kTop])] : [];
    lines.push(
      [
        pad(d, 13),
        pad(String(b!.questions), 11),
        pad(fmt(b!.meanEx), 9),
        ...kVals.map((v) => pad(v, 9)),
        ...(groups ? [pad(pct(b!.zeroVarianceShare), 10), pct(b!.frontierShare)] : []),
      ]
        .join('')
        .trimEnd(),
    );
  }
  lines.push('', 'pass rate per question', ...histogramLines(o.passRateHistogram));
  if (groups) lines.push('', 'GRPO advantage per sample', ...histogramLines(o.advantageHistogram));
  lines.push('', 'what the numbers mean');
  const ex = statsExplanations(o, stats.ks);
  const show = [
    'mean_ex',
    `pass_at_${kTop}`,
    `maj_at_${kTop}`,
    ...ALL_SCORERS.map((s) => `best_of_n_${s.id}`),
    ...(groups
      ? ['zero_variance_share', 'frontier_share', 'all_correct_share', 'all_wrong_share', 'mean_abs_advantage']
      : []),
  ];
  for (const id of show) if (ex[id]) lines.push(`  - ${ex[id]}`);
  return lines.join('\n');
}
