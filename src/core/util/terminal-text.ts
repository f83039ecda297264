/**
 * Text for a terminal: the one escaping of every string the CLI prints (src/cli/terminal.ts
 * routes stdout and stderr through `terminalText`), so that a run name, a file name, a db_id
 * or an error message quoting an input cannot carry a terminal escape sequence (ESC [ ... to
 * clear the screen or move the cursor, OSC ESC ] ... BEL to set the title or a link) or any
 * other control character to the terminal. A control character is written as its escape in
 * JavaScript's spelling: `\x1b`, `\x07`, `\x9b`; `\t`, `\n` and `\r` as those. A backslash
 * stays as it is (Windows paths are printed as they are), so the escape shows what was there
 * but is not a reversible encoding.
 */

/** C0 controls but tab and line feed, DEL, and the C1 controls (U+0080-U+009F, CSI U+009B among them). */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const IN_TEXT = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;
/** Every C0 control, DEL and every C1 control: a name holds no tab or line break either. */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const IN_NAME = /[\u0000-\u001f\u007f-\u009f]/g;

function escapeOne(c: string): string {
  if (c === '\t') return '\\t';
  if (c === '\n') return '\\n';
  if (c === '\r') return '\\r';
  return `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`;
}

/** Whole output (lines, tables): control characters escaped, tabs and line breaks kept. */
export function terminalText(text: string): string {
  return text.replace(IN_TEXT, escapeOne);
}

/**
 * One name inside a line or a table cell (a file name, a run name): every control character
 * escaped, tabs and line breaks too, so the name can neither forge a line nor shift a column.
 */
export function terminalName(name: string): string {
  return name.replace(IN_NAME, escapeOne);
}
