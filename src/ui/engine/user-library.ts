/**
 * The researcher's own WebLLM checkpoints and prompt templates, kept in this browser's
 * localStorage (`rlvr-workbench-models`, `rlvr-workbench-templates`): small plain records, no
 * weights (those live in web-llm's Cache API, see webllm-cache.ts).
 *
 * User templates are named `<name>-v<version>`; "edit as new" on `my-template-v1` saves
 * `my-template-v2`, so a template never changes under a run that used it.
 */
import type { CustomModelRecord } from '../../app/engine-ports.ts';
import { isRecord } from '../../core/formats/questions.ts';
import type { Result } from '../../core/result.ts';
import { BUILTIN_TEMPLATES, templateProblems, type PromptTemplate } from '../../core/prompt/templates.ts';

const MODELS_KEY = 'rlvr-workbench-models';
const TEMPLATES_KEY = 'rlvr-workbench-templates';

function read<T>(key: string, valid: (x: unknown) => x is T): T[] {
  try {
    const raw = JSON.parse(localStorage.getItem(key) ?? '[]') as unknown;
    return Array.isArray(raw) ? raw.filter(valid) : [];
  } catch {
    return [];
  }
}

function write(key: string, value: unknown): void {
  try {
    localStorage.setItem(key, JSON.stringify(value));
  } catch {
    /* private mode or full storage: kept for this page only */
  }
}

const isModel = (x: unknown): x is CustomModelRecord =>
  isRecord(x) && ['id', 'modelUrl', 'filesUrl', 'modelLibUrl'].every((k) => typeof x[k] === 'string');
const isTemplate = (x: unknown): x is PromptTemplate =>
  isRecord(x) &&
  typeof x.id === 'string' &&
  typeof x.user === 'string' &&
  Array.isArray(x.stop) &&
  templateProblems(x as unknown as PromptTemplate).length === 0;

export function loadCustomModels(): CustomModelRecord[] {
  return read(MODELS_KEY, isModel);
}

/** Adds or replaces (same id) a record; returns the new list. */
export function saveCustomModel(record: CustomModelRecord): CustomModelRecord[] {
  const list = [...loadCustomModels().filter((m) => m.id !== record.id), record];
  write(MODELS_KEY, list);
  return list;
}

export function removeCustomModel(id: string): CustomModelRecord[] {
  const list = loadCustomModels().filter((m) => m.id !== id);
  write(MODELS_KEY, list);
  return list;
}

export function loadUserTemplates(): PromptTemplate[] {
  return read(TEMPLATES_KEY, isTemplate);
}

/** Validates (templateProblems, no clash with a built-in or saved id) and saves: the saved list, or the problems. */
export function saveUserTemplate(t: PromptTemplate): Result<PromptTemplate[], string[]> {
  const problems = templateProblems(t);
  const existing = loadUserTemplates();
  if (BUILTIN_TEMPLATES.some((b) => b.id === t.id) || existing.some((u) => u.id === t.id)) {
    problems.push(`a template "${t.id}" already exists: templates never change once saved, give a new name or version`);
  }
  if (problems.length > 0) return { ok: false, error: problems };
  const list = [...existing, t];
  write(TEMPLATES_KEY, list);
  return { ok: true, value: list };
}

/**
 * The id an edit of `id` is saved under: a user template's next version (`my-template-v1` ->
 * `my-template-v2`, skipping taken ones), and for a built-in one `my-<name>-v1`.
 */
export function nextTemplateId(id: string, taken: readonly string[]): string {
  const builtin = BUILTIN_TEMPLATES.some((b) => b.id === id);
  const m = /^(.*)-v(\d+)$/.exec(id);
  const stem = builtin ? `my-${m ? m[1] : id}` : m ? m[1]! : id;
  let v = builtin ? 1 : m ? Number(m[2]) + 1 : 1;
  while (taken.includes(`${stem}-v${v}`)) v++;
  return `${stem}-v${v}`;
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 ** 2) return `${(n / 1024).toFixed(1)} KiB`;
  if (n < 1024 ** 3) return `${(n / 1024 ** 2).toFixed(1)} MiB`;
  return `${(n / 1024 ** 3).toFixed(2)} GiB`;
}
