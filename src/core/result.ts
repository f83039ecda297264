/**
 * The one shape of an outcome returned rather than thrown: a value, or the error that stands in
 * for it (a judge's answer parsed, a worker's reply across postMessage, a file of user templates
 * checked). Plain data, so it crosses a worker boundary as it is.
 */
export type Result<T, E> = { ok: true; value: T } | { ok: false; error: E };
