/**
 * A run's multi-turn statistics (pure): turns used, probes that failed, how often a probe
 * changed the final answer, EX by turns used, episodes cut by the turn limit, format failures,
 * the preset's mean reward. Definitions in docs/multi-turn.md ("What the app shows").
 */
import type { Episode, EpisodeTurn } from './types.ts';

/** What `episodeStats` reads of a sample (a SampleRecord fits). */
export interface EpisodeSample {
  ex: 0 | 1;
  /** `missing-db`: never scored; left out of the EX numbers. */
  status: string;
  episode?: Episode;
}

interface TurnsRow {
  turns: number;
  /** Episodes that used exactly `turns` turns. */
  count: number;
  /** Of them, scored samples (EX counts these) and those with EX 1. */
  scored: number;
  correct: number;
  /** 100 × correct / scored; null when none was scored. */
  exPct: number | null;
}

interface EpisodeStats {
  /** Samples that carry an episode. */
  episodes: number;
  /** Mean turns used; null without episodes. */
  turnsMean: number | null;
  /** One row per turns-used value, ascending: count and EX. */
  byTurns: TurnsRow[];
  /** Probes run (turns with a probe result), and those that ended in an error or a timeout. */
  probes: number;
  probesFailed: number;
  /** Episodes with at least one failed probe. */
  episodesWithFailedProbe: number;
  /** Episodes that ran at least one probe. */
  probedEpisodes: number;
  /**
   * Probed episodes with a final SQL that differs (normalised) from their first probe's SQL:
   * the first query the policy ran was not the answer it gave.
   */
  probeChangedAnswer: number;
  /** Episodes whose final SQL equals (normalised) one of their probes: the answer was run before it was given. */
  finalWasProbed: number;
  /** Episodes by end reason. */
  endedBySolution: number;
  cutByTurnLimit: number;
  /** Episodes ended by the policy's engine failing on a turn (`Episode.error`). */
  engineErrors: number;
  /** Episodes whose trajectory fails the preset's format check (`formatValid` false), whatever the end. */
  formatFailures: number;
  /** Episodes that gave no final SQL. */
  noFinalSql: number;
  /** Mean of the preset's own reward over the episodes that have one; null when none has. */
  presetRewardMean: number | null;
  presetRewarded: number;
}

/** SQL text compared for "same answer": whitespace runs to one space, trimmed, trailing semicolons dropped; case kept. */
export function normaliseSqlText(sql: string): string {
  return sql
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/(\s*;)+$/, '');
}

function probeFailed(turn: EpisodeTurn): boolean {
  return turn.probe !== null && (turn.probe.error !== undefined || turn.probe.timedOut === true);
}

/** The turns that ran a probe. */
const probedTurns = (ep: Episode) => ep.turns.filter((t) => t.probe !== null && t.probeSql !== null);

/** At least one probe of the episode ended in an error or a timeout. */
export const hasFailedProbe = (ep: Episode): boolean => ep.turns.some(probeFailed);

/** The episode probed, gave a final SQL, and that SQL differs (normalised) from its first probe's. */
export function probeChangedAnswer(ep: Episode): boolean {
  const first = probedTurns(ep)[0];
  return (
    first !== undefined && ep.finalSql !== null && normaliseSqlText(ep.finalSql) !== normaliseSqlText(first.probeSql!)
  );
}

/** The episode's final SQL equals (normalised) one of its probes. */
function finalWasProbed(ep: Episode): boolean {
  if (ep.finalSql === null) return false;
  const final = normaliseSqlText(ep.finalSql);
  return probedTurns(ep).some((t) => normaliseSqlText(t.probeSql!) === final);
}

export function episodeStats(records: readonly EpisodeSample[]): EpisodeStats {
  const rows = new Map<number, TurnsRow>();
  const s: EpisodeStats = {
    episodes: 0,
    turnsMean: null,
    byTurns: [],
    probes: 0,
    probesFailed: 0,
    episodesWithFailedProbe: 0,
    probedEpisodes: 0,
    probeChangedAnswer: 0,
    finalWasProbed: 0,
    endedBySolution: 0,
    cutByTurnLimit: 0,
    engineErrors: 0,
    formatFailures: 0,
    noFinalSql: 0,
    presetRewardMean: null,
    presetRewarded: 0,
  };
  let turnsSum = 0;
  let rewardSum = 0;
  for (const rec of records) {
    const ep = rec.episode;
    if (!ep) continue;
    s.episodes++;
    turnsSum += ep.turnsUsed;
    const row = rows.get(ep.turnsUsed) ?? { turns: ep.turnsUsed, count: 0, scored: 0, correct: 0, exPct: null };
    row.count++;
    if (rec.status !== 'missing-db') {
      row.scored++;
      row.correct += rec.ex;
    }
    rows.set(ep.turnsUsed, row);

    const probed = probedTurns(ep);
    const failed = probed.filter(probeFailed).length;
    s.probes += probed.length;
    s.probesFailed += failed;
    if (failed > 0) s.episodesWithFailedProbe++;
    if (probed.length > 0) s.probedEpisodes++;
    if (probeChangedAnswer(ep)) s.probeChangedAnswer++;
    if (finalWasProbed(ep)) s.finalWasProbed++;
    if (ep.endReason === 'solution') s.endedBySolution++;
    if (ep.endReason === 'turn-limit') s.cutByTurnLimit++;
    if (ep.endReason === 'engine-error') s.engineErrors++;
    if (!ep.formatValid) s.formatFailures++;
    if (ep.finalSql === null) s.noFinalSql++;
    if (ep.presetReward !== null) {
      s.presetRewarded++;
      rewardSum += ep.presetReward;
    }
  }
  if (s.episodes > 0) s.turnsMean = turnsSum / s.episodes;
  if (s.presetRewarded > 0) s.presetRewardMean = rewardSum / s.presetRewarded;
  s.byTurns = [...rows.values()]
    .sort((a, b) => a.turns - b.turns)
    .map((r) => ({ ...r, exPct: r.scored > 0 ? (100 * r.correct) / r.scored : null }));
  return s;
}
