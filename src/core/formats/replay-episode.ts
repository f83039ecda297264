/**
 * A trainer's multi-turn dump replayed as episodes (src/core/episode/types.ts), so a replayed
 * sample is stored, exported and shown like an episode played here: the turns the dump's reader
 * split (multi-turn-dump.ts: the policy's text, its probe, the observation the environment sent
 * back), the final SQL scored, the trainer's own score beside our verdict. What a dump does not
 * keep stays empty: tokens and time (null, 0), probe rows (`ProbeResult.notKept`); a probe's
 * failure is read from its observation, in the environments' own words (SkyRL's tools/sql.py,
 * the verl tutorial's sql_tool.py).
 */
import type { EndReason, Episode, EpisodeTurn, ProbeResult } from '../episode/types.ts';
import type { EvalItem } from '../types.ts';
import type { DumpTurn } from './multi-turn-dump.ts';

/** How a dumped episode ended, as the dump says it (null where it says nothing). */
export interface DumpEnd {
  /** SkyRL's `stop_reason` (`stop`, `length`), a verifiers trace's `stop_condition`. */
  stopReason: string | null;
  /** The environment's turn limit (SkyRL's `env_extras.max_turns`). */
  maxTurns: number | null;
}

/** The text of a tool's answer: a verl tool response's `{"result": ...}`, else the text itself. */
function resultOf(observation: string): string {
  const t = observation.trim();
  if (t.startsWith('{')) {
    try {
      const v = JSON.parse(t) as { result?: unknown };
      if (typeof v.result === 'string') return v.result;
    } catch {
      // not JSON: the text is the answer
    }
  }
  return t;
}

/**
 * A probe as its observation tells it: SkyRL's `SQL Timeout:` / `Error executing SQL: <error>, db
 * file: <path>`, the verl tool's `SQL execution timeout` / `Error executing SQL: <error>`; any other
 * text is a probe that ran (its rows are in the observation only).
 */
export function observedProbe(observation: string | null): ProbeResult {
  const probe: ProbeResult = { columns: [], rows: [], classes: [], notKept: true };
  if (observation === null) return probe;
  const text = resultOf(observation);
  if (/^(?:SQL Timeout:|SQL execution timeout)/.test(text)) probe.timedOut = true;
  else {
    const m = /^Error executing SQL: ([\s\S]*?)(?:, db file: [^\n]*)?(?:\n<reminder>[\s\S]*)?$/.exec(text);
    if (m) probe.error = m[1]!;
  }
  return probe;
}

/**
 * The dump's turns as episode turns: each policy turn with the observation that answered it
 * (several in a row, e.g. one verl tool response per call, joined by a newline); the probe's
 * outcome is read from the first of them (the probe is the turn's first call).
 */
function replayTurns(turns: readonly DumpTurn[]): EpisodeTurn[] {
  const out: EpisodeTurn[] = [];
  const first: Array<string | null> = [];
  for (const t of turns) {
    if (t.role === 'assistant') {
      out.push({ text: t.text, tokens: null, probeSql: t.probe, probe: null, observation: null, ms: 0 });
      first.push(null);
      continue;
    }
    // An observation before any policy text (a dump cut at its start): a turn of its own.
    if (out.length === 0) {
      out.push({ text: '', tokens: null, probeSql: null, probe: null, observation: null, ms: 0 });
      first.push(null);
    }
    const last = out.at(-1)!;
    last.observation = last.observation === null ? t.text : `${last.observation}\n${t.text}`;
    first[out.length - 1] ??= t.text;
  }
  out.forEach((t, k) => {
    if (t.probeSql !== null && first[k] !== null) t.probe = observedProbe(first[k]!);
  });
  return out;
}

const CUT = /^length$|max_?turns|turn_?limit/i;

/**
 * A sample's episode from its dumped turns. `finalSql`: the SQL scored (null: none); `score`: the
 * trainer's own score, kept as `presetReward`. The end: `solution` when there is a final SQL; else
 * `turn-limit` when the dump says the episode was cut (stop reason `length`, a max-turns stop
 * condition) or its policy turns reached the environment's turn limit; else `format-failure`.
 */
export function replayEpisode(
  format: string,
  turns: readonly DumpTurn[],
  finalSql: string | null,
  score: number | null,
  end: DumpEnd,
): Episode {
  const episodeTurns = replayTurns(turns);
  const policyTurns = turns.filter((t) => t.role === 'assistant').length;
  const cut =
    (end.stopReason !== null && CUT.test(end.stopReason)) || (end.maxTurns !== null && policyTurns >= end.maxTurns);
  const endReason: EndReason = finalSql !== null ? 'solution' : cut ? 'turn-limit' : 'format-failure';
  return {
    envId: format,
    turns: episodeTurns,
    turnsUsed: episodeTurns.length,
    probesFailed: episodeTurns.filter((t) => t.probe && (t.probe.error !== undefined || t.probe.timedOut)).length,
    finalSql,
    endReason,
    formatValid: finalSql !== null,
    presetReward: score,
    replay: { format, stopReason: end.stopReason },
  };
}

/** What a dump's reading keeps per question id, per sample (HarnessRun, DumpStep). */
interface DumpSamples {
  sampleTurns: ReadonlyMap<number, ReadonlyArray<DumpTurn[] | null>>;
  sampleScores: ReadonlyMap<number, ReadonlyArray<number | null>>;
  sampleEnds: ReadonlyMap<number, ReadonlyArray<DumpEnd | null>>;
}

/**
 * The items of a replayed dump, each multi-turn sample with its episode: the turns of its
 * (question id, sample), the item's SQL as the final SQL (the trainer's rule's, or a preset's when
 * one re-extracted it; empty: none), the trainer's score. Single-turn samples are left as they are.
 */
export function withReplayEpisodes<T extends EvalItem>(items: readonly T[], format: string, dump: DumpSamples): T[] {
  return items.map((it) => {
    const k = it.sample ?? 0;
    const turns = dump.sampleTurns.get(it.questionId)?.[k];
    if (!turns) return it;
    const finalSql = it.predSql.trim() === '' ? null : it.predSql;
    const score = dump.sampleScores.get(it.questionId)?.[k] ?? null;
    const end = dump.sampleEnds.get(it.questionId)?.[k] ?? { stopReason: null, maxTurns: null };
    return { ...it, episode: replayEpisode(format, turns, finalSql, score, end) };
  });
}
