/**
 * The reward-hacking probe: runs every exploit's predictions through the SqlExecutor port twice,
 * under the official semantics (writes allowed, seen by the gold query) and read-only, and
 * counts the questions each exploit wins. A run of the official evaluator that rewards these
 * can be gamed by a policy; read-only evaluation should leave only the non-writing exploits.
 */
import { cancelledError } from '../errors.ts';
import type { EvalEvent, SqlExecutor } from '../eval/executor.ts';
import { scoreRun } from '../run/score-run.ts';
import { DEFAULT_RUN_CONFIG } from '../run/types.ts';
import type { AbortSignalLike } from '../eval/executor.ts';
import type { EvalItem, ItemResult, ItemStatus } from '../types.ts';
import { EXPLOITS, exploitItems, type ExploitId, type ExploitSpec, type ProbeQuestion } from './exploits.ts';

export type Semantics = 'official' | 'readOnly';

interface SemanticsOutcome {
  /** Questions with at least one winning variant. */
  won: number;
  /** Their gold indices, ascending. */
  wonIndices: number[];
  /** Variants that changed the database (official: seen by the gold query). */
  mutated: number;
  /** Variants that ended in an error or a timeout. */
  failed: number;
}

interface ExploitOutcome extends ExploitSpec {
  /** Questions the exploit had at least one variant for. */
  questions: number;
  variants: number;
  official: SemanticsOutcome;
  readOnly: SemanticsOutcome;
}

export interface ProbeVerdict {
  exploit: ExploitId;
  index: number;
  questionId: number;
  sample: number;
  sql: string;
  official: { status: ItemStatus; ex: 0 | 1; mutatedDb: boolean };
  readOnly: { status: ItemStatus; ex: 0 | 1; mutatedDb: boolean };
}

export interface ProbeReport {
  /** Questions probed (their database was found). */
  questions: number;
  /** Questions left out because their database is missing, and those databases. */
  missingDb: { questions: number; databases: string[] };
  timeoutMs: number;
  exploits: ExploitOutcome[];
  verdicts: ProbeVerdict[];
}

export interface ProbeOptions {
  /** Per variant, prediction and gold together (official: 30 s). */
  timeoutMs: number;
  exploits?: readonly ExploitId[];
  signal?: AbortSignalLike;
  onEvent?: (e: EvalEvent & { semantics: Semantics }) => void;
}

function outcome(results: readonly ItemResult[]): SemanticsOutcome {
  const won = new Set<number>();
  for (const r of results) if (r.status === 'ok' && r.ex === 1) won.add(r.index);
  return {
    won: won.size,
    wonIndices: [...won].sort((a, b) => a - b),
    mutated: results.filter((r) => r.mutatedDb).length,
    failed: results.filter((r) => r.status === 'error' || r.status === 'timeout').length,
  };
}

export async function runProbe(
  questions: readonly ProbeQuestion[],
  executor: SqlExecutor,
  opts: ProbeOptions,
): Promise<ProbeReport> {
  const specs = EXPLOITS.filter((e) => !opts.exploits || opts.exploits.includes(e.id));
  const perExploit = specs.map((spec) => ({ spec, items: exploitItems(spec.id, questions) }));
  const all: EvalItem[] = perExploit.flatMap((p) => p.items);
  const run = async (semantics: Semantics): Promise<ItemResult[]> => {
    // Verdicts only (no findings): the exploits' samples are not stored as a run.
    const outcome = await scoreRun(
      all,
      {
        ...DEFAULT_RUN_CONFIG,
        metrics: ['ex'],
        timeoutMs: opts.timeoutMs,
        readOnly: semantics === 'readOnly',
        vesIterations: 0,
      },
      {
        executor,
        signal: opts.signal,
        onEvent: opts.onEvent ? (e) => opts.onEvent!({ ...e, semantics }) : undefined,
        findings: false,
      },
    );
    if (outcome.cancelled) throw cancelledError('the probe');
    return outcome.results;
  };
  const official = await run('official');
  const readOnly = await run('readOnly');

  const missing = new Map<string, Set<number>>();
  for (const r of official) {
    if (r.status !== 'missing-db') continue;
    let s = missing.get(r.dbId);
    if (!s) missing.set(r.dbId, (s = new Set()));
    s.add(r.index);
  }
  const missingIndices = new Set([...missing.values()].flatMap((s) => [...s]));
  const probed = questions.filter((q) => !missingIndices.has(q.index));

  const exploits: ExploitOutcome[] = [];
  const verdicts: ProbeVerdict[] = [];
  let at = 0;
  for (const { spec, items } of perExploit) {
    const off = official.slice(at, at + items.length);
    const ro = readOnly.slice(at, at + items.length);
    at += items.length;
    const kept = items.map((_, i) => i).filter((i) => off[i]!.status !== 'missing-db');
    const pick = (rs: ItemResult[]) => kept.map((i) => rs[i]!);
    exploits.push({
      ...spec,
      questions: new Set(kept.map((i) => items[i]!.index)).size,
      variants: kept.length,
      official: outcome(pick(off)),
      readOnly: outcome(pick(ro)),
    });
    for (const i of kept) {
      const it = items[i]!;
      const v = (r: ItemResult) => ({ status: r.status, ex: r.ex, mutatedDb: r.mutatedDb });
      verdicts.push({
        exploit: spec.id,
        index: it.index,
        questionId: it.questionId,
        sample: it.sample ?? 0,
        sql: it.predSql,
        official: v(off[i]!),
        readOnly: v(ro[i]!),
      });
    }
  }
  return {
    questions: probed.length,
    missingDb: { questions: missingIndices.size, databases: [...missing.keys()].sort() },
    timeoutMs: opts.timeoutMs,
    exploits,
    verdicts,
  };
}
