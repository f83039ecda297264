/**
 * The app's zip import (real zip.js, real IndexedDB in Chromium) through the same bounds as the
 * CLI (src/adapters/zip/zip-entries.ts): a duplicated entry, a name that leaves the folder,
 * a zip bomb and an encrypted zip are refused with a message naming the entry, and nothing
 * stored before changes. Hostile zips are built in the test from the real BIRD files.
 */
import { BlobReader, BlobWriter, Uint8ArrayReader, ZipWriter } from '@zip.js/zip.js';
import { afterEach, describe, expect, it } from 'vitest';
import { storedZip, type RawEntry } from '../helpers/stored-zip.ts';
import { birdMiniDevFiles } from './browser-data.ts';
import { testStore, type TestStore } from './store-helpers.ts';

let t: TestStore;
afterEach(() => t?.dispose());

/** The mini-dev files as raw entries under `MINIDEV/`, plus `extra`. */
async function miniDevEntries(extra: RawEntry[] = [], drop?: (path: string) => boolean): Promise<RawEntry[]> {
  const out: RawEntry[] = [];
  for (const f of await birdMiniDevFiles()) {
    if (drop?.(f.path)) continue;
    out.push({ name: `MINIDEV/${f.path.replace(/^minidev\//, '')}`, data: new Uint8Array(await f.file.arrayBuffer()) });
  }
  return [...out, ...extra];
}

async function withEarlierDataset() {
  t = testStore();
  await t.store.datasets.import({ kind: 'bird', name: 'earlier', files: await birdMiniDevFiles() });
  return t.counts();
}

const importZip = (bytes: Uint8Array | Blob) =>
  t.store.datasets.import({
    kind: 'bird',
    name: 'hostile',
    files: [{ path: 'minidev.zip', file: bytes instanceof Blob ? bytes : new Blob([bytes as BlobPart]) }],
  });

describe("the app's zip import within bounds", () => {
  it('a duplicated database entry (superhero.sqlite twice, the second holding student_club) is refused, not silently won by the last copy', async () => {
    const before = await withEarlierDataset();
    const files = await birdMiniDevFiles();
    const club = new Uint8Array(await files.find((f) => f.path.includes('student_club'))!.file.arrayBuffer());
    await expect(
      importZip(
        storedZip(await miniDevEntries([{ name: 'MINIDEV/dev_databases/superhero/superhero.sqlite', data: club }])),
      ),
    ).rejects.toMatchObject({
      code: 'BAD_FORMAT',
      message: expect.stringMatching(
        /^minidev\.zip: the entry MINIDEV\/dev_databases\/superhero\/superhero\.sqlite appears twice/,
      ),
    });
    expect(await t.counts()).toEqual(before);
  });

  it('one database at two paths with different contents is refused naming both; the same bytes twice are one database', async () => {
    const before = await withEarlierDataset();
    const files = await birdMiniDevFiles();
    const bytesOf = async (name: string) =>
      new Uint8Array(await files.find((f) => f.path.includes(`${name}.sqlite`))!.file.arrayBuffer());
    await expect(
      importZip(
        storedZip(
          await miniDevEntries([{ name: 'OTHER/superhero/superhero.sqlite', data: await bytesOf('student_club') }]),
        ),
      ),
    ).rejects.toMatchObject({
      code: 'BAD_FORMAT',
      message: expect.stringContaining(
        'database superhero is in the import twice with different contents: MINIDEV/dev_databases/superhero/superhero.sqlite and OTHER/superhero/superhero.sqlite',
      ),
    });
    expect(await t.counts()).toEqual(before);
    const same = await importZip(
      storedZip(await miniDevEntries([{ name: 'OTHER/superhero/superhero.sqlite', data: await bytesOf('superhero') }])),
    );
    expect(Object.keys(same.databases).sort()).toEqual(['student_club', 'superhero', 'toxicology']);
  });

  it('an entry whose db_id would be ".." (x/...sqlite) and a ".." segment are refused', async () => {
    const before = await withEarlierDataset();
    await expect(
      importZip(storedZip(await miniDevEntries([{ name: 'x/...sqlite', data: 'SQLite format 3\0' }]))),
    ).rejects.toThrow(/the entry "x\/\.\.\.sqlite" has a database name that gives no usable db_id/);
    await expect(
      importZip(storedZip(await miniDevEntries([{ name: 'MINIDEV/../../up.json', data: '[]' }]))),
    ).rejects.toThrow(/has a "\.\." segment/);
    expect(await t.counts()).toEqual(before);
  });

  it('a zip bomb (64 MiB of zeros as a database) is refused by the ratio bound before a byte is stored', async () => {
    const before = await withEarlierDataset();
    const w = new ZipWriter(new BlobWriter('application/zip'), { useWebWorkers: false, level: 9 });
    for (const e of await miniDevEntries([], (p) => p.includes('toxicology')))
      await w.add(e.name, new Uint8ArrayReader(e.data as Uint8Array));
    await w.add(
      'MINIDEV/dev_databases/toxicology/toxicology.sqlite',
      new Uint8ArrayReader(new Uint8Array(64 * 1024 * 1024)),
    );
    await expect(importZip(await w.close())).rejects.toThrow(
      /toxicology\.sqlite inflates .* to 64\.0 MiB \(\d+ to 1, more than the 100 to 1 .*zip bomb; unzip it with another tool and import the folder/,
    );
    expect(await t.counts()).toEqual(before);
  });

  it('an encrypted zip is reported as encrypted (password-protected), not as damaged', async () => {
    t = testStore();
    const w = new ZipWriter(new BlobWriter('application/zip'), {
      useWebWorkers: false,
      password: 'secret',
      encryptionStrength: 3,
    });
    for (const f of await birdMiniDevFiles()) await w.add(f.path, new BlobReader(f.file));
    const err = await importZip(await w.close()).catch((e: Error) => e);
    expect((err as Error).message).toMatch(
      /is encrypted \(password-protected\): the workbench reads no passwords; unzip it with another tool and import the folder, giving the password to the unzip tool/,
    );
    expect((err as Error).message).not.toMatch(/damaged/);
    expect(await t.counts()).toMatchObject({ datasets: 0, databases: 0, chunks: 0 });
  });
});
