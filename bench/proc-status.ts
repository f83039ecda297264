/** Linux process memory for the bench's child probes (rss-probe.ts, hostile-probe.ts). */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** Resident size now (VmRSS) and its peak since the last reset (VmHWM), in KiB. */
export function procStatus(): { rssKiB: number; hwmKiB: number } {
  const s = readFileSync('/proc/self/status', 'utf8');
  const kib = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(s)?.[1] ?? NaN);
  return { rssKiB: kib('VmRSS'), hwmKiB: kib('VmHWM') };
}

/** Resets the peak-RSS counter (`echo 5 > /proc/self/clear_refs`); false where the system does not allow it. */
export function resetPeak(): boolean {
  try {
    writeFileSync('/proc/self/clear_refs', '5');
    return true;
  } catch {
    return false;
  }
}

/** The probe's argument `<root>/<db_id>/<db_id>.sqlite`: the database id and its root folder. */
export function dbArgument(script: string): { file: string; dbId: string; root: string } {
  const file = process.argv[2];
  if (!file) throw new Error(`usage: ${script} <root>/<db_id>/<db_id>.sqlite`);
  return { file, dbId: path.basename(file, '.sqlite'), root: path.dirname(path.dirname(file)) };
}
