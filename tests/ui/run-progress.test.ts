import { describe, expect, it } from 'vitest';
import { estimate, executedRate } from '../../src/ui/context/run-progress.ts';

/** the resumed 8-sample run's progress (4,000 items, 2,880 without a database). */
describe('run progress: rates over executed items, the tail named instead of "about 0 s left"', () => {
  it('skipped and stored items do not inflate the rate: 2,880 skipped, 10 executed in 10 s is 1 item/s', () => {
    // 1,000 stored before the resume + 2,880 settled at once + 10 executed.
    const c = { done: 3890, total: 4000, executed: 10, executedSpanMs: 10_000, running: 2 };
    expect(executedRate(c)).toBe(1);
    // 110 left at 1 item/s: 110 s, not "about 1 s" (3,890 done / 10 s would be 389 items/s).
    expect(estimate(c)).toEqual({ kind: 'eta', ms: 110_000 });
  });
  it('before three items ran there is no rate to promise', () => {
    expect(estimate({ done: 2880, total: 4000, executed: 0, executedSpanMs: 0, running: 2 })).toEqual({
      kind: 'estimating',
    });
    expect(estimate({ done: 2882, total: 4000, executed: 2, executedSpanMs: 400, running: 2 })).toEqual({
      kind: 'estimating',
    });
  });
  it('when every item left is in a worker, no time is promised: the run waits for them', () => {
    expect(estimate({ done: 3999, total: 4000, executed: 1119, executedSpanMs: 300_000, running: 1 })).toEqual({
      kind: 'tail',
      left: 1,
    });
    expect(estimate({ done: 3998, total: 4000, executed: 1118, executedSpanMs: 300_000, running: 2 })).toEqual({
      kind: 'tail',
      left: 2,
    });
    // Three left and two running: the rate still says something.
    expect(estimate({ done: 3997, total: 4000, executed: 1117, executedSpanMs: 300_000, running: 2 }).kind).toBe('eta');
  });
});
