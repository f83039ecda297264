/**
 * The life of a Chart.js chart in a component: create it once its lazily loaded module is
 * there (unless the component went away first), report a failure as a sentence, destroy it on
 * cleanup. Returns the cleanup for a `$effect`.
 */
export function drawLazily(create: () => Promise<{ destroy(): void }>, onError: (message: string) => void): () => void {
  let chart: { destroy(): void } | null = null;
  let cancelled = false;
  create()
    .then((c) => {
      if (cancelled) c.destroy();
      else chart = c;
    })
    .catch((err: unknown) => onError(`The chart could not be drawn: ${(err as Error).message}`));
  return () => {
    cancelled = true;
    chart?.destroy();
  };
}
