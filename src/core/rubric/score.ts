/**
 * Scoring one sample with a rubric: every criterion's verdict (programmatic checks here, judge
 * items by the judge), the explicit aggregate, the implicit rubric score and the direct Likert
 * baseline, side by side in one RubricScores record.
 */
import { aggregateExplicit } from './aggregate.ts';
import { detectPromptInjection } from './injection.ts';
import type { Judge } from './judge.ts';
import type { Rubric, RubricItem } from './model.ts';
import {
  DEFAULT_EXPLICIT_OPTIONS,
  RUBRIC_SCORES_VERSION,
  type CriterionVerdict,
  type ExplicitOptions,
  type RubricScores,
  type ScaleJudgement,
} from './scores.ts';
import { runSqlCheck, type SqlCheckInput } from './sql-checks.ts';

export type Aggregation = 'explicit' | 'implicit' | 'likert';
const AGGREGATIONS: readonly Aggregation[] = ['explicit', 'implicit', 'likert'];

export interface SampleToScore {
  /** The question as the judge should read it (BIRD: with its evidence). */
  question: string;
  /** Reference answer (RaR) or gold SQL, shown to the criterion and implicit judges. */
  reference?: string | null;
  /** The policy's full completion: what the judge reads and regex checks on `completion` see. */
  completion: string;
  /** For text-to-SQL samples: the extracted SQL, its execution, schema and evidence. */
  sql?: SqlCheckInput | null;
}

interface ScoreOptions {
  /** Default: all three. */
  aggregations?: readonly Aggregation[];
  explicit?: ExplicitOptions;
  /** Needed for judge items and for implicit / Likert; without it they are `skipped`. */
  judge?: Judge | null;
  /** Criteria judged at once (default 1; in-browser engines run one request at a time anyway). */
  concurrency?: number;
}

function programmatic(item: RubricItem, sample: SampleToScore): CriterionVerdict | null {
  const verdict = (
    source: CriterionVerdict['source'],
    o: { status: 'ok' | 'not-applicable'; met: boolean | null; explanation: string },
  ): CriterionVerdict => ({
    id: item.id,
    met: o.met,
    explanation: o.explanation,
    raw: null,
    status: o.status,
    source,
    attempts: 0,
    cached: false,
  });
  const check = item.check;
  if (check.kind === 'sql') {
    if (!sample.sql)
      return verdict('sql', { status: 'not-applicable', met: null, explanation: 'not a text-to-SQL sample' });
    return verdict('sql', runSqlCheck(check, sample.sql));
  }
  if (check.kind === 'regex') {
    const target = check.target === 'sql' ? sample.sql?.sql : sample.completion;
    if (target === undefined)
      return verdict('regex', { status: 'not-applicable', met: null, explanation: 'the sample has no SQL' });
    const met = new RegExp(check.pattern, check.flags).test(target);
    return verdict('regex', {
      status: 'ok',
      met,
      explanation: `/${check.pattern}/${check.flags} ${met ? 'matches' : 'does not match'} the ${check.target}`,
    });
  }
  return null;
}

const skippedScale = (): ScaleJudgement => ({
  status: 'skipped',
  rawScore: null,
  score: null,
  explanation: 'no judge was given',
  raw: null,
  attempts: 0,
  cached: false,
});

async function mapLimit<T, R>(xs: readonly T[], limit: number, fn: (x: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(xs.length);
  let next = 0;
  const worker = async () => {
    while (next < xs.length) {
      const i = next++;
      out[i] = await fn(xs[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, xs.length)) }, worker));
  return out;
}

export async function scoreSample(
  rubric: Rubric,
  sample: SampleToScore,
  options: ScoreOptions = {},
): Promise<RubricScores> {
  const aggregations = new Set(options.aggregations ?? AGGREGATIONS);
  const judge = options.judge ?? null;
  const input = { question: sample.question, reference: sample.reference ?? null, response: sample.completion };
  let criteria: CriterionVerdict[] = [];
  if (aggregations.has('explicit')) {
    criteria = await mapLimit(rubric.items, options.concurrency ?? 1, async (item): Promise<CriterionVerdict> => {
      const p = programmatic(item, sample);
      if (p) return p;
      if (!judge) {
        return {
          id: item.id,
          met: null,
          explanation: 'no judge was given',
          raw: null,
          status: 'skipped',
          source: 'judge',
          attempts: 0,
          cached: false,
        };
      }
      return judge.criterion(input, item);
    });
  }
  const implicit = aggregations.has('implicit') ? (judge ? await judge.implicit(input, rubric) : skippedScale()) : null;
  const likert = aggregations.has('likert') ? (judge ? await judge.likert(input) : skippedScale()) : null;
  return {
    version: RUBRIC_SCORES_VERSION,
    rubricId: rubric.id,
    weights: Object.fromEntries(rubric.items.map((i) => [i.id, i.weight])),
    judge: judge ? judge.info : null,
    criteria,
    explicit: aggregations.has('explicit')
      ? aggregateExplicit(rubric.items, criteria, options.explicit ?? DEFAULT_EXPLICIT_OPTIONS)
      : null,
    implicit,
    likert,
    promptInjection: detectPromptInjection(sample.completion),
  };
}
