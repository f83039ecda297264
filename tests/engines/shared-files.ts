/**
 * Real files from ../shared/data for the engines' browser tests, fetched through the Vite dev
 * server (`/@fs/<absolute path>`, allowed in vite.config.ts); the folder's path comes from the
 * config through `provide`.
 */
import { inject } from 'vitest';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Absolute path of ../shared/data. */
    sharedDataDir: string;
  }
}

export function sharedUrl(relative: string): string {
  return `/@fs${inject('sharedDataDir')}/${relative}`;
}

/** A file under ../shared/data; fails with a message naming the folder when it is absent. */
export async function sharedFile(relative: string): Promise<File> {
  const res = await fetch(sharedUrl(relative));
  if (!res.ok) {
    throw new Error(
      `../shared/data is missing or unreadable: ${inject('sharedDataDir')}/${relative} (HTTP ${res.status}); see ../shared/data/README.md`,
    );
  }
  return new File([await res.blob()], relative.split('/').pop()!);
}
