import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildPrompt, loadDatabaseContext, type DatabaseContext } from '../../src/core/prompt/build-prompt.ts';
import type { SchemaSource } from '../../src/core/prompt/schema-source.ts';
import { BIRD_MINIDEV_V1, REASONING_V1 } from '../../src/core/prompt/templates.ts';
import { approxTokens } from '../../src/core/prompt/token-budget.ts';
import { parseQuestions } from '../../src/core/formats/questions.ts';
import type { Question } from '../../src/core/types.ts';
import { sharedData } from '../helpers/shared-data.ts';
import { sqljsSchemaSource } from './sqljs-schema-source.ts';

const sha = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex').slice(0, 16);
const codePoints = (s: string) => [...s].length;

/*
 * Fingerprints of the text that BIRD mini-dev's own Python (llm/src/table_schema.py and
 * llm/src/prompt.py, run with Python 3.11 on these databases) prints. Only hashes are kept:
 * the BIRD data itself is never copied into the repository.
 */
const BIRD_SCHEMAS: Array<[string, number, string, number]> = [
  ['superhero', 0, 'a6c16a4899964e4b', 2264],
  ['superhero', 3, '5d02216212e3c5e5', 4190],
  ['student_club', 0, 'c2e219a2698eefdb', 2221],
  ['student_club', 3, '2ddd1c79460e3727', 5978],
  ['toxicology', 0, 'e32f5ca887b6677a', 978],
  ['toxicology', 3, 'b2c5601e694646b9', 1663],
];
const BIRD_PROMPTS: Array<[number, boolean, string, number]> = [
  [1312, true, '4d64ecc929f1aa45', 2859],
  [1312, false, '6fff0ee51a64ec95', 2696],
  [1317, true, '650d881cbeb14a45', 2959],
  [1317, false, '1674dce35eee9cc0', 2802],
  [1322, true, 'af9e1b3d167fb782', 2934],
  [1322, false, 'ad7614ef3d1976da', 2767],
  [327, true, '9a8f4cb554f45817', 1664],
  [327, false, '004b237918862f0b', 1484],
];

let source: SchemaSource & { close(): void };
const contexts = new Map<string, DatabaseContext>();
let questions: Question[];

async function context(dbId: string): Promise<DatabaseContext> {
  let c = contexts.get(dbId);
  if (!c) {
    c = await loadDatabaseContext(source, dbId, { sampleRows: 3, descriptions: true });
    contexts.set(dbId, c);
  }
  return c;
}

function question(id: number): Question {
  const q = questions.find((x) => x.questionId === id);
  if (!q) throw new Error(`mini-dev question ${id} not found`);
  return q;
}

/** reasoning-v1's prompt of mini-dev question `q` on its database's context, built with `options`. */
async function reasoningPrompt(q: Question, options?: Parameters<typeof buildPrompt>[3]) {
  return buildPrompt(REASONING_V1, await context(q.dbId), q, options);
}

beforeAll(async () => {
  source = await sqljsSchemaSource(sharedData('bird', 'databases'));
  questions = parseQuestions(
    readFileSync(sharedData('bird', 'minidev', 'mini_dev_sqlite.json'), 'utf8'),
    'mini_dev_sqlite.json',
  );
});
afterAll(() => source?.close());

describe('bird-minidev-v1 on ../shared/data/bird', () => {
  it.each(BIRD_SCHEMAS)(
    'prints the schema of %s with %i sample rows exactly as BIRD mini-dev does',
    async (dbId, rows, hash, length) => {
      const built = await buildPrompt(
        BIRD_MINIDEV_V1,
        await context(dbId),
        { questionId: 0, question: 'Q', evidence: '' },
        { sampleRows: rows },
      );
      const text = built.prompt.messages[0]!.content;
      const schema = text.slice(0, text.indexOf('\n\n-- Using valid SQLite'));
      expect(codePoints(schema)).toBe(length);
      expect(sha(schema)).toBe(hash);
    },
  );

  it.each(BIRD_PROMPTS)(
    'builds the prompt of question %i (evidence: %s) character for character',
    async (id, useEvidence, hash, length) => {
      const q = question(id);
      const built = await buildPrompt(BIRD_MINIDEV_V1, await context(q.dbId), {
        ...q,
        evidence: useEvidence ? q.evidence : '',
      });
      expect(built.prompt.messages).toHaveLength(1);
      expect(built.prompt.messages[0]!.role).toBe('user');
      const text = built.prompt.messages[0]!.content;
      expect(codePoints(text)).toBe(length);
      expect(sha(text)).toBe(hash);
    },
  );

  it('names the question, the evidence and the dialect, and asks for SQL only', async () => {
    const q = question(1312);
    const text = (await buildPrompt(BIRD_MINIDEV_V1, await context(q.dbId), q)).prompt.messages[0]!.content;
    expect(text).toContain(`-- ${q.question}\n-- External Knowledge: ${q.evidence}\n`);
    expect(text).toContain(
      '-- Using valid SQLite and understanding External Knowledge, answer the following questions',
    );
    expect(text).toContain('You only need to return the result SQLite SQL code');
    expect(text).not.toContain('example rows');
    expect(text).not.toContain('Column descriptions');
  });

  it('leaves out the knowledge clause when the question has no evidence', async () => {
    const q = question(1312);
    const text = (await buildPrompt(BIRD_MINIDEV_V1, await context(q.dbId), { ...q, evidence: '' })).prompt.messages[0]!
      .content;
    expect(text).toContain('-- Using valid SQLite, answer the following questions');
    expect(text).not.toContain('External Knowledge');
  });

  it('records the prompt question id for replay and the template identity', async () => {
    const q = question(1317);
    const built = await buildPrompt(BIRD_MINIDEV_V1, await context(q.dbId), q);
    expect(built.prompt.questionId).toBe(1317);
    expect(built.templateId).toBe('bird-minidev-v1');
    expect(built.templateFingerprint).toMatch(/^[0-9a-f]{8}$/);
    expect(built.fit).toEqual({
      limit: null,
      tokens: expect.any(Number),
      counter: 'chars/4',
      fits: true,
      cut: { sampleRows: [], descriptions: [], tables: [] },
    });
  });

  it('builds a prompt for each of the 140 mini-dev questions whose databases are here', async () => {
    const here = questions.filter((q) => ['superhero', 'student_club', 'toxicology'].includes(q.dbId));
    expect(here).toHaveLength(140);
    for (const q of here) {
      const built = await buildPrompt(BIRD_MINIDEV_V1, await context(q.dbId), q);
      expect(built.prompt.messages[0]!.content).toContain(`-- ${q.question}\n`);
    }
  });
});

describe('sample rows', () => {
  it('prints values as Python does: REAL with a decimal point, NULL as None, right-justified columns', async () => {
    const built = await buildPrompt(
      BIRD_MINIDEV_V1,
      await context('student_club'),
      { questionId: 0, question: 'Q', evidence: '' },
      { sampleRows: 3 },
    );
    const text = built.prompt.messages[0]!.content;
    const block = text.slice(text.indexOf('SELECT * FROM budget LIMIT 3;'));
    const lines = block.split('\n').slice(1, 5);
    expect(lines[0]).toMatch(/^ +budget_id +category +spent +remaining +amount +event_status +link_to_event $/);
    expect(lines[1]).toContain(' 67.81 ');
    expect(lines[3]).toContain(' -0.199999999999999 ');
    const event = text.slice(text.indexOf('SELECT * FROM event LIMIT 3;'));
    expect(event.split('\n')[2]).toContain(' None ');
  });

  it('shows fewer rows than asked when the context was loaded with fewer', async () => {
    const built = await buildPrompt(
      REASONING_V1,
      await context('toxicology'),
      { questionId: 0, question: 'Q', evidence: '' },
      { sampleRows: 10 },
    );
    expect(built.sampleRows).toBe(3);
    expect(built.prompt.messages[1]!.content).toContain('SELECT * FROM molecule LIMIT 3;');
  });
});

describe('reasoning-v1', () => {
  it('asks for <think> and <answer> with a system message, schema, descriptions, evidence and question', async () => {
    const q = question(1312);
    const built = await reasoningPrompt(q);
    const [system, user] = built.prompt.messages;
    expect(system!.role).toBe('system');
    expect(system!.content).toContain('<think>');
    expect(user!.content).toContain('<answer>');
    expect(user!.content).toContain(`External knowledge: ${q.evidence}`);
    expect(user!.content).toContain(`Question: ${q.question}`);
    expect(user!.content).toContain('3 example rows');
    expect(user!.content).toContain('/* Column descriptions of budget:');
  });

  it('decodes the Windows-1252 and mis-encoded bullets of BIRD description files', async () => {
    const sc = (
      await buildPrompt(REASONING_V1, await context('student_club'), { questionId: 0, question: 'Q', evidence: '' })
    ).prompt.messages[1]!.content;
    expect(sc).toContain(
      'event_status (event status): the status of the event. Values: Closed / Open/ Planning commonsense evidence: • Closed:',
    );
    const tox = (
      await buildPrompt(REASONING_V1, await context('toxicology'), { questionId: 0, question: 'Q', evidence: '' })
    ).prompt.messages[1]!.content;
    expect(tox).toContain('• cl: chlorine • c: carbon');
    expect(tox).not.toMatch(/[\u0080-\u009f]/);
  });

  it('writes no description block for a database without description files', async () => {
    const bare: SchemaSource = { tables: (d) => source.tables(d), sampleRows: (d, t, n) => source.sampleRows(d, t, n) };
    const ctx = await loadDatabaseContext(bare, 'toxicology', { sampleRows: 1, descriptions: true });
    expect(ctx.hasDescriptionFiles).toBe(false);
    const built = await buildPrompt(REASONING_V1, ctx, { questionId: 0, question: 'Q', evidence: '' });
    expect(built.prompt.messages[1]!.content).not.toContain('Column descriptions');
    expect(built.prompt.messages[1]!.content).toContain('1 example rows');
  });
});

describe('fitting the context window', () => {
  const full = async (dbId: string, q: Pick<Question, 'questionId' | 'question' | 'evidence'>) =>
    (await buildPrompt(REASONING_V1, await context(dbId), q)).fit.tokens;

  it('cuts nothing when the prompt fits', async () => {
    const q = question(1359);
    const built = await reasoningPrompt(q, {
      budget: { contextWindow: 32768, reserve: 1024 },
    });
    expect(built.fit.fits).toBe(true);
    expect(built.fit.limit).toBe(31744);
    expect(built.fit.cut).toEqual({ sampleRows: [], descriptions: [], tables: [] });
  });

  it('drops sample rows first, least relevant tables first, and stops as soon as the prompt fits', async () => {
    const q = question(1359);
    const tokens = await full(q.dbId, q);
    const built = await reasoningPrompt(q, {
      budget: { contextWindow: tokens - 200 + 512, reserve: 512 },
    });
    expect(built.fit.fits).toBe(true);
    expect(built.fit.tokens).toBeLessThanOrEqual(tokens - 200);
    expect(built.fit.cut.sampleRows.length).toBeGreaterThan(0);
    expect(built.fit.cut.sampleRows.length).toBeLessThan(8);
    expect(built.fit.cut.descriptions).toEqual([]);
    expect(built.fit.cut.tables).toEqual([]);
    // Question 1359 is about the budget of events: those rows go last.
    expect(built.fit.cut.sampleRows).not.toContain('budget');
    const user = built.prompt.messages[1]!.content;
    expect(user).toContain('SELECT * FROM budget LIMIT 3;');
    for (const t of built.fit.cut.sampleRows) expect(user).not.toContain(`SELECT * FROM ${t} LIMIT 3;`);
  });

  it('then drops descriptions, then tables the question does not mention, keeping the mentioned ones', async () => {
    const q = question(1359);
    const ctx = await context(q.dbId);
    const noExtras = await buildPrompt(REASONING_V1, ctx, q, { sampleRows: 0, descriptions: false });
    const limit = noExtras.fit.tokens - 60;
    const built = await buildPrompt(REASONING_V1, ctx, q, { budget: { contextWindow: limit, reserve: 0 } });
    expect(built.fit.cut.sampleRows).toHaveLength(8);
    expect(built.fit.cut.descriptions).toHaveLength(8);
    expect(built.fit.cut.tables.length).toBeGreaterThan(0);
    expect(built.fit.cut.tables).not.toContain('budget');
    expect(built.fit.cut.tables).not.toContain('event');
    expect(built.fit.fits).toBe(true);
    const user = built.prompt.messages[1]!.content;
    for (const t of built.fit.cut.tables) expect(user).not.toMatch(new RegExp(`CREATE TABLE "?${t}"?\\s`));
    expect(user).toContain('CREATE TABLE "budget"');
  });

  it('says when even the smallest prompt does not fit, and keeps the mentioned tables', async () => {
    const q = question(1359);
    const built = await reasoningPrompt(q, {
      budget: { contextWindow: 100, reserve: 50 },
    });
    expect(built.fit.fits).toBe(false);
    expect(built.fit.tokens).toBeGreaterThan(50);
    expect(built.prompt.messages[1]!.content).toContain('CREATE TABLE "budget"');
  });

  it('never drops the last table, even when nothing is mentioned', async () => {
    const q = { questionId: 0, question: 'zzz', evidence: '' };
    const built = await buildPrompt(REASONING_V1, await context('toxicology'), q, {
      budget: { contextWindow: 10, reserve: 0 },
    });
    expect(built.fit.cut.tables).toHaveLength(3);
    expect(built.prompt.messages[1]!.content).toContain('CREATE TABLE');
  });

  it("counts with the engine's tokenizer when one is given", async () => {
    const q = question(1359);
    const calls: string[] = [];
    const words = (t: string) => {
      calls.push(t);
      return t.split(/\s+/).filter(Boolean).length;
    };
    const built = await reasoningPrompt(q, {
      countTokens: words,
      budget: { contextWindow: 4096, reserve: 0 },
    });
    expect(built.fit.counter).toBe('engine');
    expect(calls.length).toBeGreaterThan(0);
    const approx = await reasoningPrompt(q);
    expect(approx.fit.counter).toBe('chars/4');
    expect(approx.fit.tokens).toBe(approx.prompt.messages.reduce((n, m) => n + approxTokens(m.content) + 8, 0));
  });

  it('measures the final prompt again after each round of cuts (async counter)', async () => {
    const q = question(1322);
    const tokens = await full(q.dbId, q);
    let measured = 0;
    const counter = async (t: string) => {
      measured++;
      return approxTokens(t);
    };
    const built = await reasoningPrompt(q, {
      countTokens: counter,
      budget: { contextWindow: Math.floor(tokens / 2), reserve: 0 },
    });
    expect(built.fit.fits).toBe(true);
    expect(built.fit.tokens).toBeLessThanOrEqual(Math.floor(tokens / 2));
    expect(measured).toBeGreaterThan(2);
  });
});
