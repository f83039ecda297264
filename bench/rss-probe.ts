/**
 * Child process of the benchmark (`peak_worker_rss_mib_per_db_mib`): one SQL worker thread
 * holding one large database, so that this process's memory is the worker's plus a fixed,
 * idle main thread. Prints one JSON line.
 *
 * Method: the SQL worker is started and initialised (sql.js loaded); the peak-RSS counter is
 * reset (`echo 5 > /proc/self/clear_refs`, Linux) and the resident size read (VmRSS). Then the
 * file is read by the main thread exactly as the CLI's pool reads it (folderDbSource), its bytes
 * are transferred to the worker (loadDb: open, table count, quick_check), and one full scan runs
 * in the worker. The result is VmHWM (peak resident size since the reset) minus that baseline.
 */
import { transfer } from 'comlink';
import { folderDbSource, spawnNodeSqlWorker } from '../src/adapters/node/sql-worker-host.ts';
import { dbArgument, procStatus as status, resetPeak as clearPeak } from './proc-status.ts';

const { dbId, root } = dbArgument('rss-probe.ts');

const worker = spawnNodeSqlWorker();
try {
  await worker.api.init({ cacheBytes: 8 * 1024 ** 3 });
  await new Promise((r) => setTimeout(r, 300));
  (globalThis as { gc?: () => void }).gc?.();
  const resetPeak = clearPeak();
  const base = status();
  const t0 = performance.now();
  const { bytes } = await folderDbSource(root).load(dbId);
  const t1 = performance.now();
  const sizeBytes = bytes.length;
  await worker.api.loadDb(dbId, transfer(bytes, [bytes.buffer]));
  const t2 = performance.now();
  const scan = await worker.api.query(dbId, 'SELECT count(*), sum(length(pad)), avg(val) FROM facts', 1);
  const t3 = performance.now();
  if ('kind' in scan) throw new Error('the worker dropped the database');
  const after = status();
  process.stdout.write(
    JSON.stringify({
      sizeBytes,
      resetPeak,
      baseRssKiB: base.rssKiB,
      baseHwmKiB: base.hwmKiB,
      peakHwmKiB: after.hwmKiB,
      afterRssKiB: after.rssKiB,
      readMs: t1 - t0,
      openMs: t2 - t1,
      scanMs: t3 - t2,
    }) + '\n',
  );
} finally {
  worker.terminate();
}
