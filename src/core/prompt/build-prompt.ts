/**
 * Builds the prompt of one question: the template filled with the database's schema (CREATE
 * TABLE statements, N sample rows per table, BIRD column descriptions when available), the
 * evidence and the question, then fitted to the model's context window.
 *
 * Fitting, when the prompt is too long for `contextWindow - reserve` tokens, removes in order:
 * 1. sample rows, table by table, least relevant table first;
 * 2. column descriptions, in the same order;
 * 3. whole tables that the question and evidence do not mention (see relevance.ts), least
 *    relevant first, always keeping at least one table.
 * Mentioned tables and CREATE TABLE statements are never cut. What was cut is recorded per
 * item (`fit.cut`); a prompt that still does not fit says so (`fit.fits = false`) and the run
 * layer decides what to do with it.
 */
import type { ChatMessage, Prompt } from '../engine/engine.ts';
import type { Question } from '../types.ts';
import { parseDescriptions } from './bird-descriptions.ts';
import { tableRelevance } from './relevance.ts';
import {
  descriptionBlock,
  hasDescriptions,
  renderSchema,
  renderTable,
  sampleRowsBlock,
  type TableContext,
  type TableParts,
} from './render-schema.ts';
import type { SchemaSource } from './schema-source.ts';
import { renderTemplateText, templateFingerprint, type PromptTemplate } from './templates.ts';
import { MESSAGE_OVERHEAD, approxTokens, promptLimit, type PromptBudget, type TokenCounter } from './token-budget.ts';

/** A database as prompts see it; load once per database with `loadDatabaseContext`. */
export interface DatabaseContext {
  dbId: string;
  tables: TableContext[];
  /** Sample rows fetched per table (prompts may show fewer). */
  sampleRows: number;
  /** Description files were found for this database. */
  hasDescriptionFiles: boolean;
}

export async function loadDatabaseContext(
  source: SchemaSource,
  dbId: string,
  options: { sampleRows: number; descriptions: boolean },
): Promise<DatabaseContext> {
  const infos = await source.tables(dbId);
  const files = options.descriptions && source.descriptionFiles ? await source.descriptionFiles(dbId) : null;
  const descriptions = files ? parseDescriptions(files) : new Map();
  const tables: TableContext[] = [];
  for (const info of infos) {
    const sample = options.sampleRows > 0 ? await source.sampleRows(dbId, info.name, options.sampleRows) : null;
    tables.push({ ...info, sample, description: descriptions.get(info.name.toLowerCase()) ?? null });
  }
  return { dbId, tables, sampleRows: options.sampleRows, hasDescriptionFiles: !!files && files.length > 0 };
}

interface BuildPromptOptions {
  /** Sample rows per table; default the template's (capped by what the context holds). */
  sampleRows?: number;
  /** Show BIRD column descriptions; default the template's. */
  descriptions?: boolean;
  /** SQL dialect named in the prompt; default `SQLite`. */
  dialect?: string;
  /** Fit to a context window; without it the prompt is never cut. */
  budget?: PromptBudget;
  /** The engine's tokenizer; default `approxTokens` (characters / 4). */
  countTokens?: TokenCounter;
}

interface PromptCuts {
  /** Tables whose sample rows were dropped. */
  sampleRows: string[];
  /** Tables whose column descriptions were dropped. */
  descriptions: string[];
  /** Tables dropped entirely. */
  tables: string[];
}

export interface PromptFit {
  /** Tokens the prompt could use, or null without a budget. */
  limit: number | null;
  tokens: number;
  counter: 'engine' | 'chars/4';
  fits: boolean;
  cut: PromptCuts;
}

export interface BuiltPrompt {
  prompt: Prompt;
  templateId: string;
  templateFingerprint: string;
  sampleRows: number;
  descriptions: boolean;
  fit: PromptFit;
}

type Step = { kind: 'rows' | 'descriptions' | 'table'; table: TableContext };

export async function buildPrompt(
  template: PromptTemplate,
  db: DatabaseContext,
  question: Pick<Question, 'questionId' | 'question' | 'evidence'>,
  options: BuildPromptOptions = {},
): Promise<BuiltPrompt> {
  const rows = Math.min(options.sampleRows ?? template.sampleRows, db.sampleRows);
  const withDescriptions = options.descriptions ?? template.descriptions;
  const count: TokenCounter = options.countTokens ?? approxTokens;
  const values = { question: question.question, evidence: question.evidence, dialect: options.dialect ?? 'SQLite' };

  const parts = new Map<string, TableParts>();
  for (const t of db.tables) {
    parts.set(t.name, { rows: t.sample ? rows : 0, descriptions: withDescriptions && hasDescriptions(t) });
  }
  const messages = (): ChatMessage[] => {
    const all = { ...values, schema: renderSchema(db.tables, parts) };
    const out: ChatMessage[] = [];
    if (template.system !== null) out.push({ role: 'system', content: renderTemplateText(template.system, all) });
    out.push({ role: 'user', content: renderTemplateText(template.user, all) });
    return out;
  };
  const measure = async (ms: ChatMessage[]) => {
    let n = 0;
    for (const m of ms) n += await count(m.content);
    return n + MESSAGE_OVERHEAD * ms.length;
  };

  const cut: PromptCuts = { sampleRows: [], descriptions: [], tables: [] };
  const limit = options.budget ? promptLimit(options.budget) : null;
  let current = messages();
  let tokens = await measure(current);

  if (limit !== null && tokens > limit) {
    const text = `${question.question}\n${question.evidence}`;
    const ranked = db.tables
      .map((table, index) => ({ table, index, score: tableRelevance(table, text) }))
      .sort((a, b) => a.score - b.score || b.index - a.index);
    const steps: Step[] = [
      ...ranked
        .filter((r) => parts.get(r.table.name)!.rows > 0)
        .map((r) => ({ kind: 'rows' as const, table: r.table })),
      ...ranked
        .filter((r) => parts.get(r.table.name)!.descriptions)
        .map((r) => ({ kind: 'descriptions' as const, table: r.table })),
      ...ranked.filter((r) => r.score === 0).map((r) => ({ kind: 'table' as const, table: r.table })),
    ];
    // Each round removes pieces until their own token counts cover the excess, then measures
    // the whole prompt again (pieces do not add up exactly across boundaries).
    let next = 0;
    while (tokens > limit && next < steps.length) {
      let excess = tokens - limit;
      while (excess > 0 && next < steps.length) {
        const step = steps[next++]!;
        const p = parts.get(step.table.name)!;
        if (step.kind === 'rows') {
          excess -= await count(sampleRowsBlock(step.table, p.rows));
          p.rows = 0;
          cut.sampleRows.push(step.table.name);
        } else if (step.kind === 'descriptions') {
          excess -= await count(descriptionBlock(step.table));
          p.descriptions = false;
          cut.descriptions.push(step.table.name);
        } else if (parts.size > 1) {
          excess -= await count(renderTable(step.table, p));
          parts.delete(step.table.name);
          cut.tables.push(step.table.name);
        }
      }
      current = messages();
      tokens = await measure(current);
    }
  }

  return {
    prompt: { messages: current, questionId: question.questionId },
    templateId: template.id,
    templateFingerprint: templateFingerprint(template),
    sampleRows: rows,
    descriptions: withDescriptions,
    fit: {
      limit,
      tokens,
      counter: options.countTokens ? 'engine' : 'chars/4',
      fits: limit === null || tokens <= limit,
      cut,
    },
  };
}
