/**
 * A folder the app follows, through the File System Access API (Chromium): any
 * `FileSystemDirectoryHandle`, whether chosen with `showDirectoryPicker` or taken from the origin
 * private file system (`navigator.storage.getDirectory()`, as the browser test does). Listing
 * walks subfolders (prime-rl writes `rollouts/step_<N>/eval_rollouts.jsonl`, lm-eval one folder
 * per checkpoint), hidden files and folders left out. The permission to read a stored handle is
 * asked again (`requestPermission`, which needs a click) where the browser did not keep it.
 */
import type { FolderPort } from '../../app/ports.ts';
import { isCancellation, WorkbenchError } from '../../core/errors.ts';

/** How deep the listing goes below the folder (a checkpoint folder holding a step's files is 3 levels at most in the layouts above). */
const MAX_DEPTH = 4;

type Permission = 'granted' | 'denied' | 'prompt';

interface HandleWithPermission {
  queryPermission?(options: { mode: 'read' }): Promise<Permission>;
  requestPermission?(options: { mode: 'read' }): Promise<Permission>;
}

type Entry = FileSystemFileHandle | FileSystemDirectoryHandle;
const entriesOf = (dir: FileSystemDirectoryHandle) => (dir as unknown as { values(): AsyncIterable<Entry> }).values();

async function walk(
  dir: FileSystemDirectoryHandle,
  prefix: string,
  depth: number,
  out: Array<{ name: string; handle: FileSystemFileHandle }>,
): Promise<void> {
  for await (const h of entriesOf(dir)) {
    if (h.name.startsWith('.')) continue;
    const name = prefix ? `${prefix}/${h.name}` : h.name;
    if (h.kind === 'file') out.push({ name, handle: h });
    else if (depth < MAX_DEPTH) await walk(h, name, depth + 1, out);
  }
}

function directoryFolder(handle: FileSystemDirectoryHandle): FolderPort {
  let files = new Map<string, FileSystemFileHandle>();
  return {
    name: handle.name,
    async list() {
      const found: Array<{ name: string; handle: FileSystemFileHandle }> = [];
      await walk(handle, '', 0, found);
      files = new Map(found.map((f) => [f.name, f.handle]));
      const out = [];
      for (const f of found) {
        // A file deleted between the walk and now is simply not listed.
        const file = await f.handle.getFile().catch(() => null);
        if (file) out.push({ name: f.name, size: file.size, lastModified: file.lastModified });
      }
      return out;
    },
    async read(name) {
      const h = files.get(name);
      if (!h)
        throw new WorkbenchError(
          'MISSING_FILE',
          `${name} is no longer in the folder ${handle.name}: it was moved or deleted since the folder was listed; the next check lists the folder again`,
        );
      return h.getFile();
    },
  };
}

/** Whether the app may read the folder now (`prompt`: a click must ask again). */
async function folderPermission(handle: FileSystemDirectoryHandle): Promise<Permission> {
  const h = handle as unknown as HandleWithPermission;
  return h.queryPermission ? h.queryPermission({ mode: 'read' }) : 'granted';
}

/** Asks the browser again (call it from a click). */
async function askFolderPermission(handle: FileSystemDirectoryHandle): Promise<Permission> {
  const h = handle as unknown as HandleWithPermission;
  return h.requestPermission ? h.requestPermission({ mode: 'read' }) : 'granted';
}

type PickerWindow = Window & { showDirectoryPicker?: (o?: { mode?: 'read' }) => Promise<FileSystemDirectoryHandle> };

/** The browser can choose a folder to follow (Chromium's File System Access API). */
const canPickFolder = (): boolean => typeof (window as PickerWindow).showDirectoryPicker === 'function';

/** The folder chosen in the browser's picker; null when the user closed it. */
async function pickFolder(): Promise<FileSystemDirectoryHandle | null> {
  const picker = (window as PickerWindow).showDirectoryPicker;
  if (!picker) return null;
  try {
    return await picker.call(window, { mode: 'read' });
  } catch (err) {
    if (isCancellation(err)) return null;
    throw err;
  }
}

/** What the series screens need of folders, handed in by the composition root. */
export const browserFolders = {
  canPick: canPickFolder,
  pick: pickFolder,
  permission: folderPermission,
  ask: askFolderPermission,
  open: directoryFolder,
};
