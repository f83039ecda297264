/**
 * What is excluded from a stored run's metrics: its own exclusions and those of every training
 * run it is a step of (the dashboard, the exports and the run's report honour the same list).
 */
import { mergeExclusions, type Exclusion } from '../core/eval/exclusions.ts';

interface RunExclusionPorts {
  /** The exclusions kept with a run or a training run (by its id); absent where the store keeps none. */
  exclusions?(ownerId: string): Promise<Exclusion[]>;
  /** The training runs the run is a step of. */
  seriesOf(runId: string): Promise<ReadonlyArray<{ id: string }>>;
}

export async function runExclusions(ports: RunExclusionPorts, runId: string): Promise<Exclusion[]> {
  const get = ports.exclusions;
  if (!get) return [];
  const series = await ports.seriesOf(runId).catch(() => []);
  return mergeExclusions(await get(runId), ...(await Promise.all(series.map((s) => get(s.id)))));
}
