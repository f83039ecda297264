/**
 * `npm run check:boundaries` (part of `npm run check`): the layers of docs/architecture.md,
 * checked on every import of `src/` and `workers/`, and no export that nothing imports.
 *
 * Layers (who may import whom; a layer may always import itself):
 * - `src/core`: nothing else.
 * - `src/app`: `src/core`.
 * - `src/adapters`, `workers/`: `src/core`, `src/app`, `src/adapters`, `workers/`.
 * - `src/ui`, `src/report`: `src/core`, `src/app`, `src/ui`, `src/report`; `src/adapters` only from
 *   the context roots `src/ui/main.ts` and `src/ui/browser-store.ts`, and the offline report's page
 *   (`src/report/main.ts`, report.html: a page of its own, built apart).
 * - `src/cli`: `src/core`, `src/app`; `src/adapters` only from `src/cli/main.ts`.
 * Every relative import counts, type-only ones and `export … from` too.
 *
 * Unused exports: a named export of a `.ts` file under `src/` or `workers/` that no other file
 * of the repository (src, workers, tests, bench, scripts, the root's configs) imports or
 * re-exports. `export *` from a file, `import * as`, a dynamic `import()` and
 * `new URL('…', import.meta.url)` count as using every export of it.
 *
 * A wrong-way import already known is listed in scripts/boundaries-baseline.json, so the check
 * can be made strict while the last ones are moved; the list may only shrink: an entry that no
 * longer occurs fails too. `--write-baseline` rewrites it; `--fix-exports` drops the `export`
 * keyword of every unused exported declaration (and prints those it cannot fix).
 *
 *   npx tsx scripts/check-boundaries.ts [ROOT] [--write-baseline] [--fix-exports]
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import ts from 'typescript';

type Layer = 'core' | 'app' | 'adapters' | 'workers' | 'ui' | 'report' | 'cli' | 'types' | 'other';

/** The layers each layer may import, beside itself. */
const ALLOWED: Record<Layer, readonly Layer[]> = {
  core: ['types'],
  app: ['core', 'types'],
  adapters: ['core', 'app', 'workers', 'types'],
  workers: ['core', 'app', 'adapters', 'types'],
  ui: ['core', 'app', 'types'],
  report: ['core', 'app', 'ui', 'types'],
  cli: ['core', 'app', 'types'],
  types: [],
  other: [],
};

/** The context roots: the only files of their layer that may import `src/adapters`. */
const CONTEXT_ROOTS = new Set(['src/ui/main.ts', 'src/ui/browser-store.ts', 'src/report/main.ts', 'src/cli/main.ts']);

const CHECKED = ['src', 'workers'];
const USERS = ['src', 'workers', 'tests', 'bench', 'scripts'];
const SOURCE = /\.(ts|mts|svelte)$/;
const BASELINE = 'scripts/boundaries-baseline.json';

export interface Edge {
  /** Repository-relative paths with `/`. */
  from: string;
  to: string;
}

export interface UnusedExport {
  file: string;
  name: string;
  /** 1-based line of the declaration. */
  line: number;
  /** The `export` keyword's offset when removing it fixes this (a declaration), else null. */
  fixAt: number | null;
}

export interface BoundaryReport {
  wrongWay: Edge[];
  /** Wrong-way imports that the baseline lists. */
  known: Edge[];
  /** Baseline entries that no longer occur. */
  stale: Edge[];
  unused: UnusedExport[];
}

export function layerOf(rel: string): Layer {
  const parts = rel.split('/');
  if (parts[0] === 'workers') return 'workers';
  if (parts[0] !== 'src' || parts.length < 3) return 'other';
  const l = parts[1] as Layer;
  return l in ALLOWED ? l : 'other';
}

/** Whether `from` may import `to` (both repository-relative). */
export function allowed(from: string, to: string): boolean {
  const a = layerOf(from);
  const b = layerOf(to);
  if (a === 'other' || a === b) return true;
  if (b === 'adapters' && CONTEXT_ROOTS.has(from)) return true;
  return ALLOWED[a].includes(b);
}

function walk(root: string, dir: string, out: string[]): void {
  const full = path.join(root, dir);
  if (!existsSync(full)) return;
  for (const name of readdirSync(full).sort()) {
    if (name === 'node_modules' || name.startsWith('.')) continue;
    const rel = `${dir}/${name}`;
    if (statSync(path.join(root, rel)).isDirectory()) walk(root, rel, out);
    else if (SOURCE.test(name) && !name.endsWith('.d.ts')) out.push(rel);
  }
}

/** The script parts of a Svelte file, as one TypeScript text (other parts blanked, offsets kept). */
function scriptText(rel: string, text: string): string {
  if (!rel.endsWith('.svelte')) return text;
  let out = text.replace(/[^\n]/g, ' ');
  for (const m of text.matchAll(/<script\b[^>]*>([\s\S]*?)<\/script>/g)) {
    const start = m.index + m[0].indexOf('>') + 1;
    out = out.slice(0, start) + m[1] + out.slice(start + m[1]!.length);
  }
  return out;
}

function resolve(root: string, fromRel: string, spec: string): string | null {
  if (!spec.startsWith('.')) return null;
  const base = path.posix.normalize(path.posix.join(path.posix.dirname(fromRel), spec));
  const candidates = [base, `${base}.ts`, `${base}/index.ts`, base.replace(/\.js$/, '.ts')];
  for (const c of candidates) if (existsSync(path.join(root, c)) && statSync(path.join(root, c)).isFile()) return c;
  return null;
}

interface Parsed {
  imports: { to: string; names: string[] | 'all' }[];
  exports: UnusedExport[];
}

function parse(root: string, rel: string): Parsed {
  const text = scriptText(rel, readFileSync(path.join(root, rel), 'utf8'));
  const sf = ts.createSourceFile(rel, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const imports: Parsed['imports'] = [];
  const exports: UnusedExport[] = [];
  const lineOf = (pos: number) => sf.getLineAndCharacterOfPosition(pos).line + 1;
  const use = (spec: string, names: string[] | 'all') => {
    const to = resolve(root, rel, spec);
    if (to !== null) imports.push({ to, names });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const c = node.importClause;
      const b = c?.namedBindings;
      if (b && ts.isNamespaceImport(b)) use(node.moduleSpecifier.text, 'all');
      else {
        const names = b && ts.isNamedImports(b) ? b.elements.map((e) => (e.propertyName ?? e.name).text) : [];
        if (c?.name) names.push('default');
        use(node.moduleSpecifier.text, names);
      }
    } else if (ts.isExportDeclaration(node)) {
      const clause = node.exportClause;
      if (node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
        if (!clause || ts.isNamespaceExport(clause)) use(node.moduleSpecifier.text, 'all');
        else
          use(
            node.moduleSpecifier.text,
            clause.elements.map((e) => (e.propertyName ?? e.name).text),
          );
      }
      // `export { a }` and `export { a } from '…'` alike: an export of this file, to be imported from here.
      if (clause && ts.isNamedExports(clause))
        for (const e of clause.elements)
          exports.push({ file: rel, name: e.name.text, line: lineOf(e.getStart()), fixAt: null });
    } else if (
      (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) ||
      (ts.isNewExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'URL')
    ) {
      const arg = node.arguments?.[0];
      if (arg && ts.isStringLiteralLike(arg)) use(arg.text, 'all');
    } else if (
      ts.canHaveModifiers(node) &&
      ts.getModifiers(node)?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword)
    ) {
      const mod = ts.getModifiers(node)!.find((m) => m.kind === ts.SyntaxKind.ExportKeyword)!;
      const isDefault = ts.getModifiers(node)!.some((m) => m.kind === ts.SyntaxKind.DefaultKeyword);
      const names: string[] = [];
      if (ts.isVariableStatement(node)) {
        for (const d of node.declarationList.declarations) if (ts.isIdentifier(d.name)) names.push(d.name.text);
      } else if (
        (ts.isFunctionDeclaration(node) ||
          ts.isClassDeclaration(node) ||
          ts.isInterfaceDeclaration(node) ||
          ts.isTypeAliasDeclaration(node) ||
          ts.isEnumDeclaration(node)) &&
        node.name &&
        !isDefault
      )
        names.push(node.name.text);
      // One declaration of several names (`export const a = 1, b = 2`) is fixed only when all go.
      for (const name of names)
        exports.push({
          file: rel,
          name,
          line: lineOf(node.getStart()),
          fixAt: names.length === 1 ? mod.getStart() : null,
        });
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return { imports, exports };
}

function readBaseline(root: string): Edge[] {
  const file = path.join(root, BASELINE);
  if (!existsSync(file)) return [];
  const data = JSON.parse(readFileSync(file, 'utf8')) as { wrongWay?: [string, string][] };
  return (data.wrongWay ?? []).map(([from, to]) => ({ from, to }));
}

export function checkBoundaries(root: string): BoundaryReport {
  const users: string[] = [];
  for (const d of USERS) walk(root, d, users);
  for (const name of readdirSync(root).sort())
    if (/\.(ts|mts|js|mjs)$/.test(name) && statSync(path.join(root, name)).isFile()) users.push(name);
  const checked = new Set(users.filter((f) => CHECKED.some((d) => f.startsWith(`${d}/`))));
  const parsed = new Map(users.map((f) => [f, parse(root, f)] as const));

  const wrong = new Map<string, Edge>();
  const usedNames = new Map<string, Set<string>>();
  const usedAll = new Set<string>();
  for (const [from, p] of parsed) {
    for (const imp of p.imports) {
      if (imp.to !== from) {
        if (imp.names === 'all') usedAll.add(imp.to);
        else {
          if (!usedNames.has(imp.to)) usedNames.set(imp.to, new Set());
          for (const n of imp.names) usedNames.get(imp.to)!.add(n);
        }
      }
      if (checked.has(from) && !allowed(from, imp.to)) wrong.set(`${from} -> ${imp.to}`, { from, to: imp.to });
    }
  }
  const baseline = readBaseline(root);
  const baseKeys = new Set(baseline.map((e) => `${e.from} -> ${e.to}`));
  const all = [...wrong.values()];
  const unused: UnusedExport[] = [];
  for (const f of checked) {
    if (!f.endsWith('.ts') || usedAll.has(f)) continue;
    for (const e of parsed.get(f)!.exports) if (!usedNames.get(f)?.has(e.name)) unused.push(e);
  }
  return {
    wrongWay: all.filter((e) => !baseKeys.has(`${e.from} -> ${e.to}`)),
    known: all.filter((e) => baseKeys.has(`${e.from} -> ${e.to}`)),
    stale: baseline.filter((e) => !wrong.has(`${e.from} -> ${e.to}`)),
    unused: unused.sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line),
  };
}

/** Drops the `export` keyword of each fixable unused export; returns those it could not fix. */
export function fixExports(root: string, unused: readonly UnusedExport[]): UnusedExport[] {
  const byFile = new Map<string, UnusedExport[]>();
  for (const u of unused) if (u.fixAt !== null) byFile.set(u.file, [...(byFile.get(u.file) ?? []), u]);
  for (const [file, list] of byFile) {
    let text = readFileSync(path.join(root, file), 'utf8');
    for (const u of [...list].sort((a, b) => b.fixAt! - a.fixAt!))
      text = text.slice(0, u.fixAt!) + text.slice(u.fixAt!).replace(/^export\s+/, '');
    writeFileSync(path.join(root, file), text);
  }
  return unused.filter((u) => u.fixAt === null);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const args = process.argv.slice(2);
  const root = path.resolve(args.find((a) => !a.startsWith('--')) ?? '.');
  const report = checkBoundaries(root);
  if (args.includes('--write-baseline')) {
    const edges = [...report.known, ...report.wrongWay].sort(
      (a, b) => a.from.localeCompare(b.from) || a.to.localeCompare(b.to),
    );
    const note =
      'Wrong-way imports known when the boundary check was made strict (scripts/check-boundaries.ts). The list may only shrink.';
    mkdirSync(path.dirname(path.join(root, BASELINE)), { recursive: true });
    writeFileSync(
      path.join(root, BASELINE),
      JSON.stringify({ note, wrongWay: edges.map((e) => [e.from, e.to]) }, null, 2) + '\n',
    );
    process.stdout.write(`${BASELINE}: ${edges.length} known wrong-way imports\n`);
    process.exit(0);
  }
  if (args.includes('--fix-exports')) {
    const left = fixExports(root, report.unused);
    process.stdout.write(`export dropped from ${report.unused.length - left.length} declarations\n`);
    for (const u of left) process.stdout.write(`  not fixed (an export list): ${u.file}:${u.line} ${u.name}\n`);
    process.exit(left.length > 0 ? 1 : 0);
  }
  const lines: string[] = [];
  for (const e of report.wrongWay)
    lines.push(`wrong-way import: ${e.from} imports ${e.to} (${layerOf(e.from)} may not import ${layerOf(e.to)})`);
  for (const e of report.stale)
    lines.push(`${BASELINE} lists ${e.from} -> ${e.to}, which no longer occurs: remove it from the list`);
  for (const u of report.unused)
    lines.push(`unused export: ${u.file}:${u.line} ${u.name} (no other file imports it: drop the export, or the code)`);
  if (lines.length > 0) {
    process.stderr.write(`${lines.join('\n')}\n${lines.length} boundary problem${lines.length === 1 ? '' : 's'}\n`);
    process.exit(1);
  }
  process.stdout.write(
    `boundaries: no wrong-way import (${report.known.length} known ones listed in ${BASELINE}), no unused export\n`,
  );
}
