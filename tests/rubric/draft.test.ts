/**
 * Drafting a rubric from a question and its reference answer: the strict parser of the
 * engine's answer (good and bad outputs), and the whole call through the real OpenAI engine
 * against a loopback server with a scripted answer (a test double for the model).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOpenAiEngine } from '../../src/adapters/engines/openai-engine.ts';
import { RAR_DRAFT_V1, draftRubric, draftedRubric, parseDraftedCriteria } from '../../src/core/rubric/draft.ts';
import { startJudgeServer, type JudgeServer } from './helpers/openai-server.ts';

type Crit = { title: string; description: string; category: string; weight: number };

/** n criteria cycling through the four categories with fitting weights. */
function criteria(n: number): Crit[] {
  const cats: Array<[string, number]> = [
    ['essential', 5],
    ['important', 4],
    ['optional', 2],
    ['pitfall', -2],
  ];
  return Array.from({ length: n }, (_, i) => {
    const [category, weight] = cats[i % 4]!;
    return { title: `Criterion ${i + 1}`, description: `Checks point number ${i + 1}.`, category, weight };
  });
}

describe('parseDraftedCriteria: the engine answer read strictly', () => {
  it.each([
    ['the array alone', JSON.stringify(criteria(7))],
    ['in a ```json fence after prose', `Here is the rubric:\n\`\`\`json\n${JSON.stringify(criteria(12))}\n\`\`\``],
    ['after a think block holding brackets', `<think>maybe [1, 2]?</think>${JSON.stringify(criteria(20))}`],
  ])('accepts %s', (_, text) => {
    const got = parseDraftedCriteria(text);
    const want = JSON.parse(/\[[\s\S]*\]/.exec(text.replace(/<think>[\s\S]*<\/think>/, ''))![0]) as Crit[];
    expect(got).toEqual(want);
  });

  it('accepts capitalised categories and trims the text', () => {
    const cs = criteria(7).map((c, i) => (i === 0 ? { ...c, title: '  Names X ', category: 'Essential' } : c));
    const [first] = parseDraftedCriteria(JSON.stringify(cs));
    expect(first).toEqual({
      title: 'Names X',
      description: 'Checks point number 1.',
      category: 'essential',
      weight: 5,
    });
  });

  const junk = 'Once upon a time there was a little girl named Lily. She liked to play in the park with her mom.';
  it.each([
    [
      'free text (a tiny model’s story)',
      junk,
      /the answer has no JSON array.*"Once upon a time there was a little girl/,
    ],
    ['an empty answer', '   ', /the answer has no JSON array.*\(empty answer\)/],
    ['invalid JSON', '[{"title": "A", "description": "b",}]', /not valid JSON/],
    ['too few criteria', JSON.stringify(criteria(6)), /it holds 6 entries/],
    ['too many criteria', JSON.stringify(criteria(21)), /it holds 21 entries/],
    ['numbers instead of criteria', JSON.stringify([1, 2, 3, 4, 5, 6, 7]), /criterion 1 is .*1.*, not an object/],
    [
      'a missing description',
      JSON.stringify(criteria(7).map((c, i) => (i === 2 ? { ...c, description: '' } : c))),
      /criterion 3 has no "description"/,
    ],
    [
      'an unknown category',
      JSON.stringify(criteria(7).map((c, i) => (i === 1 ? { ...c, category: 'critical' } : c))),
      /criterion 2 has category the string "critical"/,
    ],
    [
      'a weight given as text',
      JSON.stringify(criteria(7).map((c, i) => (i === 0 ? { ...c, weight: '5' } : c))),
      /criterion 1 has weight the string "5"/,
    ],
    [
      'a weight of zero',
      JSON.stringify(criteria(7).map((c, i) => (i === 0 ? { ...c, weight: 0 } : c))),
      /criterion 1 has weight 0, outside/,
    ],
    [
      'a weight beyond the scale',
      JSON.stringify(criteria(7).map((c, i) => (i === 0 ? { ...c, weight: 10 } : c))),
      /criterion 1 has weight 10, outside/,
    ],
    [
      'a negative weight outside pitfalls',
      JSON.stringify(criteria(7).map((c, i) => (i === 1 ? { ...c, weight: -3 } : c))),
      /criterion 2 is important with the negative weight -3/,
    ],
  ])('refuses %s, saying what was expected and what came back', (_, text, reason) => {
    let message = '';
    try {
      parseDraftedCriteria(text);
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(/^the drafted rubric was refused: expected one JSON array of 7–20 criteria/);
    expect(message).toMatch(reason);
    expect(message).toContain('The engine answered ');
  });

  it('quotes at most the first 160 characters of a long answer', () => {
    const long = 'x'.repeat(5000);
    expect(() => parseDraftedCriteria(long)).toThrow(`The engine answered "${'x'.repeat(160)}…"`);
  });

  it('turns parsed criteria into a rubric of judge criteria c1..cn that validates', () => {
    const r = draftedRubric(parseDraftedCriteria(JSON.stringify(criteria(8))), 'd', 'Drafted');
    expect(r.items.map((i) => i.id)).toEqual(['c1', 'c2', 'c3', 'c4', 'c5', 'c6', 'c7', 'c8']);
    expect(r.items.every((i) => i.check.kind === 'judge')).toBe(true);
    expect(r.items[3]).toMatchObject({ category: 'pitfall', weight: -2, title: 'Criterion 4' });
  });
});

describe('draftRubric through the OpenAI engine (loopback double of a drafting model)', () => {
  let server: JudgeServer;
  let reply = '';
  beforeAll(async () => {
    server = await startJudgeServer(() => reply);
  });
  afterAll(async () => {
    await server.close();
  });
  const engine = () => createOpenAiEngine({ baseUrl: server.url, model: 'drafter' });

  it('sends the question and reference in the drafting prompt and parses the answer', async () => {
    reply = `Sure.\n${JSON.stringify(criteria(9))}`;
    const e = engine();
    await e.load({ id: 'drafter', source: server.url });
    const got = await draftRubric({
      engine: e,
      input: { question: 'Why is the sky blue?', reference: 'Rayleigh scattering of sunlight.' },
      id: 'sky',
      title: 'Sky',
    });
    expect(got.rubric.items).toHaveLength(9);
    expect(got.promptId).toBe(RAR_DRAFT_V1.id);
    const req = server.requests.at(-1)!;
    expect(req.messages[0]!.content).toBe(RAR_DRAFT_V1.system);
    expect(req.messages[1]!.content).toContain('<question>\nWhy is the sky blue?\n</question>');
    expect(req.messages[1]!.content).toContain('Rayleigh scattering of sunlight.');
  });

  it('refuses an answer that is not criteria, quoting it', async () => {
    reply = 'The sky is blue because of the sea.';
    const e = engine();
    await e.load({ id: 'drafter', source: server.url });
    await expect(
      draftRubric({ engine: e, input: { question: 'q', reference: 'r' }, id: 'x', title: 'x' }),
    ).rejects.toThrow(/no JSON array.*"The sky is blue because of the sea\."/);
  });

  it('refuses an empty question or reference before calling the engine', async () => {
    const before = server.calls;
    await expect(
      draftRubric({ engine: engine(), input: { question: ' ', reference: 'r' }, id: 'x', title: 'x' }),
    ).rejects.toThrow(/needs the question/);
    await expect(
      draftRubric({ engine: engine(), input: { question: 'q', reference: '' }, id: 'x', title: 'x' }),
    ).rejects.toThrow(/needs the reference answer/);
    expect(server.calls).toBe(before);
  });
});
