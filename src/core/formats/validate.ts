/**
 * Small readers for validating JSON at the boundary: each names the file and the field path
 * (`run.json: samples[12].ex must be 0 or 1, found the string "1"`).
 */
import { WorkbenchError } from '../errors.ts';
import { describeValue, isRecord } from './questions.ts';
import type { ExtractionRule } from '../types.ts';

export const DIFFICULTY_VALUES = [
  'simple',
  'moderate',
  'challenging',
  'easy',
  'medium',
  'hard',
  'extra',
  'unknown',
] as const;
export const STATUS_VALUES = ['ok', 'error', 'timeout', 'missing-db'] as const;
export const RULE_VALUES: readonly ExtractionRule[] = [
  'bird-separator',
  'bird-no-separator',
  'bird-non-string',
  'sql-field',
  'sql-line',
  'fenced-sql-first',
  'fenced-sql-last',
  'answer-tag',
  'solution-tag',
  'select-fallback',
  'none',
];

export type Obj = Record<string, unknown>;

/**
 * Refuses a file of another version than `expected`, naming the file and whether a newer
 * workbench wrote it (`what`: "run file", "series file", "report").
 */
export function checkVersion(found: unknown, expected: number, what: string, fileName: string): void {
  if (found === expected) return;
  const newer = typeof found === 'number' && found > expected;
  throw new WorkbenchError(
    'BAD_FORMAT',
    newer
      ? `${what} version ${found} was written by a newer workbench; this one reads version ${expected}`
      : `version must be ${expected}, found ${JSON.stringify(found)}`,
    fileName,
  );
}

export class JsonReader {
  constructor(readonly file: string) {}

  fail(path: string, expected: string, value: unknown): never {
    throw new WorkbenchError('BAD_FORMAT', `${path} must be ${expected}, found ${describeValue(value)}`, this.file);
  }

  obj(v: unknown, path: string): Obj {
    return isRecord(v) ? v : this.fail(path, 'an object', v);
  }

  arr(v: unknown, path: string): unknown[] {
    return Array.isArray(v) ? v : this.fail(path, 'an array', v);
  }

  str(o: Obj, key: string, path: string): string {
    const v = o[key];
    return typeof v === 'string' ? v : this.fail(`${path}.${key}`, 'a string', v);
  }

  num(o: Obj, key: string, path: string): number {
    const v = o[key];
    return typeof v === 'number' && Number.isFinite(v) ? v : this.fail(`${path}.${key}`, 'a finite number', v);
  }

  int(o: Obj, key: string, path: string, min = 0): number {
    const v = o[key];
    return Number.isSafeInteger(v) && (v as number) >= min
      ? (v as number)
      : this.fail(`${path}.${key}`, `an integer >= ${min}`, v);
  }

  bool(o: Obj, key: string, path: string): boolean {
    const v = o[key];
    return typeof v === 'boolean' ? v : this.fail(`${path}.${key}`, 'true or false', v);
  }

  oneOf<T extends string | number>(o: Obj, key: string, path: string, allowed: readonly T[]): T {
    const v = o[key];
    return (allowed as readonly unknown[]).includes(v)
      ? (v as T)
      : this.fail(`${path}.${key}`, `one of ${allowed.map((a) => JSON.stringify(a)).join(', ')}`, v);
  }

  /** null stays null; anything else must pass `read`. */
  nullable<T>(o: Obj, key: string, path: string, read: (o: Obj, key: string, path: string) => T): T | null {
    return o[key] === null ? null : read.call(this, o, key, path);
  }

  /** Absent (or null) gives undefined; anything else must pass `read`. */
  optional<T>(o: Obj, key: string, path: string, read: (o: Obj, key: string, path: string) => T): T | undefined {
    return o[key] === undefined || o[key] === null ? undefined : read.call(this, o, key, path);
  }
}
