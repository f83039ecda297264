/** `compare`: two runs on the same questions: fixed / broken, EX difference with a bootstrap interval, McNemar. */
import { WorkbenchError } from '../../core/errors.ts';
import { compareRuns } from '../../core/rl/compare.ts';
import { compareJson, compareTable } from '../../core/rl/compare-report.ts';
import { mulberry32 } from '../../core/util/rng.ts';
import { readRunInput } from './tabular-input.ts';
import type { NodeHost } from '../node-host.ts';
import { bad, parseFlags } from '../flags.ts';
import { integerFlag } from './rl-args.ts';
import { writeFileAtomic } from '../atomic-write.ts';
import { checkCompareOutputs } from '../preflight-commands.ts';
import { COMPARE_USAGE } from '../usage.ts';

export const usage = COMPARE_USAGE;

export async function run(argv: string[], host: NodeHost): Promise<number> {
  const { values, positionals } = parseFlags(
    argv,
    { seed: { type: 'string' }, resamples: { type: 'string' }, out: { type: 'string' } },
    usage,
    true,
  );
  if (positionals.length !== 2) {
    throw bad(
      'RUN_A RUN_B',
      `name exactly two run files (run files or eval --out reports), got ${positionals.length}\n${usage}`,
    );
  }
  const seed = integerFlag('--seed', values.seed, 0, 0, 0xffffffff);
  const resamples = integerFlag('--resamples', values.resamples, 10_000, 1, 10_000_000);
  const [fileA, fileB] = positionals as [string, string];
  await checkCompareOutputs(values.out, fileA, fileB);
  const a = await readRunInput(host, 'RUN_A', fileA);
  const b = await readRunInput(host, 'RUN_B', fileB);
  const result = compareRuns(a, b, { resamples, makeRng: () => mulberry32(seed) });
  if (result.overall.questions === 0) {
    throw new WorkbenchError(
      'MISMATCH',
      `${fileA} and ${fileB} have no scored question in common: they are runs on different questions`,
    );
  }
  const meta = { runA: `${a.run.name} (${fileA})`, runB: `${b.run.name} (${fileB})`, seed, resamples };
  process.stdout.write(compareTable(result, meta) + '\n');
  if (values.out) await writeFileAtomic(values.out, JSON.stringify(compareJson(result, meta), null, 1) + '\n');
  return 0;
}
