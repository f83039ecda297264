/**
 * Picked or dropped files (Blobs) as strict UTF-8 text: the checks and messages are the core's
 * (src/core/util/utf8-text.ts).
 */
import { decodeUtf8Chunk, decodeUtf8File, guessEncoding, utf8StreamDecoder } from '../../core/util/utf8-text.ts';
import { WorkbenchError } from '../../core/errors.ts';
import { LineSplitter } from '../../core/util/line-splitter.ts';

/**
 * Each line of a picked or dropped file, read from its stream (never as one string), strict UTF-8
 * as `decodeUtf8File`: for files that may be larger than one string can hold (batch outputs).
 */
export async function forEachUtf8Line(file: Blob & { name: string }, onLine: (line: string) => void): Promise<void> {
  const head = new Uint8Array(await file.slice(0, 400).arrayBuffer());
  const other = guessEncoding(head);
  if (other)
    throw new WorkbenchError('BAD_FORMAT', `${file.name} is ${other} text, not UTF-8: save it as UTF-8 and try again`);
  const decoder = utf8StreamDecoder();
  const lines = new LineSplitter(onLine);
  const reader = file.stream().getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    lines.push(decodeUtf8Chunk(decoder, value, file.name, lines.count, true));
  }
  lines.push(decodeUtf8Chunk(decoder, new Uint8Array(), file.name, lines.count, false));
  lines.end();
}

/** A picked or dropped file as UTF-8 text (see decodeUtf8File). */
export async function readUtf8File(file: Blob & { name: string }): Promise<string> {
  return decodeUtf8File(new Uint8Array(await file.arrayBuffer()), file.name);
}
