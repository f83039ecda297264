/**
 * A truncated SQLite file (a download or copy cut short) keeps a valid header, so the header
 * check passes and the damage would only show as "database disk image is malformed" on some
 * queries later. Its header also says how big the file is: page size (bytes 16-17, 1 meaning
 * 65536) times the page count (bytes 28-31, valid when the "version-valid-for" number at 92
 * equals the change counter at 24). SQLite files are always whole pages.
 */
import { WorkbenchError } from '../../core/errors.ts';

export function checkSqliteSize(head: Uint8Array, size: number, path: string, dbId: string): void {
  if (head.length < 100) return; // the header check reports files this short
  const view = new DataView(head.buffer, head.byteOffset, head.byteLength);
  const raw = view.getUint16(16);
  const pageSize = raw === 1 ? 65536 : raw;
  if (pageSize < 512 || (pageSize & (pageSize - 1)) !== 0) {
    throw new WorkbenchError(
      'BAD_DATABASE',
      `damaged SQLite header (page size ${raw}): replace it with an intact ${dbId}.sqlite and import again`,
      path,
    );
  }
  const pages = view.getUint32(28);
  const headerValid = pages > 0 && view.getUint32(92) === view.getUint32(24);
  const expected = headerValid ? pages * pageSize : null;
  if (size % pageSize !== 0 || (expected !== null && size < expected)) {
    throw new WorkbenchError(
      'BAD_DATABASE',
      `truncated: the file has ${size} bytes, but ${expected !== null ? `its header says ${pages} pages of ${pageSize} bytes (${expected} bytes)` : `SQLite files are whole pages of ${pageSize} bytes`}. ` +
        `The download or copy was cut short: replace it with the complete ${dbId}.sqlite and import again`,
      path,
    );
  }
}
