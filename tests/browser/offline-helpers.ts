/**
 * Steps shared by the offline, traffic and robustness browser tests: a small Spider folder
 * (one database), waiting for the service worker to control the page, and what it cached.
 */
import { cpSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { CDPSession, Page } from 'playwright-core';
import { sharedData } from '../helpers/shared-data.ts';

/** Spider dev with only concert_singer's database (45 questions have it), laid out as in the download. */
export function spiderOneDbFolder(): string {
  const root = path.join(mkdtempSync(path.join(tmpdir(), 'wb-offline-')), 'spider');
  for (const f of ['dev.json', 'dev_gold.sql']) cpSync(sharedData('spider', f), path.join(root, f));
  cpSync(
    sharedData('spider', 'concert_singer', 'concert_singer.sqlite'),
    path.join(root, 'database', 'concert_singer', 'concert_singer.sqlite'),
  );
  return root;
}

/** Spider dev with only pets_1's database (a second small dataset, 16 KiB of database). */
export function spiderPetsFolder(): string {
  const root = path.join(mkdtempSync(path.join(tmpdir(), 'wb-pets-')), 'spider');
  for (const f of ['dev.json', 'dev_gold.sql']) cpSync(sharedData('spider', f), path.join(root, f));
  cpSync(sharedData('spider', 'pets_1', 'pets_1.sqlite'), path.join(root, 'database', 'pets_1', 'pets_1.sqlite'));
  return root;
}

/**
 * A synthetic Spider-format dataset on pets_1 whose questions file is large (each question
 * carries `questionChars` of pseudo-random text, which no compression shrinks much) while its
 * database is 16 KiB: an import whose dataset record, not its database, is what takes room.
 */
export function longQuestionsFolder(count: number, questionChars: number): string {
  const root = path.join(mkdtempSync(path.join(tmpdir(), 'wb-long-')), 'spider');
  let seed = 12345;
  const letter = () => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return 'abcdefghijklmnopqrstuvwxyz '[seed % 27]!;
  };
  const questions = Array.from({ length: count }, (_, i) => ({
    db_id: 'pets_1',
    query: 'SELECT count(*) FROM pets',
    question: `Question ${i}: how many pets are there? ` + Array.from({ length: questionChars }, letter).join(''),
  }));
  mkdirSync(path.join(root, 'database', 'pets_1'), { recursive: true });
  writeFileSync(path.join(root, 'dev.json'), JSON.stringify(questions));
  writeFileSync(path.join(root, 'dev_gold.sql'), questions.map((q) => `${q.query}\t${q.db_id}\n`).join(''));
  cpSync(sharedData('spider', 'pets_1', 'pets_1.sqlite'), path.join(root, 'database', 'pets_1', 'pets_1.sqlite'));
  return root;
}

/**
 * What the browser itself counts for an origin, through the DevTools protocol: usage in bytes,
 * the quota it enforces, and whether a test override of that quota is active. (The page's
 * navigator.storage.estimate() is no use here: Chromium reports usage + 10 GiB as the quota,
 * whatever the real or overridden quota is.)
 */
export async function originStorage(
  cdp: CDPSession,
  origin: string,
): Promise<{ usage: number; quota: number; overrideActive: boolean; indexedDb: number }> {
  const r = (await cdp.send('Storage.getUsageAndQuota', { origin })) as {
    usage: number;
    quota: number;
    overrideActive: boolean;
    usageBreakdown: Array<{ storageType: string; usage: number }>;
  };
  return {
    usage: r.usage,
    quota: r.quota,
    overrideActive: r.overrideActive,
    indexedDb: r.usageBreakdown.find((b) => b.storageType === 'indexeddb')?.usage ?? 0,
  };
}

/** Resolves once the service worker is active, controls the page and has said "ready to work offline". */
export async function waitForServiceWorker(page: Page, timeoutMs = 60_000): Promise<void> {
  await page.waitForFunction(
    async () => {
      const reg = await navigator.serviceWorker.getRegistration();
      return reg?.active?.state === 'activated' && navigator.serviceWorker.controller !== null;
    },
    undefined,
    { timeout: timeoutMs, polling: 100 },
  );
  await page.getByTestId('offline-ready').waitFor({ timeout: timeoutMs });
}

/** What the service worker's caches hold: entries and bytes per cache. */
export async function cachedBytes(
  page: Page,
): Promise<Record<string, { entries: number; bytes: number; urls: string[] }>> {
  return page.evaluate(async () => {
    const out: Record<string, { entries: number; bytes: number; urls: string[] }> = {};
    for (const name of await caches.keys()) {
      const cache = await caches.open(name);
      const reqs = await cache.keys();
      let bytes = 0;
      for (const r of reqs) bytes += (await (await cache.match(r))!.blob()).size;
      out[name] = { entries: reqs.length, bytes, urls: reqs.map((r) => new URL(r.url).pathname) };
    }
    return out;
  });
}

/** Raw counts of the app's IndexedDB stores (what a half-written import would leave behind). */
export async function idbCounts(
  page: Page,
): Promise<{ datasets: number; databases: number; chunks: number; runs: number; chunkShas: string[] }> {
  return page.evaluate(
    () =>
      new Promise((resolve, reject) => {
        const open = indexedDB.open('rlvr-workbench');
        open.onerror = () => reject(open.error);
        open.onsuccess = () => {
          const db = open.result;
          const tx = db.transaction(['datasets', 'databases', 'chunks', 'runs']);
          const out = { datasets: 0, databases: 0, chunks: 0, runs: 0, chunkShas: [] as string[] };
          for (const name of ['datasets', 'databases', 'runs'] as const) {
            const r = tx.objectStore(name).count();
            r.onsuccess = () => (out[name] = r.result);
          }
          const keys = tx.objectStore('chunks').getAllKeys();
          keys.onsuccess = () => {
            out.chunks = keys.result.length;
            out.chunkShas = [...new Set(keys.result.map((k) => String((k as [string, number])[0])))].sort();
          };
          tx.oncomplete = () => {
            db.close();
            resolve(out);
          };
          tx.onerror = () => reject(tx.error);
        };
      }),
  );
}
