/** Upper bounds of --workers and --timeout-s (and --timeout-s x --ves-iterations), and reward formulas that divide by zero, refused at parse time. */
import { availableParallelism } from 'node:os';
import { describe, expect, it } from 'vitest';
import { maxWorkers, WORKERS_PER_CORE } from '../../src/cli/bounds.ts';
import { parseEvalArgs } from '../../src/cli/commands/eval-args.ts';
import { MAX_TIMER_MS } from '../../src/core/eval/limits.ts';

const base = ['--predictions', 'p.json', '--gold', 'g.sql', '--db-root', 'dbs'];
const parse = (...extra: string[]) => parseEvalArgs([...base, ...extra]);
function error(fn: () => unknown): { where?: string; message: string } {
  try {
    fn();
  } catch (err) {
    return err as { where?: string; message: string };
  }
  throw new Error('expected an error');
}

describe('eval flag bounds', () => {
  it(`--workers is capped at ${WORKERS_PER_CORE} x the cores, with the cap in the message (1,000 used to start 1,000 threads)`, () => {
    const cap = WORKERS_PER_CORE * availableParallelism();
    expect(maxWorkers()).toBe(cap);
    expect(parse('--workers', String(cap)).workers).toBe(cap);
    const e = error(() => parse('--workers', '1000'));
    expect(e.where).toBe('--workers');
    expect(e.message).toContain(`use at most ${cap}`);
    expect(error(() => parse('--workers', '0')).where).toBe('--workers');
  });

  it('--timeout-s above 2^31 - 1 ms is refused (Node fired such a timer at once: every item "timed out")', () => {
    expect(MAX_TIMER_MS).toBe(2 ** 31 - 1);
    expect(parse('--timeout-s', '2147483').timeoutS).toBe(2147483);
    const e = error(() => parse('--timeout-s', '2147484'));
    expect(e.where).toBe('--timeout-s');
    expect(e.message).toMatch(/longer than a timer can wait \(2147483647 ms/);
  });

  it('with r-ves, --timeout-s x --ves-iterations must fit a timer too, and the message names both flags', () => {
    expect(parse('--timeout-s', '30000').timeoutS).toBe(30000); // without r-ves: fine
    const e = error(() => parse('--timeout-s', '30000', '--metrics', 'ex,r-ves'));
    expect(e.where).toBe('--timeout-s');
    expect(e.message).toMatch(/--timeout-s x --ves-iterations = 30000 s x 100 = 3000000000 ms/);
    expect(parse('--timeout-s', '30000', '--metrics', 'ex,r-ves', '--ves-iterations', '10').vesIterations).toBe(10);
  });

  it('a reward formula that divides by zero on some metric values is refused before the run, naming the formula', () => {
    for (const f of ['ex / (format - 1)', '1 / ex', 'ex / soft_f1']) {
      const e = error(() => parse('--reward', f));
      expect(e.where, f).toBe('--reward');
      expect(e.message).toContain(JSON.stringify(f));
      expect(e.message).toMatch(/division by zero/);
    }
    expect(parse('--reward', 'ex + 0.1 * format').reward).toBe('ex + 0.1 * format');
    expect(parse('--reward', 'ex / (format + 1)').reward).toBe('ex / (format + 1)');
  });
});
