/** Saves text as a file through a temporary object URL (no server involved). */
export function downloadText(fileName: string, text: string, mime: string): void {
  downloadBlob(fileName, new Blob([text], { type: mime }));
}

/** Text gathered before it becomes a Blob part (the browser keeps Blob data outside the JS heap, and may page it to disk). */
const PART_CHARS = 4 * 1024 * 1024;

/**
 * A Blob from text parts (e.g. core/runfile/export.ts's `runFileJsonParts`), never one string: the
 * parts are turned into Blob parts every few MB, and the page gets a turn between them, so a
 * 500,000-sample export neither builds a 300 MB string nor blocks the page while it is written.
 */
async function blobFromParts(parts: Iterable<string>, mime: string): Promise<Blob> {
  const blobs: Blob[] = [];
  let pending: string[] = [];
  let chars = 0;
  for (const part of parts) {
    pending.push(part);
    chars += part.length;
    if (chars >= PART_CHARS) {
      blobs.push(new Blob(pending));
      pending = [];
      chars = 0;
      await new Promise((resolve) => setTimeout(resolve, 0));
    }
  }
  if (pending.length > 0) blobs.push(new Blob(pending));
  return new Blob(blobs, { type: mime });
}

/** Saves text parts as a file (see blobFromParts). */
export async function downloadParts(fileName: string, parts: Iterable<string>, mime: string): Promise<void> {
  downloadBlob(fileName, await blobFromParts(parts, mime));
}

/** Saves a Blob (e.g. a Parquet export built from parts) as a file. */
export function downloadBlob(fileName: string, blob: Blob): void {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = fileName;
  a.rel = 'noopener';
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** A file name from a run name: letters, digits, dot, dash and underscore only. */
export function safeFileName(name: string): string {
  return (
    name
      .replace(/[^\w.-]+/g, '_')
      .replace(/^_+|_+$/g, '')
      .slice(0, 80) || 'run'
  );
}
