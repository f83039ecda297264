import { describe, expect, it } from 'vitest';
import { DEFAULT_RUN_CONFIG, type RunHeader, type SampleRecord } from '../../../src/core/run/types.ts';
import { FIRST_PAGE, RunView, type RunViewStore } from '../../../src/ui/context/run-view.svelte.ts';
import type { PreviewService } from '../../../src/app/preview-service.ts';
import { runHeader, sampleRecord, unstoredDataset } from '../../helpers/run-records.ts';

const N = 10_000;

function sample(index: number): SampleRecord {
  const status = index % 17 === 0 ? 'error' : 'ok';
  return sampleRecord({
    index,
    sample: 0,
    dbId: `db_${index % 7}`,
    ex: status === 'ok' && index % 3 !== 1 ? 1 : 0,
    softF1: 0,
    reward: 0,
    status,
    error: status === 'error' ? 'no such column' : null,
    extraction: { rule: 'bird-separator', thinkStripped: false },
    sql: `SELECT ${index}`,
  });
}

function header(status: RunHeader['status']): RunHeader {
  return runHeader({
    id: 'r1',
    name: 'ten thousand',
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '2026-01-01T00:00:00.000Z',
    status,
    source: { kind: 'replay', predictions: { name: 'p.json', sha256: 'ab', bytes: 3 } },
    dataset: unstoredDataset({ name: 'not stored' }),
    config: DEFAULT_RUN_CONFIG,
    executor: 'test',
  });
}

/** A store of one run whose whole-run read waits until `release()`; it logs every read. */
function heldStore(status: RunHeader['status']) {
  const all = Array.from({ length: N }, (_, i) => sample(i));
  const reads: string[] = [];
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  const store: RunViewStore = {
    runs: {
      get: async () => header(status),
      sampleCount: async () => {
        reads.push('count');
        return N;
      },
      samples: async (_id: string, page?: { offset: number; limit: number }) => {
        if (page) {
          reads.push(`page ${page.offset}+${page.limit}`);
          return all.slice(page.offset, page.offset + page.limit);
        }
        reads.push('all');
        await held;
        return all;
      },
    },
    datasets: { get: async () => undefined },
  };
  return { store, reads, release, all };
}

const previews: PreviewService = {
  preview: () => Promise.reject(new Error('not here')),
  release: async () => undefined,
};

const until = async (cond: () => boolean): Promise<void> => {
  for (let i = 0; i < 500 && !cond(); i++) await new Promise((r) => setTimeout(r, 5));
  expect(cond()).toBe(true);
};

describe('the run view of a large stored run', () => {
  it('lists the first page with the run count before the whole run is read, then everything', async () => {
    const { store, reads, release, all } = heldStore('done');
    const view = new RunView('r1', store, previews);
    const loaded = view.load();
    await until(() => !view.state.loading);

    // First page shown; the whole-run read is asked for after it (and held by the store).
    expect(reads.slice(0, 2).sort()).toEqual(['count', `page 0+${FIRST_PAGE}`]);
    expect(view.state.complete).toBe(false);
    expect(view.run?.name).toBe('ten thousand');
    expect(view.visible.map((r) => r.sample.index)).toEqual(all.slice(0, FIRST_PAGE).map((s) => s.index));
    expect(view.total).toBe(N);
    expect(view.shown).toBe(N);
    expect(view.summary).toBeNull();
    expect(view.samples).toEqual([]);
    expect(view.row({ index: 3, sample: 0 })?.sample.index).toBe(3);
    expect(view.row({ index: 9_000, sample: 0 })).toBeNull();

    // j/k inside the first page work on it as on the whole list.
    expect(view.moveCursor(1)).toBe(0);
    expect(view.moveCursor(2)).toBe(2);

    // A filter the first page cannot answer waits: nothing listed, count unknown.
    view.setQuery({ outcome: 'error' });
    expect(view.visible).toEqual([]);
    expect(view.shown).toBeNull();
    await until(() => reads.includes('all'));
    expect(view.state.complete).toBe(false);

    release();
    await view.whenComplete();
    await loaded;
    expect(view.state.complete).toBe(true);
    expect(view.total).toBe(N);
    expect(view.shown).toBe(all.filter((s) => s.status === 'error').length);
    expect(view.visible.every((r) => r.sample.status === 'error')).toBe(true);
    expect(view.summary).not.toBeNull();
    expect(view.row({ index: 9_000, sample: 0 })?.sample.index).toBe(9_000);
    view.resetQuery();
    expect(view.shown).toBe(N);
    // The cursor kept its item across the switch to the whole list.
    expect(view.cursorPosition).toBe(2);
    expect(view.moveCursor(Infinity)).toBe(N - 1);
  });

  it('reads a running run whole (its blocks are unsorted, a page would read them all anyway)', async () => {
    const { store, reads, release } = heldStore('running');
    const view = new RunView('r1', store, previews);
    const loaded = view.load();
    await until(() => reads.length > 0);
    expect(view.state.loading).toBe(true);
    release();
    await loaded;
    expect(reads).toEqual(['all']);
    expect(view.state.complete).toBe(true);
    expect(view.visible).toHaveLength(N);
  });

  it('keeps the rows shown while a reload reads the run again', async () => {
    const { store, reads, release } = heldStore('done');
    release();
    const view = new RunView('r1', store, previews);
    await view.load();
    expect(view.state.complete).toBe(true);
    await view.load();
    expect(reads.filter((r) => r === 'all')).toHaveLength(2);
    expect(reads.filter((r) => r.startsWith('page'))).toHaveLength(1);
    expect(view.visible).toHaveLength(N);
  });

  it('builds the rows of a 120,000-sample run over several tasks, and finds every sample by key without a key map', async () => {
    const PER = 4;
    const all: SampleRecord[] = [];
    for (let q = 0; q < 30_000; q++)
      for (let k = 0; k < PER; k++) all.push({ ...sample(q), sample: k, dbId: `db_${q % 11}` });
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const store: RunViewStore = {
      runs: {
        get: async () => ({ ...header('done'), samplesPerQuestion: PER }),
        sampleCount: async () => all.length,
        samples: async (_id: string, page?: { offset: number; limit: number }) => {
          if (page) return all.slice(page.offset, page.offset + page.limit);
          await held;
          return all;
        },
      },
      datasets: { get: async () => undefined },
    };
    const view = new RunView('r1', store, previews);
    const loaded = view.load();
    await until(() => !view.state.loading);
    // A timer set when the whole run arrives fires before the rows are done: they are built in steps.
    let timerRanWhileBuilding = false;
    release();
    await held;
    setTimeout(() => (timerRanWhileBuilding = !view.state.complete), 0);
    await loaded;
    expect(timerRanWhileBuilding).toBe(true);
    expect(view.state.complete).toBe(true);
    expect(view.visible).toHaveLength(all.length);
    expect(view.visible.every((r, i) => r.sample === all[i])).toBe(true);
    expect(view.dbIds).toEqual(Array.from({ length: 11 }, (_, i) => `db_${i}`).sort());
    for (const at of [0, 1, 3, 4, 59_999, 60_002, all.length - 1]) expect(view.row(all[at]!)?.sample).toBe(all[at]);
    expect(view.row({ index: 5, sample: PER })).toBeNull();
    expect(view.row({ index: 30_000, sample: 0 })).toBeNull();
    view.setCursor('20001.3');
    expect(view.cursorPosition).toBe(20_001 * PER + 3);
    // Question 20,001 is on db_3 (20,001 mod 11): the cursor keeps its sample in the filtered list.
    view.setQuery({ dbId: 'db_3' });
    expect(view.visible.every((r) => r.sample.dbId === 'db_3')).toBe(true);
    const at = view.cursorPosition;
    expect(at).toBeGreaterThan(0);
    expect(view.visible[at]!.sample).toBe(all[20_001 * PER + 3]);
  });
});

describe('the run view of a step of a training run', () => {
  it("gives each row the trainer's score and reward columns of its sample (in the stored order), once the whole run is read", async () => {
    const { store, release, all } = heldStore('done');
    const scores = all.map((_, i) => (i % 4 === 0 ? null : i / N));
    const rewards = all.map((_, i) =>
      i % 9 === 0 ? null : { correctness: i % 2, format: 0.5, advantage: i / N - 0.5 },
    );
    const view = new RunView('r1', { ...store, trainerScores: async () => ({ step: 100, scores, rewards }) }, previews);
    const loaded = view.load();
    await until(() => !view.state.loading);
    expect(view.trainerStep).toBe(100);
    // The first page alone is not the stored whole the columns are parallel to: like the scores, none yet.
    expect(view.visible.some((r) => 'trainerRewards' in r || 'trainerScore' in r)).toBe(false);
    release();
    await view.whenComplete();
    await loaded;
    for (const i of [0, 9, 4_321, N - 1]) {
      const row = view.row({ index: i, sample: 0 })!;
      expect([row.trainerScore, row.trainerRewards]).toEqual([scores[i], rewards[i]]);
    }
  });

  it('a step whose dump has no reward columns (or not one per sample) gives rows without them', async () => {
    for (const rewards of [undefined, [{ correctness: 1 }]]) {
      const { store, release, all } = heldStore('done');
      const scores = all.map(() => 1);
      const view = new RunView(
        'r1',
        { ...store, trainerScores: async () => ({ step: 100, scores, ...(rewards ? { rewards } : {}) }) },
        previews,
      );
      release();
      await view.load();
      await view.whenComplete();
      const row = view.row({ index: 5, sample: 0 })!;
      expect(row.trainerScore).toBe(1);
      expect('trainerRewards' in row).toBe(false);
    }
  });
});
