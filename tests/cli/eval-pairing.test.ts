import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { readJson, runCli, tempFile } from '../helpers/cli.ts';

const demo = (f: string) => new URL(`../../public/demo/${f}`, import.meta.url).pathname;

/** The demo's predictions with their keys sorted as strings ("0", "1", "10", "11", ..., "19", "2", ...). */
function sortedKeysFile(): string {
  const obj = JSON.parse(readFileSync(demo('predictions.json'), 'utf8')) as Record<string, string>;
  const file = tempFile('sorted.json');
  writeFileSync(
    file,
    '{' +
      Object.keys(obj)
        .sort()
        .map((k) => `${JSON.stringify(k)}: ${JSON.stringify(obj[k])}`)
        .join(',\n') +
      '}',
  );
  return file;
}

const args = (pred: string) => [
  'eval',
  '--predictions',
  pred,
  '--gold',
  demo('gold.sql'),
  '--dataset',
  demo('questions.json'),
  '--db-root',
  demo(''),
];

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
