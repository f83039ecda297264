/**
 * The UI state pattern (docs/ui-state.md), checked over the sources: screen states keep their
 * `$state` private (`#x`) behind getters and intent methods, components never bind to a state
 * object's field nor build a state themselves, and state classes carry one of the named suffixes.
 * Each rule is first shown to catch a violation in a small sample, so that none can pass by
 * matching nothing.
 */
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const UI = path.resolve(import.meta.dirname, '../../src/ui');

function files(dir: string, suffix: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith(suffix))
    .map((e) => path.join(e.parentPath, e.name))
    .sort();
}

const rel = (file: string) => path.relative(path.resolve(UI, '../..'), file);

/** `file:line name` of every class field initialised with `$state` that is not `#private`, and of every `$derived` field neither private nor readonly. */
export function publicRuneFields(source: string, file = 'sample'): string[] {
  const out: string[] = [];
  source.split('\n').forEach((line, i) => {
    const m =
      /^\s+((?:(?:public|protected|private|readonly|static|override|declare)\s+)*)([A-Za-z_$][\w$]*)\s*[!?]?\s*(?::[^=]+)?=\s*\$(state|derived)\b/.exec(
        line,
      );
    if (!m) return;
    const [, modifiers = '', name, rune] = m;
    if (rune === 'state' || !/\breadonly\b/.test(modifiers)) out.push(`${file}:${i + 1} ${name} = $${rune}`);
  });
  return out;
}

/** `file:line binding` of every `bind:` onto an object's field (`bind:value={s.name}`); a local variable or a function binding is fine. */
export function fieldBindings(source: string, file = 'sample'): string[] {
  const out: string[] = [];
  source.split('\n').forEach((line, i) => {
    for (const m of line.matchAll(/bind:(\w+)=\{\s*([A-Za-z_$][\w$]*\s*(?:\??\.\s*[\w$]+|\[[^\]]*\])+)\s*\}/g))
      out.push(`${file}:${i + 1} bind:${m[1]}={${m[2]}}`);
  });
  return out;
}

/** `file:line` of every state class a component builds itself (`new RlView(...)`): the workbench builds screen states. */
export function statesBuiltInComponents(source: string, file = 'sample'): string[] {
  const out: string[] = [];
  source.split('\n').forEach((line, i) => {
    for (const m of line.matchAll(/\bnew\s+([A-Z]\w*(?:State|View|Draft|Slot))\s*\(/g))
      out.push(`${file}:${i + 1} new ${m[1]}`);
  });
  return out;
}

/**
 * `file:line name` of every plain (deep) `$state` field besides the record `#s`: a screen's fields
 * live in one record (docs/ui-state.md); `$state.raw` fields (large data read whole) stay apart. A
 * field kept out of the record on purpose says why on the line above, with "outside the record".
 */
export function fieldsOutsideRecord(source: string, file = 'sample'): string[] {
  const out: string[] = [];
  const lines = source.split('\n');
  const hasRecord = lines.some((l) => /^\s+#s\s*=\s*\$state\s*[<(]/.test(l));
  lines.forEach((line, i) => {
    const m = /^\s+(?:readonly\s+)?#([A-Za-z_$][\w$]*)\s*(?::[^=]+)?=\s*\$state\s*[<(]/.exec(line);
    if (m && m[1] !== 's' && !/outside the record/.test(lines[i - 1] ?? '')) out.push(`${file}:${i + 1} #${m[1]}`);
  });
  // A class with one field and no record (the router's last run, a counter) keeps it as it is.
  return hasRecord || out.length > 1 ? out : [];
}

/** The suffixes of state classes, each with one meaning (docs/ui-state.md), and the shell's own classes that are not screen states. */
const SUFFIXES = ['State', 'View', 'Draft', 'Slot'];
const SHELL_CLASSES = new Set(['Workbench', 'Router', 'Staged', 'AppUpdate', 'ScreenKind']);

export function misnamedClasses(source: string, file = 'sample'): string[] {
  const out: string[] = [];
  source.split('\n').forEach((line, i) => {
    const m = /^export\s+(?:abstract\s+)?class\s+(\w+)/.exec(line);
    if (m && !SHELL_CLASSES.has(m[1]!) && !SUFFIXES.some((s) => m[1]!.endsWith(s)))
      out.push(`${file}:${i + 1} ${m[1]}`);
  });
  return out;
}

describe('the UI state pattern (docs/ui-state.md)', () => {
  it('each check finds the violation in a sample and passes the pattern', () => {
    const bad = [
      'export class FooScreen {',
      "  name = $state('');",
      '  readonly items = $state.raw<string[]>([]);',
      '  total = $derived(1);',
      '  #ok = $state(0);',
      '  readonly sum = $derived(2);',
      '}',
    ].join('\n');
    expect(publicRuneFields(bad)).toEqual([
      'sample:2 name = $state',
      'sample:3 items = $state',
      'sample:4 total = $derived',
    ]);
    expect(misnamedClasses(bad)).toEqual(['sample:1 FooScreen']);
    const record = [
      'export class FooState {',
      '  #s = $state<FooFields>({ n: 0 });',
      '  #list = $state.raw<number[]>([]);',
      '  #open = $state(false);',
      "  #name = $state<string>('');",
      '  // A File is not proxied; kept outside the record: …',
      '  #file = $state<File | null>(null);',
      '}',
    ].join('\n');
    expect(fieldsOutsideRecord(record)).toEqual(['sample:4 #open', 'sample:5 #name']);
    const two = ['export class BarState {', '  #a = $state(0);', '  #b = $state(1);', '}'].join('\n');
    expect(fieldsOutsideRecord(two)).toEqual(['sample:2 #a', 'sample:3 #b']);
    expect(fieldsOutsideRecord('export class Counter {\n  #count = $state(0);\n}')).toEqual([]);
    expect(misnamedClasses('export class FooState {}\nexport class Router {}')).toEqual([]);
    const markup =
      '<input bind:value={g.name} /><input bind:checked={sc.a.b} />\n<input bind:value={local} /><input bind:value={() => g.n, (n) => g.setN(n)} /><input bind:group={r.items[0]} />';
    expect(fieldBindings(markup)).toEqual([
      'sample:1 bind:value={g.name}',
      'sample:1 bind:checked={sc.a.b}',
      'sample:2 bind:group={r.items[0]}',
    ]);
    expect(statesBuiltInComponents('const view = new RlView(runId, store);\nconst x = new Map();')).toEqual([
      'sample:1 new RlView',
    ]);
  });

  const stateFiles = files(UI, '.svelte.ts');
  const components = files(UI, '.svelte');

  it('finds the state classes and the components it checks', () => {
    expect(stateFiles.map(rel)).toEqual(
      expect.arrayContaining([
        'src/ui/rubric/rar-state.svelte.ts',
        'src/ui/engine/engine-slot.svelte.ts',
        'src/ui/workbench/new-run-draft.svelte.ts',
      ]),
    );
    expect(components.map(rel)).toEqual(
      expect.arrayContaining(['src/ui/generate/GeneratePage.svelte', 'src/ui/rubric/CriterionEditor.svelte']),
    );
  });

  it('no state class exposes a $state field: private #fields behind getters and methods', () => {
    expect(stateFiles.flatMap((f) => publicRuneFields(readFileSync(f, 'utf8'), rel(f)))).toEqual([]);
  });

  it('a state class keeps its fields in one record, #s, besides its $state.raw data (a one-field class may keep its field)', () => {
    expect(stateFiles.flatMap((f) => fieldsOutsideRecord(readFileSync(f, 'utf8'), rel(f)))).toEqual([]);
  });

  it('no component binds to a field of a state object (it reads getters and calls methods)', () => {
    expect(components.flatMap((f) => fieldBindings(readFileSync(f, 'utf8'), rel(f)))).toEqual([]);
  });

  it('no component builds a state itself: the workbench builds screen states, a screen state its parts', () => {
    expect(components.flatMap((f) => statesBuiltInComponents(readFileSync(f, 'utf8'), rel(f)))).toEqual([]);
  });

  it('every state class is named …State, …View, …Draft or …Slot', () => {
    expect(stateFiles.flatMap((f) => misnamedClasses(readFileSync(f, 'utf8'), rel(f)))).toEqual([]);
  });
});
