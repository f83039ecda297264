/**
 * Real benchmark files for the browser tests, fetched from ../shared/data through the Vite dev
 * server (`/@fs/<absolute path>`, allowed by `server.fs.allow` in vite.config.ts). The folder's
 * absolute path comes from the config through `provide`.
 */
import { inject } from 'vitest';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Absolute path of ../shared/data. */
    sharedDataDir: string;
  }
}

/** A file under ../shared/data as a Blob; fails with a message naming the folder when it is absent. */
export async function sharedBlob(relative: string): Promise<Blob> {
  const abs = `${inject('sharedDataDir')}/${relative}`;
  const res = await fetch(`/@fs${abs}`);
  if (!res.ok)
    throw new Error(
      `../shared/data is missing or unreadable: ${abs} (HTTP ${res.status}). Browser tests read real BIRD data from there.`,
    );
  return res.blob();
}

export async function sharedText(relative: string): Promise<string> {
  return (await sharedBlob(relative)).text();
}

export const BIRD_DBS = ['student_club', 'superhero', 'toxicology'] as const;

/** The BIRD mini-dev download as a user would pick it: questions, gold, the three databases. */
export async function birdMiniDevFiles(): Promise<{ path: string; file: Blob }[]> {
  const files = [
    { path: 'minidev/mini_dev_sqlite.json', file: await sharedBlob('bird/minidev/mini_dev_sqlite.json') },
    { path: 'minidev/mini_dev_sqlite_gold.sql', file: await sharedBlob('bird/minidev/mini_dev_sqlite_gold.sql') },
    { path: 'minidev/dev_tables.json', file: await sharedBlob('bird/minidev/dev_tables.json') },
  ];
  for (const db of BIRD_DBS) {
    files.push({
      path: `minidev/dev_databases/${db}/${db}.sqlite`,
      file: await sharedBlob(`bird/databases/${db}/${db}.sqlite`),
    });
  }
  return files;
}

/** Spider dev with a few of its databases, laid out as in the Spider download. */
export async function spiderFiles(dbs: readonly string[]): Promise<{ path: string; file: Blob }[]> {
  const files = [
    { path: 'spider/dev.json', file: await sharedBlob('spider/dev.json') },
    { path: 'spider/dev_gold.sql', file: await sharedBlob('spider/dev_gold.sql') },
    { path: 'spider/tables.json', file: await sharedBlob('spider/tables.json') },
  ];
  for (const db of dbs)
    files.push({ path: `spider/database/${db}/${db}.sqlite`, file: await sharedBlob(`spider/${db}/${db}.sqlite`) });
  return files;
}
