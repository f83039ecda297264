import { describe, expect, it } from 'vitest';
import { keysSortedAsText, readJson, runCli, tempFile } from '../helpers/cli.ts';
import { demoFile as demo, demoFlags } from '../helpers/shared-data.ts';

const sortedKeysFile = () => keysSortedAsText(demo('predictions.json'));
const args = (pred: string) => ['eval', '--predictions', pred, ...demoFlags()];

describe('eval with a BIRD file whose keys were sorted as strings', () => {
  it('scores it as the official evaluator does and warns, naming the file, the count and what to do', async () => {
    const out = tempFile('o.json');
    const run = await runCli([...args(sortedKeysFile()), '--out', out]);
    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(
      /^warning: sorted\.json: 18 of 20 keys are not at their own position: the value at position 2 has key "10" \(the keys look sorted as text/m,
    );
    expect(run.stderr).toMatch(/Write the file with its keys in numeric order/);
    const summary = readJson(out).summary;
    expect(summary.pairing_findings.map((f: { code: string }) => f.code)).toEqual(['key-order']);
    // The same values in numeric key order score differently: the sorted file is scored against other questions.
    const straight = tempFile('straight.json');
    expect((await runCli([...args(demo('predictions.json')), '--out', straight])).code).toBe(0);
    expect(readJson(straight).summary.pairing_findings).toEqual([]);
    expect(summary.by_difficulty.total.ex).toBeLessThan(readJson(straight).summary.by_difficulty.total.ex);
  });

  it('exits 2 under --strict with the finding as the message', async () => {
    const run = await runCli([...args(sortedKeysFile()), '--strict']);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/sorted\.json: 18 of 20 keys are not at their own position/);
  });
});
