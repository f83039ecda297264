/**
 * The CLI's terminal output escaped at its two sinks: every string written to stdout or stderr,
 * by any command, passes through `terminalText` (src/core/util/terminal-text.ts), so no
 * user-controlled string (a run name, a file name, a db_id, an error quoting an input) can send
 * an escape sequence or a control character to the terminal. Tables and lines keep their tabs
 * and line breaks; code that prints one name inside a line escapes it further with
 * `terminalName`. Bytes (a Buffer) are written as they are: no command writes any.
 */
import { terminalText } from '../core/util/terminal-text.ts';

export function escapeTerminalOutput(): void {
  for (const stream of [process.stdout, process.stderr]) {
    const write = stream.write.bind(stream) as (chunk: unknown, ...rest: unknown[]) => boolean;
    stream.write = ((chunk: unknown, ...rest: unknown[]) =>
      write(typeof chunk === 'string' ? terminalText(chunk) : chunk, ...rest)) as typeof stream.write;
  }
}
