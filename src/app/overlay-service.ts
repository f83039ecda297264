/**
 * The corrected-gold overlay on a stored run: the run's own samples are the official verdicts
 * and the items (SQL, gold, identity); the items whose gold the overlay changes are executed
 * again in the SQL workers against the run's databases. Nothing is stored: attaching the
 * overlay again recomputes it (a few items, not the run).
 */
import { parseGoldOverlay } from '../core/formats/gold-overlay.ts';
import { compareWithOverlay, type OverlayComparison } from '../core/run/gold-overlay-run.ts';
import type { EvalItem } from '../core/types.ts';
import type { AppPorts } from './ports.ts';

export async function compareRunWithOverlay(
  ports: AppPorts,
  runId: string,
  file: { name: string; text: string },
  signal?: AbortSignal,
): Promise<OverlayComparison> {
  const run = await ports.runs.get(runId);
  const overlay = parseGoldOverlay(file.text, file.name);
  const samples = await ports.runs.samples(runId);
  const items: EvalItem[] = samples.map((s) => ({
    index: s.index,
    questionId: s.questionId,
    dbId: s.dbId,
    difficulty: s.difficulty,
    predSql: s.sql,
    goldSql: s.goldSql,
    extraction: s.extraction,
    sample: s.sample,
  }));
  const executor = ports.executors.createExecutor(ports.datasets.source(run.dataset.databases, run.dataset.name));
  try {
    // The run's samples carry their findings; the corrected verdicts are compared on EX only.
    return await compareWithOverlay(items, samples, overlay, run.config, { executor, signal, findings: false });
  } finally {
    await executor.dispose().catch(() => undefined);
  }
}
