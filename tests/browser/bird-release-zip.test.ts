/**
 * BIRD's release zip as downloaded, in the built app (headless Chromium): a dev.zip in BIRD's
 * layout (dev_20240627/dev.json, dev_gold.sql, dev_tables.json and dev_databases.zip DEFLATED
 * inside, holding dev_databases/<db>/<db>.sqlite with their description CSVs, plus __MACOSX,
 * .DS_Store and AppleDouble junk) is built by the test from the three BIRD databases and the dev
 * files in ../shared/data/bird, imported through the file input, and gives the same dataset
 * (sha256 per database) as importing the same files as a folder. The peak resident memory of
 * the browser's processes during the zip import is measured from /proc and printed.
 */
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { BlobReader, BlobWriter, TextReader, Uint8ArrayReader, ZipWriter } from '@zip.js/zip.js';
import type { Browser, CDPSession, Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { sharedData } from '../helpers/shared-data.ts';
import { browserSkipReason, suiteTitle, type PageWatch, type StaticServer } from './harness.ts';
import { closeAppAfter, openApp } from './workbench-helpers.ts';

const DBS = ['student_club', 'superhero', 'toxicology'];
const DEV_FILES = ['dev.json', 'dev_gold.sql', 'dev_tables.json'];
const work = mkdtempSync(path.join(tmpdir(), 'wb-bird-zip-'));
const sha = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');

function dbFiles(db: string): string[] {
  const dir = sharedData('bird', 'databases', db);
  const desc = path.join(dir, 'database_description');
  return [path.join(dir, `${db}.sqlite`), ...readdirSync(desc).map((f) => path.join(desc, f))];
}

/** The release layout unzipped: dev_20240627/{dev.json, dev_gold.sql, dev_tables.json, dev_databases/<db>/...}. */
function releaseFolder(): string {
  const root = path.join(work, 'folder', 'dev_20240627');
  for (const f of DEV_FILES) {
    mkdirSync(root, { recursive: true });
    copyFileSync(sharedData('bird', 'dev', f), path.join(root, f));
  }
  for (const db of DBS) {
    for (const f of dbFiles(db)) {
      const rel = f.includes('database_description')
        ? path.join(db, 'database_description', path.basename(f))
        : path.join(db, path.basename(f));
      mkdirSync(path.dirname(path.join(root, 'dev_databases', rel)), { recursive: true });
      copyFileSync(f, path.join(root, 'dev_databases', rel));
    }
  }
  return path.join(work, 'folder');
}

async function releaseZip(): Promise<string> {
  const inner = new ZipWriter(new BlobWriter('application/zip'), { useWebWorkers: false, level: 6 });
  for (const db of DBS) {
    await inner.add(`dev_databases/${db}/`, undefined, { directory: true });
    for (const f of dbFiles(db)) {
      const rel = f.includes('database_description')
        ? `${db}/database_description/${path.basename(f)}`
        : `${db}/${path.basename(f)}`;
      await inner.add(`dev_databases/${rel}`, new Uint8ArrayReader(readFileSync(f)));
    }
    await inner.add(`__MACOSX/dev_databases/${db}/._${db}.sqlite`, new TextReader('AppleDouble'));
  }
  await inner.add('dev_databases/.DS_Store', new TextReader('junk'));
  const innerBlob = await inner.close();
  const outer = new ZipWriter(new BlobWriter('application/zip'), { useWebWorkers: false, level: 6 });
  for (const f of DEV_FILES)
    await outer.add(`dev_20240627/${f}`, new Uint8ArrayReader(readFileSync(sharedData('bird', 'dev', f))));
  await outer.add('dev_20240627/dev_databases.zip', new BlobReader(innerBlob), { level: 6 }); // deflated, as BIRD ships it
  await outer.add('__MACOSX/dev_20240627/._dev.json', new TextReader('AppleDouble'));
  const file = path.join(work, 'dev.zip');
  writeFileSync(file, new Uint8Array(await (await outer.close()).arrayBuffer()));
  return file;
}

/** Resident memory (bytes) of every process of this browser, from /proc (Linux). */
async function browserRss(cdp: CDPSession): Promise<number> {
  const { processInfo } = (await cdp.send('SystemInfo.getProcessInfo')) as { processInfo: Array<{ id: number }> };
  let total = 0;
  for (const { id } of processInfo) {
    try {
      const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${id}/status`, 'utf8'));
      if (m) total += Number(m[1]) * 1024;
    } catch {
      // the process ended meanwhile
    }
  }
  return total;
}

async function importThrough(
  page: Page,
  input: 'import-folder' | 'import-files',
  files: string | string[],
  name: string,
  /** The dataset stored before with the same files, which the import's note names. */
  twin?: string,
): Promise<Record<string, string>> {
  await page.getByTestId('nav-datasets').click();
  await page.getByTestId(input).setInputFiles(files);
  await page.getByTestId('import-review').waitFor();
  await page.locator('input[name="kind"][value="bird"]').check();
  await page.getByTestId('import-name').fill(name);
  await page.getByTestId('import-start').click();
  const outcome = page.locator('[data-testid="import-done"], [data-testid="import-error"]');
  await outcome.first().waitFor({ timeout: 120_000 });
  expect((await outcome.first().textContent())?.trim()).toBe(
    `Imported "${name}": 1,534 questions, 3 databases.` +
      (twin ? ` It has the same files as "${twin}"; delete one of them if you need only one.` : ''),
  );
  const card = page.getByTestId('dataset-card');
  await card.getByTestId('db-table').waitFor();
  const out: Record<string, string> = {};
  for (const db of DBS) out[db] = (await card.locator(`tr[data-db="${db}"] td.sha`).textContent())!.trim();
  return out;
}

describe.skipIf(browserSkipReason())(suiteTitle("BIRD's release zip with the databases zip deflated inside"), () => {
  let server: StaticServer;
  let browser: Browser;
  let page: Page;
  let watch: PageWatch;
  let cdp: CDPSession;

  beforeAll(async () => {
    ({ server, browser, page, watch } = await openApp());
    cdp = await browser.newBrowserCDPSession();
    await page.goto(server.url + '#/datasets');
  });
  closeAppAfter(() => ({ server, browser, watch }));

  it('imports dev.zip through the file input to the same databases (sha256) as the folder, and reports the peak memory', async () => {
    const zip = await releaseZip();
    const expected = Object.fromEntries(
      DBS.map((db) => [db, sha(sharedData('bird', 'databases', db, `${db}.sqlite`))]),
    );
    const fromFolder = await importThrough(page, 'import-folder', releaseFolder(), 'BIRD dev (folder)');
    expect(fromFolder).toEqual(expected);

    const baseline = await browserRss(cdp);
    let peak = baseline;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        peak = Math.max(peak, await browserRss(cdp));
        await new Promise((r) => setTimeout(r, 25));
      }
    })();
    const fromZip = await importThrough(page, 'import-files', zip, 'BIRD dev (dev.zip)', 'BIRD dev (folder)');
    sampling = false;
    await sampler;
    expect(fromZip).toEqual(expected);
    const mib = (n: number) => (n / 2 ** 20).toFixed(1);
    const dbBytes = DBS.reduce((n, db) => n + statSync(sharedData('bird', 'databases', db, `${db}.sqlite`)).size, 0);
    console.log(
      `[bird-release-zip] dev.zip ${mib(statSync(zip).size)} MiB (databases ${mib(dbBytes)} MiB): browser RSS before ${mib(baseline)} MiB, peak during the import ${mib(peak)} MiB (+${mib(peak - baseline)} MiB)`,
    );
  });
});
