/**
 * Runs jobs one after another in the order they were asked for: a one-worker pool takes one
 * request at a time, and a newer one waits its turn. A failed job does not stop the ones after it.
 */
export function oneAtATime(): <T>(job: () => Promise<T>) => Promise<T> {
  let queue: Promise<unknown> = Promise.resolve();
  return (job) => {
    const run = queue.then(job);
    queue = run.catch(() => undefined);
    return run;
  };
}
