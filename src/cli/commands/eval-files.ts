/**
 * `eval --predictions` given several times, or as a folder or a glob: the list of predictions
 * files, and the name each one's outputs get in `--out-dir`.
 */
import type { Stats } from 'node:fs';
import { lstat, readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { WorkbenchError } from '../../core/errors.ts';

/** Files a folder contributes: the formats `--predictions` reads (docs/formats.md). */
const PREDICTION_FILE = /\.(json|jsonl|sql|parquet)$/i;

/** A glob of the last path segment (`*`, `?`, `[abc]`) as a regular expression. */
function segmentRegex(glob: string): RegExp {
  let re = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else if (c === '[') {
      const end = glob.indexOf(']', i + 1);
      if (end < 0) re += '\\[';
      else {
        re += '[' + glob.slice(i + 1, end).replace(/\\/g, '\\\\') + ']';
        i = end;
      }
    } else re += c.replace(/[.+^${}()|\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
}

const isGlob = (s: string) => /[*?[]/.test(s);

/** What a path that is not a regular file is, in words (`a FIFO (named pipe)`). */
function fileKind(st: Stats): string {
  if (st.isDirectory()) return 'a folder';
  if (st.isFIFO()) return 'a FIFO (named pipe)';
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isBlockDevice()) return 'a block device';
  if (st.isSocket()) return 'a socket';
  if (st.isSymbolicLink()) return 'a symbolic link';
  return 'not a regular file';
}

/**
 * A folder's entry (or a glob's match) as a predictions file: a regular file as it is, a
 * symbolic link followed to the regular file it names (the link's path is the file's name in
 * every output). A link that dangles or loops, or anything that is not a regular file, is an
 * error naming it and why: never skipped without a word. Nothing is opened (a FIFO would block).
 */
async function entryFile(file: string, input: string): Promise<string> {
  const own = await lstat(file);
  if (own.isFile()) return file;
  const refuse = (why: string): never => {
    throw new WorkbenchError(
      'BAD_OPTION',
      `${file} (in ${input}) ${why}: remove it from the folder, or name the predictions files one by one`,
      '--predictions',
    );
  };
  if (!own.isSymbolicLink()) refuse(`is ${fileKind(own)}, not a regular file`);
  const target = await stat(file).catch((err: NodeJS.ErrnoException) =>
    refuse(
      err.code === 'ELOOP'
        ? 'is a symbolic link in a loop (it leads back to itself)'
        : err.code === 'ENOENT'
          ? 'is a symbolic link to nothing (its target does not exist)'
          : `is a symbolic link that cannot be followed (${err.code ?? err.message})`,
    ),
  );
  if (!target.isFile()) refuse(`is a symbolic link to ${fileKind(target)}, not to a regular file`);
  return file;
}

/**
 * Every input as a file, in the order given; a folder gives its prediction files (sorted by
 * name, not recursive: its subfolders are left out), a glob of the file name the files it
 * matches (sorted). A symbolic link
 * is followed to a regular file and keeps its own name; one that dangles, loops or leads to
 * something else, and a FIFO, device, socket or folder where a predictions file is named, is
 * an error naming it (never opened, never skipped silently). A file given twice is evaluated
 * once. Nothing matched, or a missing file, is an error naming the input.
 */
export async function expandPredictionInputs(inputs: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  const seen = new Set<string>();
  const add = (f: string) => {
    const key = path.resolve(f);
    if (seen.has(key)) return;
    seen.add(key);
    out.push(f);
  };
  for (const input of inputs) {
    const st = await stat(input).catch(() => null);
    if (st?.isFile()) {
      add(input);
      continue;
    }
    if (st && !st.isDirectory()) {
      throw new WorkbenchError(
        'BAD_OPTION',
        `${input} is ${fileKind(st)}, not a regular file: the workbench reads predictions from files (save the predictions to a file and name it), and does not open it`,
        '--predictions',
      );
    }
    if (!st) {
      const link = await lstat(input).catch(() => null);
      if (link?.isSymbolicLink()) {
        const why = await stat(input).then(
          () => 'cannot be followed',
          (err: NodeJS.ErrnoException) =>
            err.code === 'ELOOP'
              ? 'is in a loop (it leads back to itself)'
              : 'leads to nothing (its target does not exist)',
        );
        throw new WorkbenchError('MISSING_FILE', `${input} is a symbolic link that ${why}`, '--predictions');
      }
    }
    let dir: string;
    let match: RegExp;
    if (st?.isDirectory()) {
      dir = input;
      match = PREDICTION_FILE;
    } else if (isGlob(path.basename(input)) && !isGlob(path.dirname(input))) {
      dir = path.dirname(input);
      match = segmentRegex(path.basename(input));
    } else if (isGlob(input)) {
      throw new WorkbenchError(
        'BAD_OPTION',
        `${input}: only the file name may hold a pattern (*, ?, [...]), e.g. preds/*.json`,
        '--predictions',
      );
    } else {
      throw new WorkbenchError(
        'MISSING_FILE',
        `file not found: ${input} (nor a folder or a pattern of file names)`,
        '--predictions',
      );
    }
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => null);
    if (!entries) throw new WorkbenchError('MISSING_FILE', `no such folder: ${dir} (of ${input})`, '--predictions');
    // A folder's own subfolders are not read (not recursive); anything else that matches is.
    const names = entries
      .filter((e) => match.test(e.name) && !e.isDirectory())
      .map((e) => e.name)
      .sort();
    const files: string[] = [];
    for (const name of names) files.push(await entryFile(path.join(dir, name), input));
    if (files.length === 0) {
      throw new WorkbenchError(
        'MISSING_FILE',
        `${input} holds no predictions file (${st?.isDirectory() ? '.json, .jsonl, .sql or .parquet' : 'nothing matches the pattern'})`,
        '--predictions',
      );
    }
    for (const f of files) add(f);
  }
  return out;
}

/**
 * The name of each file's outputs in --out-dir: its file name without the extension, with its
 * folder's name in front when two inputs share a file name (`TA_output__predict.json`...).
 */
export function outputStems(files: readonly string[]): string[] {
  const base = (f: string) => path.basename(f, path.extname(f));
  const count = new Map<string, number>();
  for (const f of files) count.set(base(f), (count.get(base(f)) ?? 0) + 1);
  const stems = files.map((f) =>
    count.get(base(f))! > 1 ? `${path.basename(path.dirname(path.resolve(f)))}__${base(f)}` : base(f),
  );
  const dup = stems.find((s, i) => stems.indexOf(s) !== i);
  if (dup !== undefined) {
    throw new WorkbenchError(
      'BAD_OPTION',
      `two predictions files would write the same outputs (${dup}) in --out-dir: rename one of them, or evaluate them in two runs`,
      '--predictions',
    );
  }
  return stems;
}
