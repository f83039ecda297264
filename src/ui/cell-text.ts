/**
 * How a SQLite value is written in the page. Always plain text: the page puts it in a text
 * node, never in HTML.
 */
export function cellText(v: unknown): string {
  if (v === null || v === undefined) return 'NULL';
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'bigint') return String(v);
  if (v instanceof Uint8Array) {
    const hex = Array.from(v.subarray(0, 16), (b) => b.toString(16).padStart(2, '0')).join('');
    return `x'${hex}${v.length > 16 ? '…' : ''}' (${v.length} bytes)`;
  }
  return String(v);
}

/** Long cell values are cut for the preview table; the full value stays in the title. */
export function shortCellText(v: unknown, max = 80): string {
  const s = cellText(v);
  return s.length > max ? s.slice(0, max - 1) + '…' : s;
}
