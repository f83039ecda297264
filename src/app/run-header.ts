/** A new run's header, for every service that creates runs (replays, self-tests, generation runs, series steps). */
import type { RunHeader } from '../core/run/types.ts';
import type { DatasetRecord } from './records.ts';

export function newRunHeader(
  req: Pick<RunHeader, 'name' | 'source' | 'subset' | 'config' | 'samplesPerQuestion' | 'executor'>,
  dataset: DatasetRecord,
): RunHeader {
  const now = new Date().toISOString();
  return {
    id: crypto.randomUUID(),
    createdAt: now,
    updatedAt: now,
    status: 'running',
    ...req,
    dataset: {
      id: dataset.id,
      name: dataset.name,
      questions: dataset.questionsFile,
      gold: dataset.goldFile,
      databases: { ...dataset.databases },
    },
  };
}
