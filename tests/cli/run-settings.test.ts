import { describe, expect, it } from 'vitest';
import { parseEvalArgs, runConfigOf } from '../../src/cli/commands/eval-args.ts';
import { evalOptionsOf } from '../../src/core/run/score-run.ts';
import { DEFAULT_RUN_CONFIG } from '../../src/core/run/types.ts';
import { DEFAULT_SUITE_SPEC } from '../../src/core/ts/suite.ts';

/** The evaluation flags of `eval` (paths are only parsed here, never opened). */
const argsOf = (...flags: string[]) =>
  parseEvalArgs(['--predictions', 'p.sql', '--gold', 'g.sql', '--db-root', 'dbs', ...flags]);

describe('the run settings of the evaluation flags (runConfigOf)', () => {
  it('are the default run settings when no flag changes one', () => {
    expect(runConfigOf(argsOf())).toEqual(DEFAULT_RUN_CONFIG);
  });

  it('carry every evaluation flag into the one settings type, and from it into the executor request', () => {
    const config = runConfigOf(
      argsOf(
        '--timeout-s',
        '7.5',
        '--read-only',
        '--metrics',
        'ex,ts,r-ves',
        '--ves-iterations',
        '12',
        '--reward',
        'ex + 0.5 * format',
        '--ts-seed',
        '9',
        '--ex-rule',
        'spider',
      ),
    );
    expect(config).toEqual({
      ...DEFAULT_RUN_CONFIG,
      metrics: ['ex', 'ts', 'r-ves'],
      timeoutMs: 7500,
      readOnly: true,
      vesIterations: 12,
      rewardFormula: 'ex + 0.5 * format',
      suite: { ...DEFAULT_SUITE_SPEC, seed: 9 },
      exRule: 'spider',
    });
    // What the workers are asked is derived from these settings, nothing else.
    expect(evalOptionsOf(config, 3)).toEqual({
      metrics: ['ex', 'ts', 'r-ves'],
      timeoutMs: 7500,
      readOnly: true,
      vesIterations: 12,
      previewRows: 3,
      suite: { ...DEFAULT_SUITE_SPEC, seed: 9 },
      exRule: 'spider',
    });
  });

  it('hold a test suite only with metric ts, and the EX rule only when it is Spider’s', () => {
    const plain = runConfigOf(argsOf('--ex-rule', 'bird'));
    expect('suite' in plain).toBe(false);
    expect('exRule' in plain).toBe(false);
    expect('suite' in evalOptionsOf(plain)).toBe(false);
  });

  it('take the EX rule the run is scored by over the flag (eval: the dataset’s, without --ex-rule)', () => {
    const args = argsOf();
    expect(args.exRule).toBeNull();
    expect(runConfigOf(args, 'spider').exRule).toBe('spider');
    expect('exRule' in runConfigOf(argsOf('--ex-rule', 'spider'), 'bird')).toBe(false);
  });
});
