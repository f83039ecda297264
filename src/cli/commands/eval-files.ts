/**
 * `eval --predictions` given several times, or as a folder or a glob: the list of predictions
 * files, and the name each one's outputs get in `--out-dir`.
 */
import { readdir, stat } from 'node:fs/promises';
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

/**
 * Every input as a file, in the order given; a folder gives its prediction files (sorted by
 * name, not recursive), a glob of the file name the files it matches (sorted). A file given
 * twice is evaluated once. Nothing matched, or a missing file, is an error naming the input.
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
    const files = entries
      .filter((e) => e.isFile() && match.test(e.name))
      .map((e) => e.name)
      .sort();
    if (files.length === 0) {
      throw new WorkbenchError(
        'MISSING_FILE',
        `${input} holds no predictions file (${st?.isDirectory() ? '.json, .jsonl, .sql or .parquet' : 'nothing matches the pattern'})`,
        '--predictions',
      );
    }
    for (const f of files) add(path.join(dir, f));
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
