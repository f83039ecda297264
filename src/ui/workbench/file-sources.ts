/**
 * Files a user hands over, as `{path, file}` pairs for `ImportSource`: from a file input (with
 * `webkitdirectory`, paths are relative to the chosen folder), from a dropped folder (entries
 * walked recursively), or from `showDirectoryPicker`. Only file handles are gathered: nothing
 * is read here, so a 1.4 GiB folder costs no memory until the import worker streams it.
 */
import { isCancellation } from '../../core/errors.ts';
export interface PickedFile {
  path: string;
  file: File;
}

export function fromFileList(list: FileList | readonly File[]): PickedFile[] {
  return Array.from(list, (file) => ({ path: file.webkitRelativePath || file.name, file }));
}

function entryFile(entry: FileSystemFileEntry): Promise<File> {
  return new Promise((resolve, reject) => entry.file(resolve, reject));
}

function readBatch(reader: FileSystemDirectoryReader): Promise<FileSystemEntry[]> {
  return new Promise((resolve, reject) => reader.readEntries(resolve, reject));
}

async function walkEntry(entry: FileSystemEntry, prefix: string, out: PickedFile[]): Promise<void> {
  const path = prefix ? `${prefix}/${entry.name}` : entry.name;
  if (entry.isFile) {
    out.push({ path, file: await entryFile(entry as FileSystemFileEntry) });
  } else if (entry.isDirectory) {
    const reader = (entry as FileSystemDirectoryEntry).createReader();
    // readEntries returns at most ~100 entries per call: read until it returns none.
    for (let batch = await readBatch(reader); batch.length > 0; batch = await readBatch(reader)) {
      for (const child of batch) await walkEntry(child, path, out);
    }
  }
}

/** Files and folders dropped on the page. Entries must be taken synchronously, before any await. */
export async function fromDataTransfer(dt: DataTransfer): Promise<PickedFile[]> {
  const entries: FileSystemEntry[] = [];
  const loose: File[] = [];
  for (const item of Array.from(dt.items)) {
    if (item.kind !== 'file') continue;
    const entry = item.webkitGetAsEntry?.();
    if (entry) entries.push(entry);
    else {
      const f = item.getAsFile();
      if (f) loose.push(f);
    }
  }
  const out: PickedFile[] = loose.map((file) => ({ path: file.name, file }));
  for (const e of entries) await walkEntry(e, '', out);
  return out;
}

interface DirectoryHandleLike {
  kind: 'directory';
  name: string;
  values(): AsyncIterable<{ kind: 'file' | 'directory'; name: string } & ({ getFile(): Promise<File> } | object)>;
}

async function walkHandle(dir: DirectoryHandleLike, prefix: string, out: PickedFile[]): Promise<void> {
  for await (const h of dir.values()) {
    const path = `${prefix}/${h.name}`;
    if (h.kind === 'file' && 'getFile' in h) out.push({ path, file: await h.getFile() });
    else if (h.kind === 'directory') await walkHandle(h as unknown as DirectoryHandleLike, path, out);
  }
}

type PickerWindow = Window & { showDirectoryPicker?: (o?: { mode?: 'read' }) => Promise<DirectoryHandleLike> };

export const hasDirectoryPicker = (): boolean => typeof (window as PickerWindow).showDirectoryPicker === 'function';

/** The folder chosen in the browser's directory picker; null when the user closed it. */
export async function pickDirectory(): Promise<PickedFile[] | null> {
  const picker = (window as PickerWindow).showDirectoryPicker;
  if (!picker) return null;
  try {
    const dir = await picker.call(window, { mode: 'read' });
    const out: PickedFile[] = [];
    await walkHandle(dir, dir.name, out);
    return out;
  } catch (err) {
    if (isCancellation(err)) return null;
    throw err;
  }
}
