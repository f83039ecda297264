/**
 * The reward-hacking probe in the browser: the core's runProbe over a sql.js worker pool on a
 * stored dataset's databases (IndexedDB), as the CLI runs it over a folder.
 */
import type { DbSource } from './ports.ts';
import type { DatasetRecord } from './store-ports.ts';
import type { SqlExecutor } from '../core/eval/executor.ts';
import type { ProbeQuestion } from '../core/probe/exploits.ts';
import { runProbe, type ProbeOptions, type ProbeReport } from '../core/probe/run-probe.ts';

export interface ProbeService {
  run(dataset: DatasetRecord, options: ProbeOptions): Promise<ProbeReport>;
}

/** The dataset's questions whose database is stored, as the probe needs them. */
export function probeQuestionsOf(dataset: DatasetRecord): ProbeQuestion[] {
  return dataset.gold.flatMap((g, index) => {
    if (!dataset.databases[g.dbId]) return [];
    const q = dataset.questions[index];
    return [
      {
        index,
        questionId: q?.questionId ?? index,
        dbId: g.dbId,
        difficulty: q?.difficulty ?? 'unknown',
        goldSql: g.sql,
        question: q?.question ?? null,
      },
    ];
  });
}

interface ProbePorts {
  /** The dataset's stored databases. */
  dbSource: (dataset: DatasetRecord) => DbSource;
  /** A SQL pool over them (one worker per core). */
  createExecutor: (source: DbSource) => SqlExecutor;
}

export function createProbeService(ports: ProbePorts): ProbeService {
  return {
    async run(dataset, options) {
      const pool = ports.createExecutor(ports.dbSource(dataset));
      try {
        return await runProbe(probeQuestionsOf(dataset), pool, options);
      } finally {
        await pool.dispose();
      }
    },
  };
}
