/**
 * The corrected gold of one question under a run's corrected-gold overlay (docs/gold-overlays.md):
 * the overlay's text read as a run's overlay is read (`parseGoldOverlay`, `overlayItems`), so
 * the playground shows exactly the gold the run's corrected verdicts were scored against.
 */
import { overlayItems, parseGoldOverlay } from '../formats/gold-overlay.ts';
import type { PlaygroundQuestion } from './try-attempt.ts';

type QuestionKey = Pick<PlaygroundQuestion, 'index' | 'questionId' | 'dbId' | 'difficulty' | 'goldSql'>;

/**
 * The overlay read once: for a question, its gold SQL under the overlay when that changes the
 * official one, null when the overlay names the question with the same SQL or not at all. A
 * question whose overlay entry names another database is an error naming it (as for a run).
 */
export function correctedGolds(overlay: { name: string; text: string }): (q: QuestionKey) => string | null {
  const parsed = parseGoldOverlay(overlay.text, overlay.name);
  return (q) => {
    if (!parsed.entries.has(parsed.keyedBy === 'position' ? q.index : q.questionId)) return null;
    const item = {
      index: q.index,
      questionId: q.questionId,
      dbId: q.dbId,
      difficulty: q.difficulty,
      predSql: '',
      goldSql: q.goldSql,
      extraction: { rule: 'sql-field' as const, thinkStripped: false },
      sample: 0,
    };
    const { items, changedGold } = overlayItems([item], parsed);
    return changedGold.length > 0 ? items[0]!.goldSql : null;
  };
}

/** The overlay's gold SQL for one question when it changes the official one (see correctedGolds). */
export const correctedGoldOf = (overlay: { name: string; text: string }, q: QuestionKey): string | null =>
  correctedGolds(overlay)(q);
