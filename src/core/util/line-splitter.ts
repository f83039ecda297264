/**
 * Text arriving in pieces (a decoded stream's chunks) cut into lines: each complete line goes to
 * `onLine` without its `\n` or `\r\n` as soon as it is complete, so a reader never holds more than
 * one line and the current piece. Used where a file may be larger than one string can hold.
 */
export class LineSplitter {
  #rest = '';
  #count = 0;

  constructor(private readonly onLine: (line: string) => void) {}

  /** Lines passed on so far. */
  get count(): number {
    return this.#count;
  }

  push(text: string): void {
    const parts = (this.#rest + text).split('\n');
    this.#rest = parts.pop()!;
    for (const l of parts) this.#emit(l);
  }

  /** The last line, when the text does not end with a line break. */
  end(): void {
    if (this.#rest !== '') this.#emit(this.#rest);
    this.#rest = '';
  }

  #emit(line: string): void {
    this.#count++;
    this.onLine(line.endsWith('\r') ? line.slice(0, -1) : line);
  }
}
