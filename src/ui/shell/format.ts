/** Numbers as the screens write them. */
import { formatFixed2 } from '../../core/eval/report.ts';
import type { SampleRecord } from '../../core/run/types.ts';
import { isUnscored } from '../../core/views/item-query.ts';

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];

export function formatBytes(n: number | null | undefined): string {
  if (n === null || n === undefined || !Number.isFinite(n)) return '–';
  let v = n;
  let u = 0;
  while (v >= 1024 && u < UNITS.length - 1) {
    v /= 1024;
    u++;
  }
  return `${u === 0 ? v : v.toFixed(v < 10 ? 1 : 0)} ${UNITS[u]}`;
}

/** A percentage as the official printout writes it (2 decimals, Python rounding); '–' for none. */
export function pct(x: number | null | undefined): string {
  return typeof x === 'number' ? formatFixed2(x) : '–';
}

export function formatDuration(ms: number | null): string {
  if (ms === null || !Number.isFinite(ms)) return '–';
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${s % 60} s`;
  return `${Math.floor(m / 60)} h ${m % 60} min`;
}

export function formatDate(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

/**
 * A count as toLocaleString('en') writes it (1,034), without Intl for integers: the first Intl
 * number formatting of a page costs 25-100 ms of main thread in Chromium on a loaded 2-core
 * machine (ICU set-up), which a reopened run's explorer paid before its first rows showed.
 */
export function formatCount(n: number): string {
  if (!Number.isSafeInteger(n)) return n.toLocaleString('en');
  const digits = String(Math.abs(n)).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return n < 0 ? `-${digits}` : digits;
}

export const plural = (n: number, one: string, many = one + 's'): string => `${formatCount(n)} ${n === 1 ? one : many}`;

/** A sample's EX verdict as a badge says it (its text and the badge's class). */
export function sampleVerdict(s: SampleRecord): { text: string; cls: 'unscored' | 'right' | 'wrong' } {
  if (isUnscored(s)) return { text: 'not scored', cls: 'unscored' };
  if (s.ex === 1) return { text: 'EX 1', cls: 'right' };
  return { text: s.status === 'ok' ? 'EX 0' : `EX 0 · ${s.status}`, cls: 'wrong' };
}
