/**
 * Scoring a stored run with a rubric (the rubric screen's "Score"): every sample through the
 * core's `scoreSample`, judged (when a judge is given) with the judge cache of the rubrics'
 * repository, the result stored per (run, rubric) and written into the run's samples with the
 * registry's aggregations. The screen loads the judge engine (through the loader given here) and
 * shows the progress; this service does the rest.
 */
import { cancelledError } from '../core/errors.ts';
import { reaggregate } from '../core/rubric/aggregate.ts';
import {
  aggregateByGroup,
  judgedAggregationIds,
  type AggregationId,
  type AggregationValue,
} from '../core/rubric/aggregations.ts';
import { birdSample } from '../core/rubric/bird-rubric.ts';
import { Judge } from '../core/rubric/judge.ts';
import type { Rubric } from '../core/rubric/model.ts';
import { scoreSample, type Aggregation, type SampleToScore } from '../core/rubric/score.ts';
import type { ExplicitOptions, RubricScores } from '../core/rubric/scores.ts';
import { executionFacts, type Schema } from '../core/rubric/sql-checks.ts';
import type { RunHeader, SampleRecord } from '../core/run/types.ts';
import type { Question } from '../core/types.ts';
import type { RubricRepository, ScoredSample, StoredRubricRun } from './rubric-ports.ts';
import type { LoadedEngine } from './rubric-run-service.ts';
import type { DatasetRepository, RunRepository } from './store-ports.ts';

/** A stored sample as the rubric sees it: its question and evidence when the dataset is still stored. */
export function sampleToScore(
  s: Pick<
    SampleRecord,
    'sql' | 'completion' | 'goldSql' | 'status' | 'ex' | 'error' | 'mutatedDb' | 'predColumnCount' | 'goldColumnCount'
  >,
  question: Pick<Question, 'question' | 'evidence'> | null,
  schema: Schema | null = null,
): SampleToScore {
  return birdSample({
    question: {
      question: question?.question ?? '(question text not stored)',
      evidence: question?.evidence ?? '',
      goldSql: s.goldSql,
    },
    sql: s.sql,
    completion: s.completion,
    execution: executionFacts(s),
    schema,
  });
}

/**
 * The registry's aggregations of a scored run's samples (in `result.samples` order), with the
 * stored rubric's categories, EX as the rule reward, and group-rank among each question's
 * samples. A sample whose database is missing (never scored by EX) gets none and is not ranked.
 */
export function runAggregations(
  result: {
    rubric: Pick<Rubric, 'items'>;
    samples: readonly { index: number; sample: number; scores: RubricScores }[];
  },
  runSamples: ReadonlyMap<string, Pick<SampleRecord, 'status' | 'ex'>>,
  ids: readonly AggregationId[],
): Array<AggregationValue[] | undefined> {
  const rec = (s: { index: number; sample: number }) => runSamples.get(`${s.index}.${s.sample}`);
  const scorable = result.samples.filter((s) => rec(s)?.status !== 'missing-db');
  const values = aggregateByGroup(
    scorable,
    (s) => s.index,
    (s) => ({ items: result.rubric.items, scores: s.scores, rule: rec(s)?.ex ?? null }),
    ids,
    result.samples[0]?.scores.explicit?.options,
  );
  const byKey = new Map(scorable.map((s, i) => [`${s.index}.${s.sample}`, values[i]!]));
  return result.samples.map((s) => byKey.get(`${s.index}.${s.sample}`));
}

/** The scalar reward of a rubric scoring: explicit, else implicit, else Likert, else null. */
const rubricReward = (s: RubricScores): number | null =>
  s.explicit?.score ?? s.implicit?.score ?? s.likert?.score ?? null;

export interface RubricScoringPorts {
  runs: Pick<RunRepository, 'samples' | 'setSampleRubrics'>;
  datasets: Pick<DatasetRepository, 'get'>;
  /** Table -> column names of each stored database of a run (read only when a criterion checks them). */
  databaseSchemas(runId: string): Promise<Record<string, Schema>>;
  /** The rubrics' repository: the scorings are stored there, and its judge cache is the judge's. */
  rubrics(): Promise<RubricRepository>;
  /** ISO time. */
  now(): string;
}

interface ScoreRunInput {
  run: RunHeader;
  /** A plain rubric (not a reactive proxy): it is stored with the scores. */
  rubric: Rubric;
  /** Loads the judge (asked once the run's samples are read); null: no judge (judge criteria are skipped). */
  judge: (() => Promise<LoadedEngine>) | null;
  /** Implicit and Likert need a judge; explicit is always computed. */
  withImplicit: boolean;
  withLikert: boolean;
  explicit: ExplicitOptions;
}

interface ScoreRunHooks {
  signal?: AbortSignal;
  /** The run's samples, read before any is scored. */
  onSamples?: (samples: SampleRecord[]) => void;
  /** The judge, once made: its `stats` count what it has judged so far. */
  onJudge?: (judge: Judge) => void;
  onProgress?: (p: { done: number; total: number }) => void;
}

export interface RubricScoringService {
  /** Scores every sample of the run and stores the result (not yet written into the run's samples). */
  score(input: ScoreRunInput, hooks?: ScoreRunHooks): Promise<StoredRubricRun>;
  /**
   * The stored verdicts with the rubric's current weights and `explicit`: no judge call, no cache
   * lookup; the result is stored. Null (nothing stored) when a criterion was added, removed or
   * reworded since the scoring: its verdicts would be stale.
   */
  reaggregate(scored: StoredRubricRun, rubric: Rubric, explicit: ExplicitOptions): Promise<StoredRubricRun | null>;
  /**
   * Writes the scores into the run's own samples (the run file and CSV exports carry them, and
   * best-of-n can pick by rubric score) with their aggregations; the reward is the explicit
   * score, else the implicit, else the Likert one. Resolves with the number of samples written.
   */
  writeIntoRun(result: StoredRubricRun, runSamples: readonly SampleRecord[]): Promise<number>;
}

/** Criteria whose SQL checks read the run's database schemas. */
const readsSchemas = (rubric: Rubric): boolean =>
  rubric.items.some(
    (i) => i.check.kind === 'sql' && (i.check.name === 'schema-only' || i.check.name === 'uses-evidence-formula'),
  );

export function createRubricScoringService(ports: RubricScoringPorts): RubricScoringService {
  return {
    async score(input, hooks = {}) {
      const { run, rubric, signal } = { ...input, signal: hooks.signal };
      const repo = await ports.rubrics();
      const [samples, dataset] = await Promise.all([ports.runs.samples(run.id), ports.datasets.get(run.dataset.id)]);
      // Schemas only when a criterion checks them (reading them opens every database of the run).
      const schemas = readsSchemas(rubric) ? await ports.databaseSchemas(run.id) : {};
      hooks.onSamples?.(samples);
      let judge: Judge | null = null;
      if (input.judge) {
        const { engine, model } = await input.judge();
        judge = new Judge({ engine, model: model.id, cache: repo.cache(), signal });
        hooks.onJudge?.(judge);
      }
      const aggregations: Aggregation[] = [
        'explicit',
        ...(judge && input.withImplicit ? (['implicit'] as const) : []),
        ...(judge && input.withLikert ? (['likert'] as const) : []),
      ];
      const out: ScoredSample[] = [];
      for (const s of samples) {
        if (signal?.aborted) throw cancelledError('scoring');
        const scores = await scoreSample(
          rubric,
          sampleToScore(s, dataset?.questions[s.index] ?? null, schemas[s.dbId] ?? null),
          { aggregations, judge, concurrency: 2, explicit: input.explicit },
        );
        out.push({ index: s.index, sample: s.sample, scores });
        hooks.onProgress?.({ done: out.length, total: samples.length });
      }
      const result: StoredRubricRun = {
        runId: run.id,
        rubricId: rubric.id,
        rubric,
        scoredAt: ports.now(),
        samples: out,
      };
      await repo.saveScores(result);
      return result;
    },

    async reaggregate(scored, rubric, explicit) {
      const key = (i: Rubric['items'][number]) => JSON.stringify([i.id, i.title, i.description, i.check]);
      const before = new Set(scored.rubric.items.map(key));
      const changed =
        rubric.id !== scored.rubricId ||
        rubric.items.length !== before.size ||
        rubric.items.some((i) => !before.has(key(i)));
      if (changed) return null;
      const next: StoredRubricRun = {
        ...scored,
        rubric,
        scoredAt: ports.now(),
        samples: scored.samples.map((s) => ({ ...s, scores: reaggregate(s.scores, rubric.items, explicit) })),
      };
      await (await ports.rubrics()).saveScores(next);
      return next;
    },

    writeIntoRun(result, runSamples) {
      const byKey = new Map(runSamples.map((s) => [`${s.index}.${s.sample}`, s]));
      const values = runAggregations(result, byKey, judgedAggregationIds(result.samples.map((s) => s.scores)));
      return ports.runs.setSampleRubrics(
        result.runId,
        result.samples.map((s, i) => ({
          index: s.index,
          sample: s.sample,
          rubric: values[i] ? { ...s.scores, aggregations: values[i] } : s.scores,
          rubricScore: rubricReward(s.scores),
        })),
      );
    },
  };
}
