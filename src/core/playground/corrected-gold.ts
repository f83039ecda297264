/**
 * The corrected gold of one question under a run's corrected-gold overlay (docs/gold-overlays.md):
 * the overlay's text read as a run's overlay is read (`parseGoldOverlay`, `overlayItems`), so
 * the playground shows exactly the gold the run's corrected verdicts were scored against.
 */
import { overlayItems, parseGoldOverlay } from '../formats/gold-overlay.ts';
import type { PlaygroundQuestion } from './try-attempt.ts';

/** The overlay's gold SQL for `q` when it changes the official one; null when it names the question with the same SQL or not at all. */
export function correctedGoldOf(
  overlay: { name: string; text: string },
  q: Pick<PlaygroundQuestion, 'index' | 'questionId' | 'dbId' | 'difficulty' | 'goldSql'>,
): string | null {
  const parsed = parseGoldOverlay(overlay.text, overlay.name);
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
}
