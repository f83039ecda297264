/**
 * Output paths checked before any work starts: each output's folder must exist, an output
 * must not be a folder, and no output may be one of the inputs (compared by resolved real
 * path, so `./a/../gold.sql` and symlinks are caught), nor a database under --db-root: an
 * SQLite file there (`--out DB_ROOT/superhero/superhero.sqlite` would overwrite a database)
 * or a file named as SQLite or the loader would take for part of one (`.sqlite`, `-wal`,
 * `-journal`, `-shm`). A report beside the databases is allowed, and may be replaced.
 */
import { open, realpath, stat, statfs, unlink } from 'node:fs/promises';
import { tempPathFor } from './atomic-write.ts';
import path from 'node:path';
import { WorkbenchError } from '../core/errors.ts';

interface PathFlag {
  flag: string;
  file: string | null | undefined;
}

interface PreflightSpec {
  /** Files the command will write. */
  outputs: readonly PathFlag[];
  /** Files the command reads. */
  inputs: readonly PathFlag[];
  /** Folders whose every file is an input (--db-root). */
  inputDirs?: readonly PathFlag[];
}

/** The real path of a file that may not exist yet: its folder's real path + its name. */
async function resolvedOutput(flag: string, file: string): Promise<string> {
  const abs = path.resolve(file);
  const dir = path.dirname(abs);
  const dirStat = await stat(dir).catch(() => null);
  if (!dirStat)
    throw new WorkbenchError(
      'MISSING_FILE',
      `the folder ${dir} of ${file} does not exist: create it first, or name a file in an existing folder`,
      flag,
    );
  if (!dirStat.isDirectory())
    throw new WorkbenchError('BAD_OPTION', `${dir} (the folder of ${file}) is not a folder`, flag);
  const own = await stat(abs).catch(() => null);
  if (own?.isDirectory()) throw new WorkbenchError('BAD_OPTION', `${file} is a folder: name the file to write`, flag);
  // An existing file (or a symlink to one) is compared by its own real path.
  if (own) return realpath(abs);
  return path.join(await realpath(dir), path.basename(abs));
}

/** Free bytes an output folder must have: a full disk fails here, not after the work. */
const MIN_FREE_BYTES = 1024 * 1024;
const PROBE_BYTES = 64 * 1024;

/**
 * The folder of an output takes the temporary file the atomic write will create (same name
 * pattern, so a name too long for it fails here), some bytes of it, and has room left.
 */
async function checkWritable(flag: string, file: string): Promise<void> {
  const dir = path.dirname(path.resolve(file));
  const temp = tempPathFor(file);
  let handle;
  try {
    handle = await open(temp, 'wx');
    await handle.write(new Uint8Array(PROBE_BYTES));
    await handle.sync();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why =
      code === 'ENAMETOOLONG'
        ? `the name is too long: the temporary file written beside it (${path.basename(temp).length} characters) is longer than the file system allows; use a shorter name`
        : code === 'EACCES' || code === 'EPERM' || code === 'EROFS'
          ? `the folder ${dir} is not writable (${code}): name a file in a folder you can write to`
          : code === 'ENOSPC' || code === 'EDQUOT'
            ? `the disk of ${dir} is full (${code}): free space or write elsewhere`
            : `cannot write in ${dir} (${code ?? (err as Error).message}): name a file in a folder you can write to`;
    throw new WorkbenchError('BAD_OPTION', `${file}: ${why}`, flag);
  } finally {
    await handle?.close().catch(() => undefined);
    await unlink(temp).catch(() => undefined);
  }
  const fs = await statfs(dir).catch(() => null);
  if (fs && fs.blocks > 0 && fs.bavail * fs.bsize < MIN_FREE_BYTES) {
    throw new WorkbenchError(
      'BAD_OPTION',
      `${file}: the disk of ${dir} is full (${fs.bavail * fs.bsize} bytes free): free space or write elsewhere`,
      flag,
    );
  }
}

async function resolvedInput(file: string): Promise<string | null> {
  return realpath(path.resolve(file)).catch(() => null);
}

const inside = (dir: string, file: string) => file.startsWith(dir.endsWith(path.sep) ? dir : dir + path.sep);
const DATABASE_NAME = /\.sqlite$|-wal$|-journal$|-shm$/i;
const SQLITE_HEADER = Buffer.from('SQLite format 3\0', 'latin1');

async function isSqliteFile(file: string): Promise<boolean> {
  const handle = await open(file, 'r').catch(() => null);
  if (!handle) return false;
  try {
    const head = Buffer.alloc(SQLITE_HEADER.length);
    const { bytesRead } = await handle.read(head, 0, head.length, 0);
    return bytesRead === head.length && head.equals(SQLITE_HEADER);
  } finally {
    await handle.close();
  }
}

/** Throws a WorkbenchError naming the flag and the folder or input at fault; nothing is written. */
export async function checkOutputs(spec: PreflightSpec): Promise<void> {
  const inputs: Array<{ flag: string; file: string; real: string }> = [];
  for (const i of spec.inputs) {
    if (!i.file) continue;
    const real = await resolvedInput(i.file);
    if (real) inputs.push({ flag: i.flag, file: i.file, real });
  }
  const dirs: Array<{ flag: string; dir: string; real: string }> = [];
  for (const d of spec.inputDirs ?? []) {
    if (!d.file) continue;
    const real = await resolvedInput(d.file);
    if (real) dirs.push({ flag: d.flag, dir: d.file, real });
  }
  const seen = new Map<string, string>();
  for (const o of spec.outputs) {
    if (!o.file) continue;
    const real = await resolvedOutput(o.flag, o.file);
    const input = inputs.find((i) => i.real === real);
    if (input) {
      throw new WorkbenchError(
        'BAD_OPTION',
        `${o.file} is the ${input.flag} input (${input.file}): writing it would destroy it; name another file`,
        o.flag,
      );
    }
    const dir = dirs.find((d) => d.real === real || inside(d.real, real));
    if (dir && (DATABASE_NAME.test(real) || (await isSqliteFile(real)))) {
      throw new WorkbenchError(
        'BAD_OPTION',
        `${o.file} is a database file inside ${dir.flag} ${dir.dir}, whose databases are only read: write it elsewhere`,
        o.flag,
      );
    }
    const other = seen.get(real);
    if (other)
      throw new WorkbenchError(
        'BAD_OPTION',
        `${o.file} is also the file of ${other}: give each output its own file`,
        o.flag,
      );
    seen.set(real, o.flag);
    await checkWritable(o.flag, o.file);
  }
}

/** `{ '--out': file, ... }` as the flags and files of a PreflightSpec (an absent file is not checked). */
export function pathFlags(files: Record<string, string | null | undefined>): PathFlag[] {
  return Object.entries(files).map(([flag, file]) => ({ flag, file }));
}

/**
 * `checkOutputs` for a command that reads a dataset: `spec`'s files, then --gold and --dataset,
 * and every file under --db-root.
 */
export function checkOutputsWithDataset(
  dataset: { gold: string | null | undefined; dataset: string | null | undefined; dbRoot: string | null | undefined },
  spec: PreflightSpec,
): Promise<void> {
  return checkOutputs({
    outputs: spec.outputs,
    inputs: [...spec.inputs, ...pathFlags({ '--gold': dataset.gold, '--dataset': dataset.dataset })],
    inputDirs: [...(spec.inputDirs ?? []), { flag: '--db-root', file: dataset.dbRoot }],
  });
}
