/**
 * A text input read line by line from a stream, never whole: a file larger than one JavaScript
 * string can hold (a batch run's output) is read in chunks. Strict UTF-8 as readText
 * (tabular-input.ts): UTF-16/32 is named from its first bytes, an invalid byte names its line; a
 * byte-order mark is the line reader's business (it comes first in the first line).
 */
import { createReadStream } from 'node:fs';
import path from 'node:path';
import { decodeUtf8Chunk, guessEncoding, utf8StreamDecoder } from '../../core/util/utf8-text.ts';
import { LineSplitter } from '../../core/util/line-splitter.ts';
import { WorkbenchError, isWorkbenchError } from '../../core/errors.ts';

/** Calls `onLine` with each line of `file` (without its `\n` or `\r\n`); `flag` names the input in errors. */
export async function forEachLine(
  flag: string,
  file: string,
  onLine: (line: string) => void,
  opts: { chunkBytes?: number } = {},
): Promise<void> {
  const name = path.basename(file);
  const decoder = utf8StreamDecoder();
  const lines = new LineSplitter(onLine);
  let first = true;
  try {
    for await (const chunk of createReadStream(file, { highWaterMark: opts.chunkBytes ?? 1 << 20 })) {
      const bytes = chunk as Buffer;
      if (first) {
        first = false;
        const other = guessEncoding(bytes);
        if (other)
          throw new WorkbenchError('BAD_FORMAT', `${name} is ${other} text, not UTF-8: save it as UTF-8 and try again`);
      }
      lines.push(decodeUtf8Chunk(decoder, bytes, name, lines.count, true));
    }
    lines.push(decodeUtf8Chunk(decoder, new Uint8Array(), name, lines.count, false));
    lines.end();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new WorkbenchError('MISSING_FILE', `file not found: ${file}`, flag);
    if (code === 'EISDIR') throw new WorkbenchError('BAD_OPTION', `${file} is a directory; name a file`, flag);
    if (isWorkbenchError(err)) throw new WorkbenchError(err.code, err.message, flag);
    throw err;
  }
}
