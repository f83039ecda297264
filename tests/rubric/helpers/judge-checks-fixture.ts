/**
 * For the judge-check tests: a RaR-format dataset built here (rows, completions, perturbed
 * pairs) whose criteria are decided by tokens, and BIASED JUDGE DOUBLE — a TEST DOUBLE of an LLM
 * judge (no model can run here) on the tests' loopback OpenAI server — with scripted,
 * deliberately planted faults:
 * - criterion verdicts: met iff the response contains the criterion's token, except that a
 *   planted (response, criterion) gets the opposite verdict the second time the very same prompt
 *   is asked (so k ≥ 2 repeats that really ask again see it change once);
 * - pairwise: the response of higher quality wins, except that a planted pair always gets "A"
 *   (position bias);
 * - implicit: 1 + quality, clamped to 1..10; Likert: always 6; perturbation: the reference with
 *   its first token removed.
 */
import { section, startJudgeServer, type ChatRequest, type JudgeServer } from './openai-server.ts';

export const ROWS = 5;
/** Weights of each row's criteria (integer scale): 2 essential, 2 important, 2 optional, 2 pitfalls. */
export const WEIGHTS = [5, 5, 4, 4, 2, 2, -2, -1] as const;

const token = (r: number, j: number) => (WEIGHTS[j]! < 0 ? `bad${r}x${j}` : `kw${r}x${j}`);

/** The tokens a criterion's text names (one per criterion). */
const TOKEN = /\b(?:kw|bad)\d+x\d+\b/;

export interface RarLine {
  id: string;
  question: string;
  reference_answer: string;
  rubric: Array<{ title: string; description: string; weight: number }>;
}

export function rubricOf(r: number): RarLine['rubric'] {
  return WEIGHTS.map((weight, j) => ({
    title: `Criterion ${r}.${j}`,
    description: `The response contains the token ${token(r, j)}.`,
    weight,
  }));
}

/** A response of row r containing the positive tokens `js` and the pitfall tokens `pits`. */
export function responseOf(r: number, js: readonly number[], pits: readonly number[] = [], wording = 'Answer'): string {
  return `${wording} ${r}: ${[...js, ...pits].map((j) => token(r, j)).join(' ')}.`;
}

const POSITIVE = [0, 1, 2, 3, 4, 5];

export function datasetLines(): RarLine[] {
  return Array.from({ length: ROWS }, (_, r) => ({
    id: `q${r}`,
    question: `Question ${r}: name the tokens.`,
    reference_answer: responseOf(r, POSITIVE, [], 'Reference'),
    rubric: rubricOf(r),
  }));
}

/** Three samples per row, of distinct quality: all 6 tokens; 4; 2 and a pitfall. */
export function completionLines(): Array<{ id: string; completion: string }> {
  return Array.from({ length: ROWS }, (_, r) => [
    { id: `q${r}`, completion: responseOf(r, POSITIVE) },
    { id: `q${r}`, completion: responseOf(r, [0, 1, 2, 3]) },
    { id: `q${r}`, completion: responseOf(r, [0, 1], [6]) },
  ]).flat();
}

/**
 * Preferred-vs-perturbed pairs: q0 loses an Essential token, q1 an Optional one, q2 gains a
 * pitfall, q3 is reworded only (a tie), q4's "perturbed" answer is the better one. Lines 0–2
 * carry their rubric, lines 3–4 name a dataset row instead.
 */
export function perturbedLines(): Array<Record<string, unknown>> {
  const ref = (r: number) => responseOf(r, POSITIVE, [], 'Reference');
  const pairs = [
    { r: 0, reference: ref(0), perturbed: responseOf(0, [1, 2, 3, 4, 5]) },
    { r: 1, reference: ref(1), perturbed: responseOf(1, [0, 1, 2, 3, 4]) },
    { r: 2, reference: ref(2), perturbed: responseOf(2, POSITIVE, [7]) },
    { r: 3, reference: ref(3), perturbed: responseOf(3, POSITIVE, [], 'Reworded') },
    { r: 4, reference: responseOf(4, [0, 1, 2, 3, 4], [], 'Reference'), perturbed: responseOf(4, POSITIVE) },
  ];
  return pairs.map(({ r, reference, perturbed }) => ({
    id: `q${r}`,
    prompt: `Question ${r}: name the tokens.`,
    reference,
    perturbed,
    ...(r < 3 ? { rubric: rubricOf(r) } : {}),
  }));
}

/** The double's honest verdict: the response contains the criterion's token. */
export function honestMet(response: string, criterionText: string): boolean {
  const t = TOKEN.exec(criterionText)![0];
  return new RegExp(`\\b${t}\\b`).test(response);
}

/** The double's quality of a response: its positive tokens minus twice its pitfall tokens. */
export function quality(response: string): number {
  const pos = response.match(/\bkw\d+x\d+\b/g)?.length ?? 0;
  const bad = response.match(/\bbad\d+x\d+\b/g)?.length ?? 0;
  return pos - 2 * bad;
}

export const implicitScore = (response: string) => Math.min(10, Math.max(1, 1 + quality(response)));
export const LIKERT_SCORE = 6;

/** The key of a planted flip: the response and the criterion's title. */
export const flipKey = (response: string, title: string) => `${response}\u0000${title}`;
/** The key of a planted position bias: the two responses, in either order. */
export const pairKey = (a: string, b: string) => [a, b].sort().join('\u0000');

export interface BiasedJudgeDouble extends JudgeServer {
  /** How many criterion requests were answered with a planted flip. */
  flipsServed(): number;
}

/** Starts the BIASED JUDGE DOUBLE (see the file's comment) with its planted faults. */
export async function startBiasedJudgeDouble(planted: {
  flips: ReadonlySet<string>;
  biasedPairs: ReadonlySet<string>;
}): Promise<BiasedJudgeDouble> {
  const seen = new Map<string, number>();
  let flipsServed = 0;
  const respond = (req: ChatRequest): string => {
    const user = req.messages.find((m) => m.role === 'user')!.content;
    if (user.includes('<response_a>')) {
      const a = section(req, 'response_a');
      const b = section(req, 'response_b');
      if (planted.biasedPairs.has(pairKey(a, b))) return '{"winner": "A", "explanation": "planted position bias"}';
      const winner = quality(a) > quality(b) ? 'A' : quality(a) < quality(b) ? 'B' : 'tie';
      return JSON.stringify({ winner, explanation: 'by quality' });
    }
    if (user.includes('Rewrite the reference answer')) {
      return section(req, 'reference_answer').replace(TOKEN, '').replace(/ {2,}/g, ' ');
    }
    if (user.includes('<criterion>')) {
      const response = section(req, 'response');
      const criterion = section(req, 'criterion');
      const title = criterion.split(':')[0]!;
      const n = (seen.get(user) ?? 0) + 1;
      seen.set(user, n);
      let met = honestMet(response, criterion);
      if (n === 2 && planted.flips.has(flipKey(response, title))) {
        met = !met;
        flipsServed += 1;
      }
      return JSON.stringify({ criteria_met: met, explanation: 'token check' });
    }
    if (user.includes('<rubric>'))
      return JSON.stringify({ score: implicitScore(section(req, 'response')), explanation: 'quality' });
    return JSON.stringify({ score: LIKERT_SCORE, explanation: 'constant' });
  };
  const server = await startJudgeServer(respond);
  return {
    url: server.url,
    get calls() {
      return server.calls;
    },
    get requests() {
      return server.requests;
    },
    close: () => server.close(),
    flipsServed: () => flipsServed,
  };
}
