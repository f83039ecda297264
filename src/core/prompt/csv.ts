/**
 * A small RFC 4180 CSV reader: comma separated, fields optionally in double quotes ("" is a
 * quote inside), newlines inside quoted fields kept, CRLF / LF / CR line ends, a missing final
 * newline tolerated, blank lines skipped. Quotes in the middle of an unquoted field are kept as
 * text (as Python's csv module does), which BIRD's hand-edited files need.
 */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  let fieldStarted = false;
  const endField = () => {
    row.push(field);
    field = '';
    fieldStarted = false;
  };
  const endRow = () => {
    endField();
    if (!(row.length === 1 && row[0] === '')) rows.push(row);
    row = [];
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"') {
        if (text[i + 1] === '"') {
          field += '"';
          i++;
        } else quoted = false;
      } else field += c;
      continue;
    }
    if (c === '"' && !fieldStarted) {
      quoted = true;
      fieldStarted = true;
    } else if (c === ',') endField();
    else if (c === '\r' || c === '\n') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      endRow();
    } else {
      field += c;
      fieldStarted = true;
    }
  }
  if (field !== '' || row.length > 0 || quoted) endRow();
  return rows;
}
