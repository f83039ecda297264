import { afterEach, describe, expect, it } from 'vitest';
import { BIRD_DBS, birdMiniDevFiles, sharedBlob } from './browser-data.ts';
import { testStore, type TestStore } from './store-helpers.ts';

let t: TestStore;
afterEach(() => t?.dispose());

describe('importing BIRD mini-dev as downloaded (real files, real IndexedDB)', () => {
  it('stores the dataset with its card: questions by difficulty and database, sha256 and known release of each database', async () => {
    t = testStore();
    const phases = new Set<string>();
    const ds = await t.store.datasets.import(
      { kind: 'bird', name: 'BIRD mini-dev', files: await birdMiniDevFiles() },
      { onProgress: (p) => phases.add(p.phase) },
    );
    expect(ds.questions).toHaveLength(500);
    expect(ds.goldFile?.name).toBe('minidev/mini_dev_sqlite_gold.sql');
    expect(ds.questionsFile.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(Object.keys(ds.databases).sort()).toEqual([...BIRD_DBS]);
    expect([...phases]).toEqual(expect.arrayContaining(['parsing', 'hashing', 'storing', 'done']));

    const card = await t.store.datasets.card(ds.id);
    expect(card.byDifficulty).toEqual({ simple: 148, moderate: 250, challenging: 102 });
    expect(card.byDb.superhero).toEqual({
      questions: expect.any(Number),
      sizeBytes: 237_568,
      sha256: '75e94a2c3236ee3bb2c01fb97a1c4b4c1c269bcefd4eab1d04be323d2d0825b1',
      knownAs: 'superhero from BIRD dev (dev_20240627 and TASQL_fork LFS)',
    });
    expect(card.byDb.toxicology!.knownAs).toBe('toxicology from BIRD dev (dev_20240627)');
    expect(card.byDb.financial).toMatchObject({ sha256: null, sizeBytes: null });
    expect(card.questionsWithoutDb).toHaveLength(360);
    expect(BIRD_DBS.reduce((n, db) => n + card.byDb[db]!.questions, 0)).toBe(140);
  });

  it("stores the entries of dev_tables.json for the questions' databases (OmniSQL's schema renderer reads them); refuses a tables.json that is not one, naming it", async () => {
    t = testStore();
    const files = await birdMiniDevFiles();
    const ds = await t.store.datasets.import({ kind: 'bird', name: 'with tables', files });
    const whole = JSON.parse(await (await sharedBlob('bird/minidev/dev_tables.json')).text()) as Array<{
      db_id: string;
    }>;
    const used = new Set(ds.questions.map((q) => q.dbId));
    expect(ds.tables).toEqual(whole.filter((e) => used.has(e.db_id)));
    expect(ds.tables!.map((e) => e.db_id)).toEqual(expect.arrayContaining([...BIRD_DBS]));
    expect(ds.tablesFile).toMatchObject({ name: 'minidev/dev_tables.json', bytes: 158_301 });
    expect((await t.reopen().datasets.get(ds.id))?.tables).toEqual(ds.tables);

    const bad = files.map((f) =>
      f.path.endsWith('dev_tables.json') ? { path: f.path, file: new Blob(['[{"db_id": "superhero"}]']) } : f,
    );
    await expect(t.store.datasets.import({ kind: 'bird', name: 'bad tables', files: bad })).rejects.toThrow(
      /minidev\/dev_tables\.json is not a tables\.json .*: entry 0 has no table_names_original list/,
    );
    expect((await t.store.datasets.list()).map((d) => d.name)).toEqual(['with tables']);
  });

  it('keeps one copy of each database when a second dataset uses the same files, and after a reload', async () => {
    t = testStore();
    const files = await birdMiniDevFiles();
    await t.store.datasets.import({ kind: 'bird', name: 'first', files });
    const before = await t.counts();
    await t.store.datasets.import({ kind: 'bird', name: 'second', files });
    expect(await t.counts()).toEqual({ ...before, datasets: 2 });
    expect(before).toMatchObject({ databases: 3, chunks: 3 });
    const reloaded = t.reopen();
    expect((await reloaded.datasets.list()).map((d) => d.name)).toEqual(['first', 'second']);
    expect((await reloaded.datasets.databases()).map((d) => d.dbId).sort()).toEqual([...BIRD_DBS]);
  });

  it('the same folder imported again under the same name gives back the stored dataset: no duplicate, nothing written', async () => {
    t = testStore();
    const files = await birdMiniDevFiles();
    const first = await t.store.datasets.import({ kind: 'bird', name: 'BIRD mini-dev', files });
    const before = await t.counts();
    const again = await t.store.datasets.import({ kind: 'bird', name: 'BIRD mini-dev', files });
    expect(again.id).toBe(first.id);
    expect(await t.counts()).toEqual(before);
    // Other files under the same name are another dataset.
    const fewer = await t.store.datasets.import({
      kind: 'bird',
      name: 'BIRD mini-dev',
      files: files.filter((f) => !f.path.includes('toxicology')),
    });
    expect(fewer.id).not.toBe(first.id);
    expect((await t.reopen().datasets.list()).map((d) => d.id)).toEqual([first.id, fewer.id]);
  });

  it('deleting a dataset keeps databases another dataset still uses, and frees them with the last one', async () => {
    t = testStore();
    const files = await birdMiniDevFiles();
    const a = await t.store.datasets.import({ kind: 'bird', name: 'a', files });
    const b = await t.store.datasets.import({
      kind: 'bird',
      name: 'b',
      files: files.filter((f) => !f.path.includes('toxicology')),
    });
    await t.store.datasets.delete(a.id);
    expect(await t.counts()).toMatchObject({ datasets: 1, databases: 2, chunks: 2 });
    await t.store.datasets.delete(b.id);
    expect(await t.counts()).toMatchObject({ datasets: 0, databases: 0, chunks: 0 });
  });

  it('reads the same dataset from a zip (Zip64, streamed from the Blob) as from the folder', async () => {
    t = testStore();
    const { BlobWriter, BlobReader, ZipWriter } = await import('@zip.js/zip.js');
    const zip = new ZipWriter(new BlobWriter('application/zip'), { zip64: true, useWebWorkers: false });
    for (const f of await birdMiniDevFiles())
      await zip.add(`MINIDEV/${f.path.replace(/^minidev\//, '')}`, new BlobReader(f.file));
    const blob = await zip.close();
    const ds = await t.store.datasets.import({
      kind: 'bird',
      name: 'zipped',
      files: [{ path: 'minidev.zip', file: blob }],
    });
    const card = await t.store.datasets.card(ds.id);
    expect(card.questionsWithoutDb).toHaveLength(360);
    expect(card.byDb.student_club!.sha256).toBe('eb89bcfe97eefa386a27904ec5aa15159811a7eac894ec659a36e48fa9f76b77');
    expect(await t.counts()).toMatchObject({ databases: 3, chunks: 3 });
  });
});

it('reads a zip inside a zip, as in BIRD dev.zip (dev_databases.zip inside), stored or deflated (spooled to OPFS), to the same databases; a damaged inner zip is named', async () => {
  t = testStore();
  const { BlobWriter, BlobReader, ZipWriter } = await import('@zip.js/zip.js');
  const files = await birdMiniDevFiles();
  const inner = new ZipWriter(new BlobWriter('application/zip'), { useWebWorkers: false });
  for (const f of files.filter((f) => f.path.endsWith('.sqlite')))
    await inner.add(f.path.replace(/^minidev\//, ''), new BlobReader(f.file));
  const innerBlob = await inner.close();
  const outerZip = async (level: number) => {
    const outer = new ZipWriter(new BlobWriter('application/zip'), { useWebWorkers: false });
    for (const f of files.filter((f) => !f.path.endsWith('.sqlite')))
      await outer.add(`dev_20240627/${f.path.replace(/^minidev\//, '')}`, new BlobReader(f.file));
    await outer.add('dev_20240627/dev_databases.zip', new BlobReader(innerBlob), { level });
    return outer.close();
  };
  const stored = await t.store.datasets.import({
    kind: 'bird',
    name: 'nested',
    files: [{ path: 'dev.zip', file: await outerZip(0) }],
  });
  expect(Object.keys(stored.databases).sort()).toEqual([...BIRD_DBS]);
  const phases: string[] = [];
  const deflatedZip = await outerZip(6);
  const deflated = await t.store.datasets.import(
    { kind: 'bird', name: 'nested deflated', files: [{ path: 'dev.zip', file: deflatedZip }] },
    { onProgress: (p) => phases.push(`${p.phase}:${p.file}`) },
  );
  expect(deflated.databases).toEqual(stored.databases);
  expect(phases).toContain('reading:unpacking the inner zip');
  // The spooled copy is gone once the import has ended.
  const spool = await (await navigator.storage.getDirectory()).getDirectoryHandle('import-spool', { create: true });
  const left: string[] = [];
  for await (const name of (spool as unknown as { keys(): AsyncIterable<string> }).keys()) left.push(name);
  expect(left).toEqual([]);

  // Garbage in the middle of the inner zip's deflated bytes.
  const bytes = new Uint8Array(await deflatedZip.arrayBuffer());
  const at = bytes.length - Math.floor(innerBlob.size / 2);
  bytes.fill(0x55, at, at + 4096);
  await expect(
    t.store.datasets.import({ kind: 'bird', name: 'damaged', files: [{ path: 'dev.zip', file: new Blob([bytes]) }] }),
  ).rejects.toThrow(
    /dev_20240627\/dev_databases\.zip.* is damaged .*download dev\.zip again, or unzip it with another tool and import the folder/,
  );
  expect((await t.counts()).datasets).toBe(2);

  // Cancelled while the inner zip is being inflated: nothing stored, no spooled copy left.
  const ctl = new AbortController();
  const cancelled = await t.store.datasets
    .import(
      { kind: 'bird', name: 'cancelled', files: [{ path: 'dev.zip', file: deflatedZip }] },
      { signal: ctl.signal, onProgress: (p) => p.file === 'unpacking the inner zip' && ctl.abort() },
    )
    .catch((e: unknown) => e);
  expect(cancelled).toMatchObject({ name: 'AbortError' });
  expect((await t.counts()).datasets).toBe(2);
  const after: string[] = [];
  for await (const name of (spool as unknown as { keys(): AsyncIterable<string> }).keys()) after.push(name);
  expect(after).toEqual([]);
});

it('a cancelled import stores nothing', async () => {
  t = testStore();
  const ctl = new AbortController();
  const files = await birdMiniDevFiles();
  const err = await t.store.datasets
    .import(
      { kind: 'bird', name: 'cancelled', files },
      { signal: ctl.signal, onProgress: (p) => p.phase === 'parsing' && ctl.abort() },
    )
    .catch((e: unknown) => e);
  expect(err).toMatchObject({ name: 'AbortError' });
  expect(await t.counts()).toMatchObject({ datasets: 0, databases: 0, chunks: 0 });
});

describe('a bad import gives a clear message and leaves everything stored before intact', () => {
  async function withEarlierDataset() {
    t = testStore();
    const files = await birdMiniDevFiles();
    await t.store.datasets.import({
      kind: 'bird',
      name: 'earlier',
      files: files.filter((f) => !f.path.includes('toxicology')),
    });
    return { files, before: await t.counts() };
  }

  it('a non-SQLite file as a database: BAD_DATABASE naming the file', async () => {
    const { files, before } = await withEarlierDataset();
    const bad = files.map((f) =>
      f.path.includes('toxicology') ? { ...f, file: new Blob(['id,name\n1,carbon\n']) } : f,
    );
    await expect(t.store.datasets.import({ kind: 'bird', name: 'broken', files: bad })).rejects.toMatchObject({
      name: 'WorkbenchError',
      code: 'BAD_DATABASE',
      message: expect.stringMatching(
        /^minidev\/dev_databases\/toxicology\/toxicology\.sqlite: not an SQLite database \(it starts with "id,name\?1,carbo"/,
      ),
    });
    expect(await t.counts()).toEqual(before);
  });

  it('a malformed questions file: BAD_JSON naming file, line and column', async () => {
    const { files, before } = await withEarlierDataset();
    const text = await files[0]!.file.text();
    const bad = files.map((f, i) => (i === 0 ? { ...f, file: new Blob([text.replace('},', '},,')]) } : f));
    await expect(t.store.datasets.import({ kind: 'bird', name: 'broken', files: bad })).rejects.toMatchObject({
      code: 'BAD_JSON',
      message: expect.stringMatching(/^minidev\/mini_dev_sqlite\.json:\d+:\d+: not valid JSON/),
    });
    expect(await t.counts()).toEqual(before);
  });

  it('questions and gold of different datasets: MISMATCH', async () => {
    const { files, before } = await withEarlierDataset();
    const devGold = await sharedBlob('bird/dev/dev_gold.sql');
    const bad = files.map((f) => (f.path.endsWith('_gold.sql') ? { ...f, file: devGold } : f));
    await expect(t.store.datasets.import({ kind: 'bird', name: 'mixed', files: bad })).rejects.toMatchObject({
      code: 'MISMATCH',
      message: expect.stringMatching(/has 500 questions but .* has 1534 gold lines/),
    });
    expect(await t.counts()).toEqual(before);
  });

  it('storage full while storing a database (test double: a real QuotaExceededError DOMException at byte N): nothing half-written', async () => {
    const { files, before } = await withEarlierDataset();
    // superhero and student_club are stored already; toxicology (2.6 MiB) is the only new one.
    const full = t.reopen({ testing: { simulateQuotaAfterBytes: 0 } });
    await expect(full.datasets.import({ kind: 'bird', name: 'too big', files })).rejects.toMatchObject({
      name: 'StoreError',
      code: 'QUOTA_EXCEEDED',
      message: expect.stringMatching(
        /dataset "too big" was not imported \(it stopped while storing database toxicology.*Nothing stored before was changed/,
      ),
    });
    expect(await t.counts()).toEqual(before);
  });
});
