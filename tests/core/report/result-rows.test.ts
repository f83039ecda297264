/**
 * Result rows of a report's wrong samples (src/core/report/result-rows.ts): which samples are
 * asked for, the budget (rows per side, samples, bytes) and what is said of what was left out,
 * and SQLite values JSON cannot hold given back as they were.
 */
import { describe, expect, it } from 'vitest';
import type { ItemPreview } from '../../../src/core/eval/executor.ts';
import type { RunFile, SampleRecord } from '../../../src/core/run/types.ts';
import {
  collectResultRows,
  decodeCell,
  encodeCell,
  isWrongSample,
  previewOf,
  resultRowsText,
} from '../../../src/core/report/result-rows.ts';
import { syntheticRunFile, syntheticSamples } from '../../robustness/synthetic-run.ts';

const file = syntheticRunFile(syntheticSamples({ questions: 30, samples: 2, seed: 5 }), 'rows');
const wrong = file.samples.filter(isWrongSample);

/** A re-execution double: 30 rows of each side naming the sample, none for sample 1 of question 0. */
const asked: SampleRecord[] = [];
/** The sizes of the batches asked for. */
const batches: number[] = [];
async function preview(_f: RunFile, samples: readonly SampleRecord[], rows: number): Promise<(ItemPreview | null)[]> {
  batches.push(samples.length);
  return samples.map((s) => {
    asked.push(s);
    if (s.index === 0 && s.sample === 1) return null;
    const side = (tag: string) => Array.from({ length: 30 }, (_, i) => [`${tag}${s.index}.${s.sample}`, i]);
    expect(rows).toBe(3);
    return { predColumns: ['p', 'n'], goldColumns: ['g', 'n'], predRows: side('p'), goldRows: side('g') };
  });
}

describe('result rows of the wrong samples', () => {
  it('asks for the wrong samples only, keeps the first rows of each side, within the samples budget', async () => {
    expect(wrong.length).toBeGreaterThan(6);
    expect(file.samples.some((s) => s.ex === 1)).toBe(true);
    asked.length = 0;
    batches.length = 0;
    const out = await collectResultRows([file], preview, { rowsPerSide: 3, maxItems: 4, maxBytes: 1 << 20 });
    // Asked in batches no larger than the samples the budget can still keep (and one more).
    expect(batches.length).toBeGreaterThan(0);
    expect(Math.max(...batches)).toBeLessThanOrEqual(5);
    // Every wrong sample that ran asked for until the budget is full; the right ones never, nor
    // an error or a timeout of the run (counted as giving no rows, not run again).
    expect(asked.every((s) => s.ex !== 1 && s.status === 'ok')).toBe(true);
    expect(out.items).toHaveLength(4);
    expect(out.wrong).toBe(wrong.length);
    // In order: a failed sample (or one without rows) counts as no rows until a fifth one with rows fills the budget.
    let kept = 0;
    let noRows = 0;
    let isFull = false;
    for (const s of wrong) {
      if (isFull) continue;
      if (s.status !== 'ok' || (s.index === 0 && s.sample === 1)) noRows++;
      else if (kept === 4) isFull = true;
      else kept++;
    }
    expect(out.noRows).toBe(noRows);
    expect(out.leftOut).toBe(wrong.length - 4 - noRows);
    const first = out.items[0]!;
    expect(first.predRows).toHaveLength(3);
    expect(first.goldRows.map((r) => r[1])).toEqual([0, 1, 2]);
    expect(out.bytes).toBe(out.items.reduce((n, it) => n + JSON.stringify(it).length, 0));
    expect(resultRowsText(out)).toBe(
      `first 3 rows of each side for 4 wrong samples of ${wrong.length}, ${out.bytes} bytes (budget: 4 samples, 1.0 MiB)` +
        (noRows ? `; ${noRows} gave no rows (an error or a timeout)` : '') +
        `; ${out.leftOut} left out: the budget was reached`,
    );
  });

  it('runs no error or timeout of the run again: each is counted as giving no rows', async () => {
    const failed = wrong.filter((s) => s.status !== 'ok');
    expect(failed.length).toBeGreaterThan(0);
    const timedOut: RunFile = {
      ...file,
      samples: file.samples.map((s, i) => (i === 0 ? { ...s, ex: 0, status: 'timeout' } : s)),
    };
    asked.length = 0;
    const out = await collectResultRows([timedOut], preview, { rowsPerSide: 3, maxItems: 1000, maxBytes: 1 << 20 });
    expect(asked.some((s) => s.status !== 'ok')).toBe(false);
    const wrongHere = timedOut.samples.filter(isWrongSample);
    expect(asked).toHaveLength(wrongHere.filter((s) => s.status === 'ok').length);
    expect(out.noRows).toBe(wrongHere.filter((s) => s.status !== 'ok' || (s.index === 0 && s.sample === 1)).length);
  });

  it('runs no sample again that took longer than maxRunMs in the run: each is counted as slow and said', async () => {
    const okWrong = wrong.filter((s) => s.status === 'ok');
    expect(okWrong.length).toBeGreaterThan(2);
    const slowKeys = new Set([okWrong[0]!, okWrong[2]!].map((s) => `${s.index}:${s.sample}`));
    const timed: RunFile = {
      ...file,
      samples: file.samples.map((s) => ({ ...s, elapsedMs: slowKeys.has(`${s.index}:${s.sample}`) ? 27_000 : 12 })),
    };
    asked.length = 0;
    const budget = { rowsPerSide: 3, maxItems: 1000, maxBytes: 1 << 20, maxRunMs: 5000 };
    const out = await collectResultRows([timed], preview, budget);
    expect(asked.some((s) => slowKeys.has(`${s.index}:${s.sample}`))).toBe(false);
    expect(out.slow).toBe(2);
    expect(out.items.length + out.noRows + out.leftOut + out.slow!).toBe(out.wrong);
    expect(resultRowsText(out)).toContain('; 2 not run again: each took over 5 s in the run');
    // Without the bound, the same samples are run again.
    asked.length = 0;
    const all = await collectResultRows([timed], preview, { ...budget, maxRunMs: undefined });
    expect(asked.filter((s) => slowKeys.has(`${s.index}:${s.sample}`))).toHaveLength(2);
    expect(all.slow).toBe(0);
  });

  it('stops at the bytes budget: the sample that would pass it and every later one are left out', async () => {
    const one = await collectResultRows([file], preview, { rowsPerSide: 3, maxItems: 100, maxBytes: 1 << 20 });
    const each = JSON.stringify(one.items[0]).length;
    const out = await collectResultRows([file], preview, { rowsPerSide: 3, maxItems: 100, maxBytes: 2 * each + 1 });
    expect(out.items).toHaveLength(2);
    expect(out.bytes).toBeLessThanOrEqual(2 * each + 1);
    expect(out.items.length + out.noRows + out.leftOut).toBe(out.wrong);
  });

  it('gives back what JSON cannot hold: big integers, blobs, non-finite reals', () => {
    const cells: unknown[] = [null, 'x', 1.5, 2n ** 63n - 1n, new Uint8Array([0, 15, 255]), Infinity, NaN];
    const json = JSON.parse(JSON.stringify(cells.map(encodeCell)));
    expect(json.map(decodeCell)).toEqual(cells);
    expect(
      previewOf({
        runId: 'r',
        index: 0,
        sample: 0,
        predColumns: ['a'],
        goldColumns: ['b'],
        predRows: [json],
        goldRows: [],
      }).predRows[0],
    ).toEqual(cells);
  });
});
