/**
 * Scoring a stored run with a rubric: the judge (an OpenAI-compatible server, or none when the
 * rubric is all programmatic), every sample through the core's `scoreSample` with the judge
 * cache in IndexedDB, the result stored per (run, rubric), and the run-level views derived.
 */
import { createOpenAiEngine } from '../../adapters/engines/openai-engine.ts';
import type { RubricRepository, ScoredSample, StoredRubricRun } from '../../adapters/judge/idb-judge-cache.ts';
import type { WorkbenchStore } from '../../adapters/store/workbench-store.ts';
import { errorMessage } from '../../core/errors.ts';
import { reaggregate, summarizeRubricScores, type RubricSummary } from '../../core/rubric/aggregate.ts';
import { Judge, type JudgeStats } from '../../core/rubric/judge.ts';
import type { Rubric } from '../../core/rubric/model.ts';
import type { ExplicitOptions, Normalization } from '../../core/rubric/scores.ts';
import { scoreSample, type Aggregation } from '../../core/rubric/score.ts';
import type { SampleRecord } from '../../core/run/types.ts';
import { agreement, exMatrix, histogram, sampleToScore, scoreOf, type Agreement, type ExMatrix, type JudgeScoreKind } from './analysis.ts';

export type JudgeChoice = 'none' | 'openai';

export const needsJudge = (rubric: Rubric): boolean => rubric.items.some((i) => i.check.kind === 'judge');

export class RubricScoring {
  runId = $state('');
  judgeChoice = $state<JudgeChoice>('none');
  judgeUrl = $state('http://127.0.0.1:8000');
  judgeModel = $state('');
  /** Implicit and Likert need a judge; explicit is always computed. */
  withImplicit = $state(true);
  withLikert = $state(true);
  /** Which score the judge-vs-EX matrix compares with EX. */
  matrixScore = $state<JudgeScoreKind>('implicit');
  threshold = $state(0.5);
  /** Explicit aggregation: denominator, clipping, and what an item without a verdict does. */
  normalization = $state<Normalization>('positive');
  clip = $state(true);
  unresolved = $state<ExplicitOptions['unresolved']>('null');

  running = $state(false);
  done = $state(0);
  total = $state(0);
  error = $state<string | null>(null);
  stats = $state.raw<JudgeStats | null>(null);
  scored = $state.raw<StoredRubricRun | null>(null);
  samples = $state.raw<SampleRecord[]>([]);
  #abort: AbortController | null = null;

  readonly summary = $derived.by((): RubricSummary | null => (this.scored ? summarizeRubricScores(this.scored.samples.map((s) => s.scores)) : null));
  readonly histograms = $derived.by(() => {
    const all = this.scored?.samples ?? [];
    return (['explicit', 'implicit', 'likert'] as const).map((k) => ({ kind: k, counts: histogram(all.map((s) => scoreOf(s.scores, k))) }));
  });
  readonly agreement = $derived.by((): Agreement | null => {
    const all = this.scored?.samples ?? [];
    return agreement(all.map((s) => scoreOf(s.scores, 'explicit')), all.map((s) => scoreOf(s.scores, 'implicit')), this.threshold);
  });
  readonly matrix = $derived.by((): ExMatrix | null => {
    const all = this.scored?.samples ?? [];
    if (all.length === 0) return null;
    const byKey = new Map(this.samples.map((s) => [`${s.index}.${s.sample}`, s]));
    return exMatrix(
      all.map((s) => ({ key: `${s.index}.${s.sample}`, ex: byKey.get(`${s.index}.${s.sample}`)?.ex ?? 0, score: scoreOf(s.scores, this.matrixScore) })),
      this.threshold,
    );
  });

  constructor(
    private readonly store: WorkbenchStore,
    private readonly repo: () => Promise<RubricRepository>,
  ) {}

  /** Shows what was stored for (run, rubric), if anything. */
  async show(rubric: Rubric | null): Promise<void> {
    if (!this.runId || !rubric) return;
    const [stored, samples] = await Promise.all([(await this.repo()).getScores(this.runId, rubric.id), this.store.samples(this.runId)]);
    this.samples = samples;
    this.scored = stored ?? null;
  }

  get explicitOptions(): ExplicitOptions {
    return { normalization: this.normalization, clip: this.clip, unresolved: this.unresolved };
  }

  /**
   * The stored verdicts with the rubric's current weights and the explicit options: no judge
   * call, no cache lookup. Refused when a criterion's text or check changed (its verdicts would
   * be stale): then score again, which replays the cached judge answers.
   */
  async reaggregate(rubric: Rubric): Promise<void> {
    const scored = this.scored;
    if (!scored) return;
    const key = (i: Rubric['items'][number]) => JSON.stringify([i.id, i.title, i.description, i.check]);
    const before = new Set(scored.rubric.items.map(key));
    const changed = rubric.id !== scored.rubricId || rubric.items.length !== before.size || rubric.items.some((i) => !before.has(key(i)));
    if (changed) {
      this.error = 'Criteria were added, removed or reworded since this run was scored: score it again (judge answers come from the cache).';
      return;
    }
    this.error = null;
    const r = $state.snapshot(rubric) as Rubric;
    const next: StoredRubricRun = {
      ...scored,
      rubric: r,
      scoredAt: new Date().toISOString(),
      samples: scored.samples.map((s) => ({ ...s, scores: reaggregate(s.scores, r.items, this.explicitOptions) })),
    };
    await (await this.repo()).saveScores(next);
    this.scored = next;
  }

  cancel(): void {
    this.#abort?.abort();
  }

  async score(rubric: Rubric): Promise<void> {
    if (this.running) return;
    this.error = null;
    this.stats = null;
    const run = this.runId ? await this.store.getRun(this.runId) : undefined;
    if (!run) {
      this.error = 'Choose a stored run to score.';
      return;
    }
    const useJudge = this.judgeChoice === 'openai';
    if (needsJudge(rubric) && !useJudge) {
      this.error = 'This rubric has judge criteria: choose a judge (an OpenAI-compatible server), or make every criterion programmatic.';
      return;
    }
    this.running = true;
    this.#abort = new AbortController();
    const signal = this.#abort.signal;
    const repo = await this.repo();
    const engine = useJudge ? createOpenAiEngine({ baseUrl: this.judgeUrl, model: this.judgeModel || undefined, concurrency: 2, maxRetries: 1 }) : null;
    try {
      const [samples, dataset] = await Promise.all([this.store.samples(run.id), this.store.getDataset(run.dataset.id)]);
      this.samples = samples;
      this.total = samples.length;
      this.done = 0;
      let judge: Judge | null = null;
      if (engine) {
        await engine.load({ id: this.judgeModel, source: this.judgeUrl }, { signal });
        judge = new Judge({ engine, model: this.judgeModel, cache: repo.cache(), signal });
      }
      const aggregations: Aggregation[] = ['explicit', ...(judge && this.withImplicit ? (['implicit'] as const) : []), ...(judge && this.withLikert ? (['likert'] as const) : [])];
      const out: ScoredSample[] = [];
      for (const s of samples) {
        if (signal.aborted) throw new Error('scoring was cancelled');
        const scores = await scoreSample(rubric, sampleToScore(s, dataset?.questions[s.index] ?? null), { aggregations, judge, concurrency: 2, explicit: this.explicitOptions });
        out.push({ index: s.index, sample: s.sample, scores: $state.snapshot(scores) as typeof scores });
        this.done = out.length;
        if (judge) this.stats = { ...judge.stats };
      }
      const result: StoredRubricRun = { runId: run.id, rubricId: rubric.id, rubric: $state.snapshot(rubric) as Rubric, scoredAt: new Date().toISOString(), samples: out };
      await repo.saveScores(result);
      this.scored = result;
    } catch (err) {
      this.error = `Scoring stopped: ${errorMessage(err)}`;
    } finally {
      await engine?.unload().catch(() => undefined);
      this.running = false;
      this.#abort = null;
    }
  }
}
