/** episodeStats on hand-built records: every number computed by hand from the records below. */
import { describe, expect, it } from 'vitest';
import { episodeStats, normaliseSqlText, type EpisodeSample } from '../../../src/core/episode/stats.ts';
import type { Episode, EpisodeTurn, ProbeResult } from '../../../src/core/episode/types.ts';
import { matchesOutcome } from '../../../src/core/views/item-query.ts';
import type { SampleRecord } from '../../../src/core/run/types.ts';
import { sampleRecord } from '../../helpers/run-records.ts';

const ok: ProbeResult = { columns: ['x'], rows: [[1]], classes: [['integer']] };
const err: ProbeResult = { columns: [], rows: [], classes: [], error: 'no such table: members' };
const slow: ProbeResult = { columns: [], rows: [], classes: [], timedOut: true };

function probeTurn(sql: string, probe: ProbeResult): EpisodeTurn {
  return { text: `<sql>${sql}</sql>`, tokens: 10, probeSql: sql, probe, observation: 'obs', ms: 5 };
}
function answerTurn(sql: string): EpisodeTurn {
  return { text: `<solution>${sql}</solution>`, tokens: 7, probeSql: null, probe: null, observation: null, ms: 3 };
}
const noTagTurn: EpisodeTurn = {
  text: 'thinking',
  tokens: 4,
  probeSql: null,
  probe: null,
  observation: 'invalid',
  ms: 1,
};

function episode(turns: EpisodeTurn[], rest: Partial<Episode>): Episode {
  return {
    envId: 'skyrl-sql',
    turns,
    turnsUsed: turns.length,
    probesFailed: 0,
    finalSql: null,
    endReason: 'solution',
    formatValid: true,
    presetReward: null,
    ...rest,
  };
}

// A: probes once, answers with a different query (changed), right.
const A: EpisodeSample = {
  ex: 1,
  status: 'ok',
  episode: episode([probeTurn('SELECT * FROM t LIMIT 3', ok), answerTurn('SELECT a FROM t')], {
    finalSql: 'SELECT a FROM t',
    presetReward: 1,
  }),
};
// B: a failed probe, then the answer it ran (same text up to whitespace and ';'): not changed, was probed; wrong.
const B: EpisodeSample = {
  ex: 0,
  status: 'ok',
  episode: episode(
    [probeTurn('SELECT a\n  FROM t;', ok), probeTurn('SELECT * FROM members', err), answerTurn('SELECT a FROM t')],
    { finalSql: 'SELECT a FROM t', presetReward: 0 },
  ),
};
// C: cut by the turn limit after a timeout and a turn without a tag: no final SQL, format failure, reward -1.
const C: EpisodeSample = {
  ex: 0,
  status: 'error',
  episode: episode([probeTurn('WITH RECURSIVE c(x) AS (SELECT 1) SELECT x FROM c', slow), noTagTurn, noTagTurn], {
    finalSql: null,
    endReason: 'turn-limit',
    formatValid: false,
    presetReward: -1,
  }),
};
// D: answers at once (no probe), right, 1 turn; no preset reward (no judge).
const D: EpisodeSample = {
  ex: 1,
  status: 'ok',
  episode: episode([answerTurn('SELECT 1')], { finalSql: 'SELECT 1' }),
};
// E: two turns, never scored (its database was not imported): counted in turns, left out of EX.
const E: EpisodeSample = {
  ex: 0,
  status: 'missing-db',
  episode: episode([probeTurn('SELECT 2', ok), answerTurn('SELECT 2')], {
    finalSql: 'SELECT 2',
    endReason: 'format-failure',
    formatValid: false,
    presetReward: -1,
  }),
};
// A single-turn sample without an episode: not counted at all.
const plain: EpisodeSample = { ex: 1, status: 'ok' };

describe('episodeStats', () => {
  it('counts turns, probes, failures, changed answers, ends and rewards of hand-built episodes', () => {
    const s = episodeStats([A, B, C, D, E, plain]);
    expect(s.episodes).toBe(5);
    expect(s.turnsMean).toBe((2 + 3 + 3 + 1 + 2) / 5);
    expect(s.byTurns).toEqual([
      { turns: 1, count: 1, scored: 1, correct: 1, exPct: 100 },
      { turns: 2, count: 2, scored: 1, correct: 1, exPct: 100 },
      { turns: 3, count: 2, scored: 2, correct: 0, exPct: 0 },
    ]);
    expect(s.probes).toBe(1 + 2 + 1 + 0 + 1);
    expect(s.probesFailed).toBe(2);
    expect(s.episodesWithFailedProbe).toBe(2);
    expect(s.probedEpisodes).toBe(4);
    // A: final differs from its first probe; B: equal after normalising; C: no final SQL; E: equal.
    expect(s.probeChangedAnswer).toBe(1);
    // B (its first probe) and E.
    expect(s.finalWasProbed).toBe(2);
    expect(s.endedBySolution).toBe(3);
    expect(s.cutByTurnLimit).toBe(1);
    expect(s.formatFailures).toBe(2);
    expect(s.noFinalSql).toBe(1);
    expect(s.presetRewarded).toBe(4);
    expect(s.presetRewardMean).toBe((1 + 0 - 1 - 1) / 4);
  });

  it('gives nulls, not zeros, for means and EX without episodes or rewards', () => {
    expect(episodeStats([plain]).turnsMean).toBeNull();
    expect(episodeStats([plain]).presetRewardMean).toBeNull();
    expect(episodeStats([plain]).byTurns).toEqual([]);
    expect(episodeStats([D]).presetRewardMean).toBeNull();
    expect(episodeStats([E]).byTurns).toEqual([{ turns: 2, count: 1, scored: 0, correct: 0, exPct: null }]);
  });

  it('compares SQL text with whitespace runs collapsed and trailing semicolons dropped, case kept', () => {
    expect(normaliseSqlText('  SELECT a\n\tFROM t ;; ')).toBe('SELECT a FROM t');
    expect(normaliseSqlText('select a from t')).not.toBe(normaliseSqlText('SELECT a FROM t'));
  });

  it("the explorer's episode outcomes select exactly the episodes each count counts", () => {
    const records = [A, B, C, D, E, plain].map((r, index): SampleRecord =>
      sampleRecord({ index, sample: 0, ...r, status: r.status as SampleRecord['status'] }),
    );
    const s = episodeStats(records);
    const picked = (o: Parameters<typeof matchesOutcome>[1]) =>
      records.filter((r) => matchesOutcome(r, o)).map((r) => r.index);
    expect(picked('episode-turn-limit')).toEqual([2]);
    expect(picked('episode-turn-limit').length).toBe(s.cutByTurnLimit);
    expect(picked('episode-probe-failed')).toEqual([1, 2]);
    expect(picked('episode-probe-failed').length).toBe(s.episodesWithFailedProbe);
    expect(picked('episode-changed-answer')).toEqual([0]);
    expect(picked('episode-changed-answer').length).toBe(s.probeChangedAnswer);
    expect(picked('episode-format-failure')).toEqual([2, 4]);
    expect(picked('episode-format-failure').length).toBe(s.formatFailures);
  });
});
