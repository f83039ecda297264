/**
 * The step files of `series --completions` (each run, and each poll of `--watch`): a file given
 * by name is read as it is; a folder is walked with its subfolders, hidden files and folders left
 * out, and only regular files with a name docs/series.md lists (SERIES_DUMP_FILE) are steps.
 * Symbolic links inside a folder are never followed, so a walk never leaves the folder and never
 * loops: a link to a folder is not entered, a link to a file in the folder is not read again (the
 * file is read as itself), a link to a file outside the folder is refused; each is named in a
 * note. Anything else with a step file's name (a FIFO, a socket, a device) is refused by name
 * too, never opened (a FIFO would block the read).
 */
import { lstat, readdir, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { SERIES_DUMP_FILE } from '../../core/series/dump-step.ts';
import { WorkbenchError } from '../../core/errors.ts';

interface StepFile {
  /** The path to read. */
  file: string;
  /** The path under the folder given (the step rule reads it), or the file's base name. */
  name: string;
  size: number;
  mtimeMs: number;
}

interface StepFileListing {
  files: StepFile[];
  /** One line per entry left out that a user could take for a step: which, and why. */
  refused: string[];
}

const inside = (root: string, p: string) => p === root || p.startsWith(root + path.sep);

function kindOf(st: {
  isFIFO(): boolean;
  isSocket(): boolean;
  isCharacterDevice(): boolean;
  isBlockDevice(): boolean;
}) {
  if (st.isFIFO()) return 'a FIFO';
  if (st.isSocket()) return 'a socket';
  if (st.isCharacterDevice() || st.isBlockDevice()) return 'a device';
  return 'not a regular file';
}

/**
 * Lists the step files of the inputs. `skip`: absolute paths that are no steps (the command's
 * own outputs, its gold and dataset files) even when they sit in a folder it reads.
 */
export async function listStepFiles(
  inputs: readonly string[],
  skip: ReadonlySet<string> = new Set(),
): Promise<StepFileListing> {
  const files: StepFile[] = [];
  const refused: string[] = [];
  for (const input of inputs) {
    const st = await stat(input).catch(() => null);
    if (!st) throw new WorkbenchError('MISSING_FILE', `file or folder not found: ${input}`, '--completions');
    if (st.isFile()) {
      files.push({ file: input, name: path.basename(input), size: st.size, mtimeMs: st.mtimeMs });
      continue;
    }
    if (!st.isDirectory())
      throw new WorkbenchError(
        'BAD_FORMAT',
        `${kindOf(st)}, not a file or folder: give the step files or the folder that holds them`,
        input,
      );
    const root = await realpath(input);
    const visited = new Set<string>();
    const walk = async (dir: string, rel: string): Promise<void> => {
      // A folder reached twice (a bind mount, a hard-linked folder) is walked once.
      const id = await stat(dir).then((s) => `${s.dev}:${s.ino}`);
      if (visited.has(id)) return;
      visited.add(id);
      const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
      entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      for (const e of entries) {
        if (e.name.startsWith('.')) continue;
        const name = rel ? path.join(rel, e.name) : e.name;
        const file = path.join(input, name);
        if (e.isDirectory()) {
          await walk(path.join(dir, e.name), name);
          continue;
        }
        if (e.isSymbolicLink()) {
          const target = await realpath(file).catch(() => null);
          const targetStat = target === null ? null : await stat(target).catch(() => null);
          if (targetStat?.isDirectory()) {
            refused.push(
              `${file}: a symbolic link to the folder ${target}: links are not followed (never out of the folder, never round in a loop)`,
            );
          } else if (SERIES_DUMP_FILE.test(e.name)) {
            if (!target || !targetStat)
              refused.push(`${file}: a symbolic link to nothing (its target is gone): not read`);
            else if (inside(root, target))
              refused.push(
                `${file}: a symbolic link to ${path.relative(root, target)} in the same folder: not read again (that file is read under its own name)`,
              );
            else
              refused.push(
                `${file}: refused: a symbolic link to ${target}, outside the folder; links are never followed out of a watched folder: copy the file into it, or give it as its own --completions`,
              );
          }
          continue;
        }
        if (!SERIES_DUMP_FILE.test(e.name)) continue;
        if (skip.has(path.resolve(file))) continue;
        const fst = await lstat(file).catch(() => null);
        if (!fst) continue; // deleted since the folder was read
        if (!fst.isFile()) {
          refused.push(`${file}: ${kindOf(fst)}, not a regular file: not read`);
          continue;
        }
        files.push({ file, name, size: fst.size, mtimeMs: fst.mtimeMs });
      }
    };
    await walk(input, '');
  }
  return { files, refused };
}
