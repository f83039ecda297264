/**
 * Multi-turn run records hand-built from SkyRL's own episodes (tests/core/episode/fixtures/
 * skyrl-episodes.json, made by running SkyRL's code on the mini-dev databases): each fixture
 * episode becomes one sample whose `episode` holds its turns: the action as the policy's text,
 * the probe SQL, the probe's rows (the fixture's rows_original_order: SkyRL's set order, not the query's) with
 * their storage classes, and the
 * observation our environment sends (the fixture's query-order observation). No engine runs: the
 * verdict is hand-set from SkyRL's reward (1 → EX 1, else 0).
 */
import { readFileSync } from 'node:fs';
import type { Episode, EpisodeTurn, ProbeResult } from '../../src/core/episode/types.ts';
import type { StorageClass } from '../../src/core/prompt/schema-source.ts';
import { SKYRL_SQL_PRESET, presetFingerprint } from '../../src/core/prompt/presets.ts';
import type { RunFile, SampleRecord } from '../../src/core/run/types.ts';
import type { SqlValue } from '../../src/core/types.ts';
import { runFile, sampleRecord } from './run-records.ts';

type FixtureCell = null | { i: string } | { f: string } | { s: string } | { b: string };
interface FixtureStep {
  action: string;
  done: boolean;
  observation_query_order: string | null;
  probe_sql: string | null;
  rows_original_order?: FixtureCell[][] | null;
}
export interface FixtureEpisode {
  name: string;
  question_id: number;
  db_id: string;
  gold_sql: string;
  steps: FixtureStep[];
  final_reward: number;
  format_valid: boolean;
  solution: string | null;
}

export const SKYRL_FIXTURE_EPISODES: FixtureEpisode[] = (
  JSON.parse(readFileSync(new URL('../core/episode/fixtures/skyrl-episodes.json', import.meta.url), 'utf8')) as {
    episodes: FixtureEpisode[];
  }
).episodes;

/** A run file's cell: an integer past 2^53 as its decimal text, a blob as its hex digits (the class says which). */
function cell(c: FixtureCell): { value: SqlValue; cls: StorageClass } {
  if (c === null) return { value: null, cls: 'null' };
  if ('i' in c) {
    const n = Number(c.i);
    return { value: Number.isSafeInteger(n) ? n : c.i, cls: 'integer' };
  }
  if ('f' in c) return { value: Number(c.f), cls: 'real' };
  if ('s' in c) return { value: c.s, cls: 'text' };
  return { value: c.b, cls: 'blob' };
}

const ERROR = /<observation>Error executing SQL: ([\s\S]*?), db file: /;

function probeOf(step: FixtureStep): ProbeResult | null {
  if (step.probe_sql === null || step.observation_query_order === null) return null;
  const obs = step.observation_query_order;
  if (obs.includes('<observation>SQL Timeout:')) return { columns: [], rows: [], classes: [], timedOut: true };
  const error = ERROR.exec(obs);
  if (error) return { columns: [], rows: [], classes: [], error: error[1]! };
  const cells = (step.rows_original_order ?? []).map((r) => r.map(cell));
  const width = cells[0]?.length ?? 0;
  return {
    columns: Array.from({ length: width }, (_, i) => String(i)),
    rows: cells.map((r) => r.map((c) => c.value)),
    classes: cells.map((r) => r.map((c) => c.cls)),
  };
}

function firstSolution(action: string): string | null {
  const m = /<solution>([\s\S]*?)<\/solution>/.exec(action);
  return m ? m[1]!.trim() : null;
}

/** The fixture episode as the runner stores it; turn k took 10 + k ms and 20 + k tokens. */
export function episodeFromFixture(fx: FixtureEpisode): Episode {
  const turns: EpisodeTurn[] = fx.steps.map((s, k) => {
    const probe = s.done ? null : probeOf(s);
    return {
      text: s.action,
      tokens: 20 + k,
      probeSql: s.done ? null : s.probe_sql,
      probe,
      observation: s.done ? null : s.observation_query_order,
      ms: 10 + k,
    };
  });
  const last = fx.steps[fx.steps.length - 1]!.action;
  const hasSolution = last.includes('<solution>') && last.includes('</solution>');
  return {
    envId: 'skyrl-sql',
    turns,
    turnsUsed: turns.length,
    probesFailed: turns.filter((t) => t.probe !== null && (t.probe.error !== undefined || t.probe.timedOut === true))
      .length,
    finalSql: fx.format_valid ? fx.solution : firstSolution(last),
    endReason: !hasSolution ? 'turn-limit' : fx.format_valid ? 'solution' : 'format-failure',
    formatValid: fx.format_valid,
    presetReward: fx.final_reward,
  };
}

/** One sample per fixture episode (index k, the fixture's question and database). */
export function episodeSamples(fixtures: readonly FixtureEpisode[] = SKYRL_FIXTURE_EPISODES): SampleRecord[] {
  return fixtures.map((fx, index) => {
    const episode = episodeFromFixture(fx);
    const ex: 0 | 1 = fx.final_reward === 1 ? 1 : 0;
    return sampleRecord({
      index,
      sample: 0,
      questionId: fx.question_id,
      dbId: fx.db_id,
      ex,
      softF1: ex,
      reward: ex,
      sql: episode.finalSql ?? '',
      goldSql: fx.gold_sql,
      completion: episode.turns.map((t) => t.text + (t.observation ?? '')).join(''),
      format: episode.finalSql === null ? 0 : 1,
      extraction: { rule: episode.finalSql === null ? 'none' : 'solution-tag', thinkStripped: false },
      episode,
    });
  });
}

/** A done generation run of the SkyRL-SQL preset holding `samples`, with the preset recorded in its header. */
export function episodeRunFile(samples: SampleRecord[] = episodeSamples(), id = 'run-multiturn'): RunFile {
  return runFile(samples, {
    id,
    name: 'SkyRL-SQL episodes',
    source: {
      kind: 'generation',
      engine: 'openai-compatible',
      model: 'scripted-policy',
      template: SKYRL_SQL_PRESET.id,
    },
    preset: { id: SKYRL_SQL_PRESET.id, fingerprint: presetFingerprint(SKYRL_SQL_PRESET), content: SKYRL_SQL_PRESET },
    dataset: {
      id: 'bird-minidev',
      name: 'BIRD mini-dev',
      questions: { name: 'mini_dev_sqlite.json', sha256: 'qq', bytes: 1 },
      gold: { name: 'mini_dev_sqlite_gold.sql', sha256: 'gg', bytes: 1 },
      databases: Object.fromEntries([...new Set(samples.map((s) => s.dbId))].map((d) => [d, `sha-${d}`])),
    },
    subset: { description: `${samples.length} fixture episodes`, indices: samples.map((s) => s.index) },
    samplesPerQuestion: 1,
  });
}
