/**
 * Text files (questions, gold, predictions, run files) must be UTF-8, as for the official
 * evaluator (Python reads them as UTF-8): a file in another encoding is refused with a message
 * that says which encoding it looks like, instead of being read as replacement characters
 * (`Blob.text()` and a non-fatal TextDecoder would silently do that). A UTF-8 byte-order mark
 * is accepted and dropped.
 */
import { WorkbenchError } from '../errors.ts';

/** A fatal UTF-8 decoder, as the host's `TextDecoder` gives one. */
interface Utf8Decoder {
  decode(bytes: Uint8Array, options?: { stream?: boolean }): string;
}

/**
 * The host's `TextDecoder`: every JavaScript host (browsers, Node, workers) has it; the core's
 * library types (ES2022, no DOM, no Node) do not declare it, so it is declared here, for this
 * module only.
 */
declare const TextDecoder: new (label: 'utf-8', options: { fatal: boolean; ignoreBOM: boolean }) => Utf8Decoder;

/** A fatal UTF-8 decoder for a stream (`decodeUtf8Chunk`); a byte-order mark is left to the caller. */
export function utf8StreamDecoder(): Utf8Decoder {
  return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
}

/** What a non-UTF-8 file most likely is, from its byte-order mark or its NUL bytes. */
export function guessEncoding(bytes: Uint8Array): string | null {
  if (bytes[0] === 0xff && bytes[1] === 0xfe)
    return bytes[2] === 0 && bytes[3] === 0 ? 'UTF-32 (little-endian)' : 'UTF-16 (little-endian)';
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return 'UTF-16 (big-endian)';
  if (bytes[0] === 0 && bytes[1] === 0 && bytes[2] === 0xfe && bytes[3] === 0xff) return 'UTF-32 (big-endian)';
  // ASCII text in UTF-16 without a mark: every other byte is NUL.
  const n = Math.min(bytes.length, 400);
  let evenNul = 0;
  let oddNul = 0;
  for (let i = 0; i < n; i++) {
    if (bytes[i] !== 0) continue;
    if (i % 2) oddNul++;
    else evenNul++;
  }
  if (n >= 4 && oddNul > n / 4 && evenNul === 0) return 'UTF-16 (little-endian)';
  if (n >= 4 && evenNul > n / 4 && oddNul === 0) return 'UTF-16 (big-endian)';
  return null;
}

/** Offset of the first byte that is not valid UTF-8, or -1. */
function firstInvalid(bytes: Uint8Array): number {
  for (let i = 0; i < bytes.length;) {
    const c = bytes[i]!;
    const len = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    if (len === 0 || i + len > bytes.length) return i;
    for (let k = 1; k < len; k++) if ((bytes[i + k]! & 0xc0) !== 0x80) return i;
    i += len;
  }
  return -1;
}

export function decodeUtf8File(bytes: Uint8Array, fileName: string): string {
  // UTF-16 text of ASCII characters is valid UTF-8 (with NUL bytes): look for it first.
  const utf16 = guessEncoding(bytes);
  if (utf16)
    throw new WorkbenchError('BAD_FORMAT', `${fileName} is ${utf16} text, not UTF-8: save it as UTF-8 and try again`);
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch (err) {
    // Larger than one JavaScript string can hold (0x1fffffe8 characters): a size, not an encoding.
    if ((err as { code?: unknown }).code === 'ERR_STRING_TOO_LONG' || err instanceof RangeError)
      throw new WorkbenchError(
        'TOO_LARGE',
        `${fileName} is ${(bytes.length / 2 ** 20).toFixed(1)} MiB, too large to read as one text (at most about 512 MiB): split it into smaller files`,
      );
    const at = firstInvalid(bytes);
    const line = at < 0 ? 1 : bytes.subarray(0, at).reduce((n, b) => n + (b === 10 ? 1 : 0), 1);
    const byte = at < 0 ? '' : `byte 0x${bytes[at]!.toString(16).toUpperCase().padStart(2, '0')} `;
    throw new WorkbenchError(
      'BAD_FORMAT',
      `${fileName} is not UTF-8 text (${byte}at offset ${Math.max(at, 0)}, line ${line}; Latin-1 or Windows-1252?): save it as UTF-8 and try again`,
    );
  }
}

/**
 * One chunk of a UTF-8 stream (`stream`: more follow) with a fatal decoder; an invalid byte is an
 * error naming the file and the line it is near (`linesBefore`: complete lines before the chunk).
 */
export function decodeUtf8Chunk(
  decoder: Utf8Decoder,
  bytes: Uint8Array,
  fileName: string,
  linesBefore: number,
  stream: boolean,
): string {
  try {
    return decoder.decode(bytes, { stream });
  } catch {
    // The line of the first invalid byte of this chunk (the line going on at its start when the
    // bad sequence began in the chunk before).
    const at = firstInvalid(bytes);
    const line = linesBefore + 1 + (at < 0 ? 0 : bytes.subarray(0, at).reduce((n, b) => n + (b === 10 ? 1 : 0), 0));
    throw new WorkbenchError(
      'BAD_FORMAT',
      `${fileName} is not UTF-8 text (line ${line}; Latin-1 or Windows-1252?): save it as UTF-8 and try again`,
    );
  }
}
