/**
 * `npm run check:cycles`: the folder-level import graph of src/core (docs/architecture.md)
 * must have no cycle. Every relative import counts, type-only ones too (a type import still
 * ties the folders' meanings together). A file directly under the root (errors.ts, types.ts)
 * is a node of its own. Exits 1 naming each cycle and the files that make its edges.
 *
 *   npx tsx scripts/check-core-cycles.ts [ROOT]      (default src/core)
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

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

export function checkCycles(root: string): { cycles: string[][]; report: string } {
  const graph = folderGraph(root);
  const cycles = findCycles(graph);
  const components = cycleComponents(graph);
  const report = cycles
    .map((c, i) => `${cycleText(graph, c)}\n  (folders on a cycle together: ${components[i]!.join(', ')})`)
    .join('\n');
  return { cycles, report };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const root = path.resolve(process.argv[2] ?? 'src/core');
  const { cycles, report } = checkCycles(root);
  if (cycles.length > 0) {
    process.stderr.write(
      `${path.relative(process.cwd(), root) || root}: ${cycles.length} folder-level import cycle${cycles.length === 1 ? '' : 's'} (docs/architecture.md gives the layers):\n${report}\n`,
    );
    process.exit(1);
  }
  process.stdout.write(`${path.relative(process.cwd(), root) || root}: no folder-level import cycle\n`);
}
