/**
 * `npm run check:cycles` (part of `npm run check`): the folder-level import graph of each layer
 * (docs/architecture.md) must have no cycle: src/core, src/app, src/adapters, src/ui, src/cli,
 * src/report, workers/, and src/ itself (the layers as its nodes). Every relative import counts,
 * type-only ones too (a type import still ties the folders' meanings together). A file directly
 * under a root (errors.ts, types.ts, main.ts) is a node of its own; an import that leaves the root
 * is not an edge of its graph. Exits 1 naming each cycle and the files that make its edges.
 *
 * A cycle already known is listed in KNOWN_CYCLES (the one list of them): printed as a "known
 * cycle", it does not fail the check while its folders stay the same; a cycle that grows, or an
 * entry that no longer occurs, fails.
 *
 *   npx tsx scripts/check-core-cycles.ts [ROOT ...]      (default: every root of CYCLE_ROOTS)
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

/** The roots checked by default: each layer, and src/ with the layers as its nodes. */
export const CYCLE_ROOTS = [
  'src/core',
  'src/app',
  'src/adapters',
  'src/ui',
  'src/cli',
  'src/report',
  'workers',
  'src',
] as const;

/**
 * The known cycles, by root (repository-relative) and the folders on the cycle together. The list
 * may only shrink.
 */
export const KNOWN_CYCLES: Readonly<Record<string, readonly (readonly string[])[]>> = {};

/** Folder -> folders it imports, with one file pair per edge as the evidence. */
export type FolderGraph = Map<string, Map<string, { from: string; to: string }>>;

const SOURCE = /\.(ts|svelte)$/;
// `import … from '…'`, `export … from '…'`, `import '…'`, `import('…')`.
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(?\s*)(['"])(\.{1,2}\/[^'"]+)\1/g;

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) out.push(...sourceFiles(full));
    else if (SOURCE.test(name)) out.push(full);
  }
  return out;
}

/** The node of a file: its first folder under `root`, or the file itself when it lies directly in `root`. */
function nodeOf(root: string, file: string): string | null {
  const rel = path.relative(root, file);
  if (rel.startsWith('..') || path.isAbsolute(rel)) return null;
  return rel.split(path.sep)[0]!;
}

export function folderGraph(root: string): FolderGraph {
  const graph: FolderGraph = new Map();
  for (const file of sourceFiles(root)) {
    const from = nodeOf(root, file)!;
    if (!graph.has(from)) graph.set(from, new Map());
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(SPECIFIER)) {
      const target = path.resolve(path.dirname(file), m[2]!);
      const to = nodeOf(root, target);
      if (to === null || to === from) continue;
      const edges = graph.get(from)!;
      if (!edges.has(to)) edges.set(to, { from: path.relative(root, file), to: path.relative(root, target) });
    }
  }
  return graph;
}

/** Strongly connected components with more than one node (Tarjan), sorted. */
export function cycleComponents(graph: FolderGraph): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const nodes = [...new Set([...graph.keys(), ...[...graph.values()].flatMap((e) => [...e.keys()])])].sort();
  const visit = (v: string) => {
    index.set(v, counter);
    low.set(v, counter++);
    stack.push(v);
    onStack.add(v);
    for (const w of [...(graph.get(v)?.keys() ?? [])].sort()) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const comp: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        comp.push(w);
      } while (w !== v);
      if (comp.length > 1) components.push(comp.sort());
    }
  };
  for (const v of nodes) if (!index.has(v)) visit(v);
  return components;
}

/** One concrete cycle per component (the shortest way back to its first node), e.g. `['a', 'b', 'a']`. */
export function findCycles(graph: FolderGraph): string[][] {
  return cycleComponents(graph).map((comp) => {
    const inComp = new Set(comp);
    const start = comp[0]!;
    const prev = new Map<string, string>();
    const queue = [start];
    const seen = new Set([start]);
    while (queue.length > 0) {
      const v = queue.shift()!;
      for (const w of [...(graph.get(v)?.keys() ?? [])].sort()) {
        if (!inComp.has(w)) continue;
        if (w === start) {
          const cycle = [v];
          while (cycle[0] !== start) cycle.unshift(prev.get(cycle[0]!)!);
          return [...cycle, start];
        }
        if (!seen.has(w)) {
          seen.add(w);
          prev.set(w, v);
          queue.push(w);
        }
      }
    }
    return [...comp, start];
  });
}

/** The report of a cycle: `a -> b -> a`, then the file pair of every edge. */
export function cycleText(graph: FolderGraph, cycle: readonly string[]): string {
  const lines = [cycle.join(' -> ')];
  for (let i = 0; i + 1 < cycle.length; i++) {
    const e = graph.get(cycle[i]!)!.get(cycle[i + 1]!)!;
    lines.push(`  ${e.from} imports ${e.to}`);
  }
  return lines.join('\n');
}

export function checkCycles(
  root: string,
  known: readonly (readonly string[])[] = [],
): { cycles: string[][]; report: string; known: string[][]; stale: string[][] } {
  const graph = folderGraph(root);
  const all = findCycles(graph);
  const components = cycleComponents(graph);
  const same = (a: readonly string[], b: readonly string[]) =>
    a.length === b.length && [...a].sort().every((x, i) => x === [...b].sort()[i]);
  const isKnown = components.map((c) => known.some((k) => same(k, c)));
  const cycles = all.filter((_, i) => !isKnown[i]);
  const report = all
    .map((c, i) =>
      isKnown[i] ? null : `${cycleText(graph, c)}\n  (folders on a cycle together: ${components[i]!.join(', ')})`,
    )
    .filter((x) => x !== null)
    .join('\n');
  return {
    cycles,
    report,
    known: components.filter((_, i) => isKnown[i]),
    stale: known.filter((k) => !components.some((c) => same(k, c))).map((k) => [...k]),
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const args = process.argv.slice(2);
  let failed = false;
  for (const arg of args.length > 0 ? args : CYCLE_ROOTS) {
    const root = path.resolve(arg);
    const name = path.relative(process.cwd(), root) || root;
    if (!existsSync(root) || !statSync(root).isDirectory()) {
      process.stderr.write(`${name}: no such folder (give a folder of the repository, e.g. src/core)\n`);
      failed = true;
      continue;
    }
    const rel = path.relative(process.cwd(), root).split(path.sep).join('/');
    const { cycles, report, known, stale } = checkCycles(root, KNOWN_CYCLES[rel] ?? []);
    for (const k of known)
      process.stdout.write(`${name}: known cycle (KNOWN_CYCLES in scripts/check-core-cycles.ts): ${k.join(', ')}\n`);
    for (const k of stale) {
      process.stderr.write(
        `${name}: the known cycle ${k.join(', ')} no longer occurs as listed: remove or update its entry in KNOWN_CYCLES (scripts/check-core-cycles.ts)\n`,
      );
      failed = true;
    }
    if (cycles.length > 0) {
      process.stderr.write(
        `${name}: ${cycles.length} folder-level import cycle${cycles.length === 1 ? '' : 's'} (docs/architecture.md gives the layers):\n${report}\n`,
      );
      failed = true;
    } else if (known.length === 0 && stale.length === 0)
      process.stdout.write(`${name}: no folder-level import cycle\n`);
  }
  if (failed) process.exit(1);
}
