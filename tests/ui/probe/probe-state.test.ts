import { describe, expect, it } from 'vitest';
import type { DatasetRecord } from '../../../src/app/store-ports.ts';
import { createNodeSqlPool } from '../../../src/adapters/node/sql-worker-host.ts';
import { runProbe } from '../../../src/core/probe/run-probe.ts';
import { probeQuestionsOf, type ProbeService } from '../../../src/app/probe-service.ts';
import { ProbeState, type KeyValueStore } from '../../../src/ui/probe/probe-state.svelte.ts';
import { sharedData } from '../../helpers/shared-data.ts';

/** Three real Spider questions on concert_singer, probed by the core over a real sql.js pool. */
const dataset = {
  id: 'spider-cs',
  name: 'Spider concert_singer',
  gold: [
    { sql: 'SELECT count(*) FROM singer', dbId: 'concert_singer' },
    { sql: 'SELECT name, country, age FROM singer ORDER BY age DESC', dbId: 'concert_singer' },
    { sql: "SELECT avg(age), min(age), max(age) FROM singer WHERE country = 'France'", dbId: 'concert_singer' },
  ],
  questions: [0, 1, 2].map((i) => ({
    questionId: i,
    dbId: 'concert_singer',
    question: `q${i}`,
    evidence: '',
    goldSql: '',
    difficulty: 'simple',
  })),
  databases: { concert_singer: 'sha' },
} as unknown as DatasetRecord;

const service: ProbeService = {
  async run(d, options) {
    const pool = createNodeSqlPool({ dbRoot: sharedData('spider'), workers: 1 });
    try {
      return await runProbe(probeQuestionsOf(d), pool, options);
    } finally {
      await pool.dispose();
    }
  },
};

function memoryStore(): KeyValueStore & { map: Map<string, string> } {
  const map = new Map<string, string>();
  return { map, getItem: (k) => map.get(k) ?? null, setItem: (k, v) => void map.set(k, v) };
}

describe('the probe screen state', () => {
  it('counts progress over both passes without going back, and keeps the report for a later visit', async () => {
    const saved = memoryStore();
    const seen: Array<[number, number, number]> = [];
    // The screen's numbers read right after each event the state receives.
    const watching: ProbeService = {
      run: (d, options) =>
        service.run(d, {
          ...options,
          onEvent: (e) => {
            options.onEvent?.(e);
            if (e.type === 'item') seen.push([probe.passNumber, probe.doneInAll, probe.totalInAll]);
          },
        }),
    };
    const probe = new ProbeState(watching, saved);
    await probe.run(dataset, 30);
    expect(probe.state.error).toBeNull();
    const report = probe.reportOf(dataset.id)!.report;
    expect(report.questions).toBe(3);
    expect(seen.some(([pass]) => pass === 1) && seen.some(([pass]) => pass === 2)).toBe(true);
    expect(seen.at(-1)![1]).toBe(seen.at(-1)![2]);
    // Never backwards, and the total covers both passes.
    for (let i = 1; i < seen.length; i++) expect(seen[i]![1]).toBeGreaterThanOrEqual(seen[i - 1]![1]);
    expect(new Set(seen.map((s) => s[2])).size).toBe(1);
    expect(seen.every(([pass, done, total]) => pass >= 1 && pass <= 2 && done <= total)).toBe(true);

    // A new page (a reload) reads the kept report, without the per-question verdicts.
    const later = new ProbeState(service, saved);
    const kept = later.reportOf(dataset.id)!;
    expect(kept.datasetName).toBe('Spider concert_singer');
    expect(kept.report.exploits).toEqual(report.exploits);
    expect(kept.report.verdicts).toBeUndefined();
    expect(later.reportOf('another')).toBeNull();
  }, 120_000);

  it('a kept report that is not JSON reads as none (nothing thrown)', () => {
    const saved = memoryStore();
    saved.map.set('rlvr-workbench:probe:spider-cs', '{broken');
    expect(new ProbeState(service, saved).reportOf('spider-cs')).toBeNull();
  });
});
