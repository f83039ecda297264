/**
 * Outputs written atomically: the text goes to a temporary file in the output's own folder
 * (same file system, so the rename is atomic), is flushed to disk, and is renamed over the
 * output only when complete. Ctrl-C or a crash mid-write leaves the previous output (or none)
 * intact, never a truncated one; on SIGINT / SIGTERM the temporary file is removed too.
 */
import { randomBytes } from 'node:crypto';
import { unlinkSync } from 'node:fs';
import { onTermination } from './signal-cleanup.ts';
import { open, rename, unlink } from 'node:fs/promises';
import path from 'node:path';

/** The name of the temporary file: hidden, next to the output, unique per process and write. */
export function tempPathFor(file: string): string {
  const abs = path.resolve(file);
  return path.join(path.dirname(abs), `.${path.basename(abs)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
}

export async function writeFileAtomic(file: string, text: string): Promise<void> {
  await writeAtomicWith(file, async (temp) => {
    const handle = await open(temp, 'wx');
    try {
      await handle.writeFile(text);
      await handle.sync();
    } finally {
      await handle.close();
    }
  });
}

/** Any writer made atomic: `write` fills a temporary file beside `file`, which is renamed when it is complete. */
export async function writeAtomicWith(file: string, write: (temp: string) => Promise<unknown>): Promise<void> {
  const temp = tempPathFor(file);
  const release = onTermination(() => {
    try {
      unlinkSync(temp);
    } catch {
      // not created yet, or already renamed
    }
  });
  try {
    await write(temp);
    await rename(temp, file);
  } catch (err) {
    await unlink(temp).catch(() => {});
    throw err;
  } finally {
    release();
  }
}

/**
 * A text output written as a stream, atomically: `produce` hands pieces to `write` (kept in a
 * buffer of about 1 MiB, so memory stays bounded whatever the output's size); the file is
 * renamed into place once `produce` returns. Returns what `produce` returns.
 */
export async function writeStreamAtomic<T>(
  file: string,
  produce: (write: (text: string) => Promise<void>) => Promise<T>,
): Promise<T> {
  let result!: T;
  await writeAtomicWith(file, async (temp) => {
    const handle = await open(temp, 'wx');
    let pending: string[] = [];
    let size = 0;
    const flush = async () => {
      if (size === 0) return;
      const text = pending.join('');
      pending = [];
      size = 0;
      await handle.write(text);
    };
    try {
      result = await produce(async (text) => {
        pending.push(text);
        size += text.length;
        if (size >= 1024 * 1024) await flush();
      });
      await flush();
      await handle.sync();
    } finally {
      await handle.close();
    }
  });
  return result;
}
