/**
 * `npx tsx bench/cache-store.ts [ENTRIES] [LOOKUPS]`: the CLI's verdict cache store
 * (src/adapters/node/verdict-cache-file.ts) at its bound. Fills a fresh folder with ENTRIES
 * (default 200,000) verdicts whose keys are as long as real ones (two SQL texts of ~200
 * characters), then, in a fresh process, what a fully cached run of LOOKUPS (default 500) items
 * costs the store: open (key checked), one lookup of every key (MACs checked, last uses
 * written), the end-of-run save. Prints the times and the process's peak RSS, with the RSS of
 * the same process before it opened the store.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CACHE_FILE, openFileVerdictCache } from '../src/adapters/node/verdict-cache-file.ts';
import type { CachedVerdict } from '../src/core/run/verdict-cache.ts';

const sql = (i: number, side: string) =>
  `SELECT T1.name, count(T2.id) AS n_${side} FROM superhero AS T1 INNER JOIN hero_power AS T2 ON T1.id = T2.hero_id WHERE T1.height_cm > ${i % 997} AND T1.weight_kg < ${i} GROUP BY T1.name ORDER BY n_${side} DESC LIMIT 5`;
const key = (i: number) =>
  JSON.stringify([1, 'sql.js 1.17.0', '3.54.1', 30000, false, true, 'ab'.repeat(32), sql(i, 'gold'), sql(i, 'pred')]);
const verdict = (i: number): CachedVerdict => ({
  status: 'ok',
  ex: (i % 2) as 0 | 1,
  softF1: (i % 2) as 0 | 1,
  error: null,
  predRowCount: 5,
  goldRowCount: 5,
  elapsedMs: 1.25,
  resultKey: (i * 2654435761).toString(16).padStart(16, '0'),
});
const rssMiB = () => process.memoryUsage().rss / 2 ** 20;
const peakMiB = () => process.resourceUsage().maxRSS / 1024;

const [mode, ...rest] = process.argv.slice(2);
if (mode === '--lookup') {
  const [dir, entries, lookups] = [rest[0]!, Number(rest[1]), Number(rest[2])];
  const before = rssMiB();
  const t0 = performance.now();
  const store = await openFileVerdictCache(dir, { warn: (m) => console.error(m) });
  const t1 = performance.now();
  const wanted = Array.from({ length: lookups }, (_, j) => key(Math.floor((j * entries) / lookups)));
  const got = await store.get(wanted);
  const t2 = performance.now();
  await store.save();
  const t3 = performance.now();
  if (got.some((v) => v === undefined)) throw new Error('a lookup missed');
  console.log(
    `fully cached lookup of ${lookups} keys in ${entries} entries: open ${(t1 - t0).toFixed(1)} ms, lookups ${(t2 - t1).toFixed(1)} ms, save ${(t3 - t2).toFixed(1)} ms, total ${(t3 - t0).toFixed(1)} ms; RSS before ${before.toFixed(0)} MiB, peak ${peakMiB().toFixed(0)} MiB`,
  );
} else {
  const entries = Number(mode ?? 200_000);
  const lookups = Number(rest[0] ?? 500);
  const dir = mkdtempSync(path.join(tmpdir(), 'wb-cache-bench-'));
  const t0 = performance.now();
  const store = await openFileVerdictCache(dir, { warn: (m) => console.error(m) });
  for (let from = 0; from < entries; from += 10_000) {
    const batch: Array<[string, CachedVerdict]> = [];
    for (let i = from; i < Math.min(entries, from + 10_000); i++) batch.push([key(i), verdict(i)]);
    await store.put(batch);
  }
  await store.save();
  console.log(
    `filled ${store.entries} entries in ${((performance.now() - t0) / 1000).toFixed(1)} s: ${(statSync(path.join(dir, CACHE_FILE)).size / 2 ** 20).toFixed(1)} MiB (${dir})`,
  );
  for (let run = 0; run < 3; run++) {
    const child = spawnSync(
      process.execPath,
      ['--import', 'tsx', fileURLToPath(import.meta.url), '--lookup', dir, String(entries), String(lookups)],
      { encoding: 'utf8' },
    );
    process.stdout.write(child.stdout + child.stderr);
  }
}
