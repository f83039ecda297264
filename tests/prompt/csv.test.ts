import { describe, expect, it } from 'vitest';
import { parseCsv } from '../../src/core/prompt/csv.ts';

describe('parseCsv', () => {
  it.each<[string, string, string[][]]>([
    [
      'splits plain fields and LF lines',
      'a,b\nc,d\n',
      [
        ['a', 'b'],
        ['c', 'd'],
      ],
    ],
    [
      'reads CRLF and bare CR line ends',
      'a,b\r\nc,d\re,f',
      [
        ['a', 'b'],
        ['c', 'd'],
        ['e', 'f'],
      ],
    ],
    [
      'tolerates a missing final newline',
      'a,b\nc,d',
      [
        ['a', 'b'],
        ['c', 'd'],
      ],
    ],
    ['keeps commas inside quotes', '"x, y",z', [['x, y', 'z']]],
    ['reads a doubled quote as a quote', '"say ""hi""",b', [['say "hi"', 'b']]],
    [
      'keeps newlines inside quoted fields',
      'a,"line 1\r\nline 2"\nb,c',
      [
        ['a', 'line 1\r\nline 2'],
        ['b', 'c'],
      ],
    ],
    ['keeps empty fields', 'a,,c,\n', [['a', '', 'c', '']]],
    ['skips blank lines', 'a\n\n\nb\n', [['a'], ['b']]],
    ['keeps a quote in the middle of an unquoted field as text', 'ab"c,d', [['ab"c', 'd']]],
    ['keeps text after a closing quote, as Python does', '"ab" c,d', [['ab c', 'd']]],
    ['reads an empty quoted field', '"",x', [['', 'x']]],
    ['closes an unterminated quote at the end of the text', 'a,"open', [['a', 'open']]],
  ])('%s', (_title, text, rows) => {
    expect(parseCsv(text)).toEqual(rows);
  });
});
