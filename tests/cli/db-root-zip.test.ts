/**
 * `eval --db-root dev.zip`: BIRD's release zip (dev_databases.zip deflated inside, junk entries)
 * built by the test from the three BIRD databases, read directly by the CLI: every item scores
 * as with the folder; a damaged inner zip is named with what to do.
 */
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { BlobReader, BlobWriter, TextReader, Uint8ArrayReader, ZipWriter } from '@zip.js/zip.js';
import { describe, expect, it } from 'vitest';
import { readJson, runCli, tempFile } from '../helpers/cli.ts';
import { gpt4oMinidevPredictions, minidevFlags, sharedData } from '../helpers/shared-data.ts';

const DBS = ['student_club', 'superhero', 'toxicology'];

async function devZip(): Promise<Uint8Array> {
  const inner = new ZipWriter(new BlobWriter('application/zip'), { useWebWorkers: false, level: 6 });
  for (const db of DBS) {
    const dir = sharedData('bird', 'databases', db);
    for (const f of readdirSync(dir, { recursive: true }) as string[]) {
      if (!f.includes('.')) continue;
      await inner.add(`dev_databases/${db}/${f}`, new Uint8ArrayReader(readFileSync(path.join(dir, f))));
    }
    await inner.add(`__MACOSX/dev_databases/${db}/._${db}.sqlite`, new TextReader('AppleDouble'));
  }
  const outer = new ZipWriter(new BlobWriter('application/zip'), { useWebWorkers: false, level: 6 });
  await outer.add(
    'dev_20240627/dev_gold.sql',
    new Uint8ArrayReader(readFileSync(sharedData('bird', 'dev', 'dev_gold.sql'))),
  );
  await outer.add('dev_20240627/dev_databases.zip', new BlobReader(await inner.close()), { level: 6 });
  return new Uint8Array(await (await outer.close()).arrayBuffer());
}

const args = (dbRoot: string, out: string) => [
  'eval',
  '--predictions',
  gpt4oMinidevPredictions(),
  ...minidevFlags({ dbRoot }),
  '--out',
  out,
];

describe('eval --db-root dev.zip', () => {
  it('scores every item exactly as with the databases folder', async () => {
    const zip = tempFile('dev.zip');
    const bytes = await devZip();
    writeFileSync(zip, bytes);
    const [a, b] = [tempFile('folder.json'), tempFile('zip.json')];
    const [ra, rb] = await Promise.all([runCli(args(sharedData('bird', 'databases'), a)), runCli(args(zip, b))]);
    expect(ra.code, ra.stderr).toBe(0);
    expect(rb.code, rb.stderr).toBe(0);
    expect(rb.stdout).toBe(ra.stdout);
    const pick = (f: string) =>
      readJson(f).items.map((i: Record<string, unknown>) => [i.index, i.status, i.ex, i.soft_f1]);
    expect(pick(b)).toEqual(pick(a));
    expect(readJson(b).items.filter((i: { status: string }) => i.status !== 'missing-db')).toHaveLength(140);
    expect(readJson(b).summary.inputs.db_root).toBe(zip);

    const damaged = bytes.slice();
    damaged.fill(0x55, Math.floor(bytes.length / 2), Math.floor(bytes.length / 2) + 4096);
    const bad = tempFile('dev.zip');
    writeFileSync(bad, damaged);
    const run = await runCli(args(bad, tempFile('bad.json')));
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(
      /--db-root: dev\.zip\/dev_20240627\/dev_databases\.zip.* is damaged \(.+\): download the zip again, or unzip it and give the folder to --db-root/,
    );
  });
});
