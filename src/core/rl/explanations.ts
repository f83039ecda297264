/**
 * One line per statistic for students: what the number means for RL training. A data table
 * (no logic), filled in by `explain` with the run's values: `{pct}` is a share as a
 * percentage, other `{names}` are given by the caller.
 */
const EXPLANATIONS = {
  questions: 'Prompts (questions) scored; samples whose database is missing are left out.',
  mean_ex: 'Mean EX over samples = {pct}: the accuracy of one sample, the same as pass@1.',
  pass_at_k:
    'pass@{k} = {pct}: the chance that at least one of {k} samples is correct; RL can only reinforce answers the policy already finds sometimes.',
  maj_at_k:
    'maj@{k} = {pct}: accuracy when {k} samples vote with their execution results (self-consistency); above pass@1 when the right answer is also the most frequent one.',
  best_of_n_oracle:
    'best-of-{n} with an oracle = {pct}: the ceiling if a perfect verifier picked one of {n} samples (equals pass@{n}).',
  best_of_n_mean_logprob:
    'best-of-{n} by mean logprob = {pct}: picking the sample the policy is most confident in, with no verifier.',
  best_of_n_rubric: 'best-of-{n} by rubric score = {pct}: picking the sample a rubric grader likes best.',
  best_of_n_rubric_veto:
    'best-of-{n} by the rubric veto = {pct}: picking the best sample by explicit score among those with no failed Essential and no triggered Pitfall.',
  best_of_n_rubric_minimum:
    'best-of-{n} by the rubric minimum = {pct}: picking the first sample that passes every criterion (Optional included).',
  best_of_n_rubric_all_must_pass:
    'best-of-{n} by rubric all-must-pass = {pct}: picking the first sample that passes every Essential and Important criterion and triggers no Pitfall.',
  best_of_n_rubric_rule_x_judge:
    'best-of-{n} by rule × judge = {pct}: picking the sample with the highest EX × explicit rubric score.',
  best_of_n_rubric_group_rank:
    'best-of-{n} by group rank = {pct}: picking the sample ranked highest among its question’s samples by explicit score.',
  zero_variance_share: '{pct} of prompts give GRPO no gradient: every sample got the same reward.',
  no_gradient_share:
    '{pct} of prompts have every advantage exactly 0 (zero variance, or a single sample with reward 0): wasted rollouts.',
  frontier_share:
    '{pct} of prompts are on the learnable frontier (0 < pass rate < 1): with a 0/1 reward only these carry signal; feed them to the next round.',
  all_correct_share: '{pct} of prompts are solved by every sample: too easy to teach anything.',
  all_wrong_share:
    '{pct} of prompts are never solved: no correct sample to reinforce; they need easier variants, hints or more samples.',
  mean_abs_advantage:
    'Mean |advantage| = {value}: how hard GRPO pushes on a typical sample; 0 in zero-variance groups.',
  pass_rate_histogram:
    'Pass rates per prompt: mass at 0 and 1 is dead weight for GRPO; mass in between is where learning happens.',
  advantage_histogram:
    'GRPO advantages (r - mean) / (std + 1e-6) per sample: a rare success in a hard prompt gets a large positive advantage.',
  fixed: '{count} questions fixed: wrong in A, right in B.',
  broken: '{count} questions broken: right in A, wrong in B; regressions to read before trusting the gain.',
  both_right: '{count} questions right in both runs.',
  both_wrong: '{count} questions wrong in both runs: neither checkpoint solves them.',
  ex_delta: 'EX difference B - A = {value} points: positive means run B answers more questions correctly.',
  ci95: '95% paired bootstrap interval [{lo}, {hi}] points: if it excludes 0, the difference is unlikely to be question-sampling noise.',
  mcnemar_p:
    'McNemar p = {value}: the chance of a split between fixed ({b}) and broken ({c}) at least this lopsided if both runs were equally good.',
} as const;

type ExplanationId = keyof typeof EXPLANATIONS;

/** Percentage with one decimal, e.g. 0.123 -> "12.3%". */
export function pct(share: number): string {
  return `${(share * 100).toFixed(1)}%`;
}

/** The explanation of `id` with `{pct}` from `share` and other placeholders from `vars`. */
export function explain(
  id: ExplanationId,
  vars: { share?: number } & Record<string, string | number | undefined> = {},
): string {
  const text = EXPLANATIONS[id].replace(/\{(\w+)\}/g, (whole, name: string) => {
    if (name === 'pct') return vars.share === undefined ? whole : pct(vars.share);
    const v = vars[name];
    return v === undefined ? whole : String(v);
  });
  // The table says "{count} questions …": one is "1 question …".
  return vars.count === 1 || vars.count === '1' ? text.replace(/^1 questions\b/, '1 question') : text;
}
