/** The spool of a deflated inner zip in Chromium: an OPFS file while the import runs, read back byte for byte, gone after release. */
import {
  BlobReader,
  BlobWriter,
  TextReader,
  Uint8ArrayWriter,
  ZipReader,
  ZipWriter,
  type FileEntry,
} from '@zip.js/zip.js';
import { describe, expect, it } from 'vitest';
import { releaseSpooledFiles, spoolNestedZip } from '../../src/adapters/import/nested-zip.ts';

async function spoolNames(): Promise<string[]> {
  const dir = await (await navigator.storage.getDirectory()).getDirectoryHandle('import-spool', { create: true });
  const names: string[] = [];
  for await (const name of (dir as unknown as { keys(): AsyncIterable<string> }).keys()) names.push(name);
  return names;
}

describe('spoolNestedZip', () => {
  it('inflates the inner zip to an OPFS file with progress, which reads back as the same zip, and releases it', async () => {
    const inner = new ZipWriter(new BlobWriter('application/zip'), { useWebWorkers: false });
    await inner.add('dev_databases/a/a.sqlite', new TextReader('SQLite format 3\u0000' + 'x'.repeat(300_000)));
    const innerBlob = await inner.close();
    const outer = new ZipWriter(new BlobWriter('application/zip'), { useWebWorkers: false });
    await outer.add('dev/dev_databases.zip', new BlobReader(innerBlob), { level: 6 });
    const entries = await new ZipReader(new BlobReader(await outer.close())).getEntries();
    const entry = entries.find((e) => e.filename === 'dev/dev_databases.zip') as FileEntry;
    expect(entry.compressionMethod).toBe(8); // deflated

    const progress: number[] = [];
    const spooled = await spoolNestedZip('dev.zip', entry.filename, entry, { onBytes: (done) => progress.push(done) });
    expect(spooled).toBeInstanceOf(File); // an OPFS file, not an in-memory Blob
    expect(await spoolNames()).toEqual([(spooled as File).name]);
    expect(progress.at(-1)).toBe(entry.compressedSize); // progress counts the deflated bytes read
    expect(new Uint8Array(await spooled.arrayBuffer())).toEqual(new Uint8Array(await innerBlob.arrayBuffer()));
    const [db] = await new ZipReader(new BlobReader(spooled)).getEntries();
    expect(db!.filename).toBe('dev_databases/a/a.sqlite');
    expect((await (db as FileEntry).getData(new Uint8ArrayWriter())).length).toBe(300_016);

    await releaseSpooledFiles();
    expect(await spoolNames()).toEqual([]);
  });
});
