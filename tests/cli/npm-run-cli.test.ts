/**
 * The CLI's contract is `npm run --silent cli -- <command> [flags]` (README, docs/cli.md). The
 * tests run it without npm's start (tests/helpers/cli.ts `runCli`: `node scripts/cli.mjs` in the
 * repository root, what the `cli` script runs); here the npm route itself, on a run that scores
 * and on a refused one: the same exit code and the same output.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { runCli, runCliThroughNpm, tempFile } from '../helpers/cli.ts';
import { demoFile, demoFlags } from '../helpers/shared-data.ts';

describe('npm run --silent cli -- ...', () => {
  it('scores the demo exactly as the direct run does: exit 0, the same table on stdout and the same report file (wall times aside)', async () => {
    const args = (out: string) => ['eval', '--predictions', demoFile('predictions.json'), ...demoFlags(), '--out', out];
    const [outNpm, outDirect] = [tempFile('npm.json'), tempFile('direct.json')];
    const npm = await runCliThroughNpm(args(outNpm));
    const direct = await runCli(args(outDirect));
    expect(npm.code, npm.stderr).toBe(0);
    expect(direct.code, direct.stderr).toBe(0);
    expect(npm.stdout).toContain('EX rule: BIRD set equality');
    expect(npm.stdout).toBe(direct.stdout);
    expect(npm.stderr).toBe(direct.stderr);
    // The report file: the same summary and items, but for each item's wall time.
    const report = (file: string) => {
      const r = JSON.parse(readFileSync(file, 'utf8')) as { summary: unknown; items: Array<Record<string, unknown>> };
      return { summary: r.summary, items: r.items.map(({ elapsed_ms: _ms, ...item }) => item) };
    };
    expect(report(outNpm).items).toHaveLength(20);
    expect(report(outNpm)).toEqual(report(outDirect));
  }, 120_000);

  it('passes a refusal through: the same exit code and error line', async () => {
    const npm = await runCliThroughNpm(['eval', '--bogus']);
    const direct = await runCli(['eval', '--bogus']);
    expect(npm.code).toBe(2);
    expect(direct.code).toBe(2);
    expect(npm.stderr).toMatch(/^error: Unknown option '--bogus'$/m);
    expect(npm.stderr).toBe(direct.stderr);
    expect(npm.stdout).toBe(direct.stdout);
  }, 120_000);
});
