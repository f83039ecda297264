/**
 * Per-prompt exports: statistics as CSV and JSON, and the learnable frontier (0 < pass rate
 * < 1) as JSONL for the next RL round. Pure: they return text; the caller writes files.
 */
import { WorkbenchError } from '../errors.ts';
import type { RunQuestion } from '../run/types.ts';
import type { PromptNumbers } from './stats-view.ts';

export function promptStatsJson(prompts: readonly PromptNumbers[], ks: readonly number[]) {
  return prompts.map((p) => ({
    index: p.index,
    question_id: p.questionId,
    db_id: p.dbId,
    difficulty: p.difficulty,
    n: p.n,
    correct: p.correct,
    pass_rate: p.passRate,
    mean_reward: p.meanReward,
    grpo_mean: p.grpoMean,
    grpo_std: p.grpoStd,
    zero_variance: p.zeroVariance,
    frontier: p.frontier,
    voters: p.voters,
    vote_size: p.vote.size,
    vote_tied: p.vote.tied,
    vote_score: p.vote.score,
    ...Object.fromEntries(ks.map((k) => [`pass_at_${k}`, p.passAtK[k]!])),
    ...Object.fromEntries(ks.map((k) => [`maj_at_${k}`, p.majAtK[k]!])),
    advantages: p.advantages,
  }));
}

/** RFC 4180: fields with a comma, quote or newline are quoted, quotes doubled. */
function csvField(v: unknown): string {
  const s =
    typeof v === 'number'
      ? String(v)
      : typeof v === 'boolean'
        ? v
          ? '1'
          : '0'
        : v === null || v === undefined
          ? ''
          : String(v);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** The JSON export flattened to one row per prompt; advantages joined by spaces. */
export function promptStatsCsv(prompts: readonly PromptNumbers[], ks: readonly number[]): string {
  const rows = promptStatsJson(prompts, ks).map((r) => ({
    ...r,
    advantages: r.advantages.map((a) => Number(a.toPrecision(6))).join(' '),
  }));
  const header = rows.length > 0 ? Object.keys(rows[0]!) : ['index', 'question_id'];
  const lines = [header.join(',')];
  for (const r of rows) lines.push(header.map((h) => csvField((r as Record<string, unknown>)[h])).join(','));
  return lines.join('\r\n') + '\r\n';
}

/**
 * Frontier prompts as JSON Lines: question_id, db_id, question, evidence, pass_rate (plus
 * difficulty, n and correct). Needs each prompt's text; a missing one is an error naming it.
 */
export function frontierJsonl(prompts: readonly PromptNumbers[], questions: readonly RunQuestion[]): string {
  const text = new Map(questions.map((q) => [`${q.index}:${q.questionId}`, q]));
  const lines = prompts
    .filter((p) => p.frontier)
    .map((p) => {
      const q = text.get(p.key);
      if (!q) {
        throw new WorkbenchError(
          'MISMATCH',
          `no question text for question ${p.questionId} (index ${p.index}): give the questions file the run was made from`,
        );
      }
      return JSON.stringify({
        question_id: p.questionId,
        db_id: p.dbId,
        question: q.question,
        evidence: q.evidence,
        pass_rate: p.passRate,
        difficulty: p.difficulty,
        n: p.n,
        correct: p.correct,
      });
    });
  return lines.length ? lines.join('\n') + '\n' : '';
}
