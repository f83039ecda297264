/**
 * Cleanup that must run however the process ends: on SIGINT / SIGTERM (Ctrl-C, `kill`, a
 * Slurm time limit) and on exit. Each task is synchronous (a signal leaves no time to await),
 * runs once, and the process then dies of the same signal (exit code 128 + n). Used for the
 * temporary files of atomic writes and the folder a `--db-root` zip is inflated into.
 */
const tasks = new Set<() => void>();
let installed = false;

function runAll(): void {
  for (const task of [...tasks]) {
    tasks.delete(task);
    try {
      task();
    } catch {
      // best effort: the other tasks still run
    }
  }
}

function install(): void {
  if (installed) return;
  installed = true;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      runAll();
      process.kill(process.pid, signal);
    });
  }
  process.once('exit', runAll);
}

/** Registers `task`; the returned function unregisters it (call it once the cleanup ran normally). */
export function onTermination(task: () => void): () => void {
  install();
  tasks.add(task);
  return () => void tasks.delete(task);
}
