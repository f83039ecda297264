/**
 * `<tag>...</tag>` blocks found in linear time. The lazy regex `<tag>[\s\S]*?</tag>` scans to
 * the end of the text from every unclosed `<tag>`, so 1 MB of `<think>` took 25 s; here each
 * opening tag is found once, its closing tag once, and the search stops at the first opening
 * tag without a close (no later one can have one either). Same blocks as the regex: leftmost
 * first, each ending at the first closing tag after it, tags matched case-insensitively.
 */
interface TagBlock {
  /** Index of `<tag>`. */
  start: number;
  /** Index just past `</tag>`. */
  end: number;
  content: string;
}

export function tagBlocks(text: string, tag: string): TagBlock[] {
  const open = new RegExp(`<${tag}>`, 'gi');
  const close = new RegExp(`</${tag}>`, 'gi');
  const out: TagBlock[] = [];
  let from = 0;
  for (;;) {
    open.lastIndex = from;
    const o = open.exec(text);
    if (!o) break;
    close.lastIndex = o.index + o[0].length;
    const c = close.exec(text);
    if (!c) break;
    out.push({ start: o.index, end: c.index + c[0].length, content: text.slice(o.index + o[0].length, c.index) });
    from = c.index + c[0].length;
  }
  return out;
}

/** The text without its complete `<tag>...</tag>` blocks. */
export function withoutTagBlocks(text: string, tag: string): string {
  const blocks = tagBlocks(text, tag);
  if (blocks.length === 0) return text;
  let out = '';
  let at = 0;
  for (const b of blocks) {
    out += text.slice(at, b.start);
    at = b.end;
  }
  return out + text.slice(at);
}
