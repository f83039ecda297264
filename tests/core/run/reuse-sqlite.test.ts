/**
 * Reuse's two readings of SQL checked against SQLite itself (real sql.js, the SQL worker's body
 * in-process): the normalised prediction, which must never join two texts SQLite answers
 * differently, and the allow-list of deterministic functions, against the flags SQLite gives its
 * own functions. And the allow-list over every real BIRD mini-dev gold.
 */
import initSqlJs from 'sql.js';
import { describe, expect, it } from 'vitest';
import { DETERMINISTIC_FUNCTIONS, isNonDeterministic, normalizedSql } from '../../../src/core/run/reuse.ts';
import type { ExecDone } from '../../../workers/sql.api.ts';
import { sqlEngineFixture } from '../../helpers/sql-engine-fixture.ts';
import { readSharedText } from '../../helpers/shared-data.ts';

const fx = sqlEngineFixture('t', "CREATE TABLE t (a INTEGER, b TEXT); INSERT INTO t VALUES (1, 'x'), (2, 'y');", {
  softF1: true,
  previewRows: 0,
});

/** What a prediction's verdict is made of (gold: `SELECT a FROM t`). */
async function verdict(predSql: string): Promise<Partial<ExecDone>> {
  const r = await fx.run(predSql, 'SELECT a FROM t');
  return { status: r.status, ex: r.ex, softF1: r.softF1, error: r.error, predRowCount: r.predRowCount };
}

/**
 * Every character JavaScript's `\s` matches (its trim() removes them all), and the Unicode
 * format and separator characters that look like a space: U+0085, U+180E, U+200B..U+200D,
 * U+2060, U+FEFF; \v and \f among them.
 */
const SPACE_LIKE = (() => {
  const out: string[] = [];
  for (let code = 0; code <= 0xffff; code++) {
    const c = String.fromCharCode(code);
    if (/\s/.test(c)) out.push(c);
  }
  for (const code of [0x85, 0x180e, 0x200b, 0x200c, 0x200d, 0x2060, 0xfeff, 0x0b, 0x0c]) {
    const c = String.fromCharCode(code);
    if (!out.includes(c)) out.push(c);
  }
  return out;
})();
const SQLITE_SPACES = [' ', '\t', '\n', '\f', '\r'];
const hex = (c: string) => `U+${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`;

describe('the normalised prediction (reuse and the verdict cache) against SQLite', () => {
  it('every space-like character, appended and prepended: joined with the clean text only when SQLite answers the same, never when SQLite rejects it', async () => {
    expect(SPACE_LIKE).toEqual(expect.arrayContaining(['\v', '\u00a0', '\u3000', '\u2028', '\ufeff', '\u0085']));
    for (const base of ['SELECT a FROM t', 'SELECT a FROM t WHERE a > 0']) {
      const clean = await verdict(base);
      expect(clean).toMatchObject({ status: 'ok', ex: 1 });
      for (const c of SPACE_LIKE) {
        for (const text of [base + c, c + base, `${c}${base}${c}`]) {
          const got = await verdict(text);
          const same = normalizedSql(text) === normalizedSql(base);
          const label = `${hex(c)} in ${JSON.stringify(text)}`;
          // SQLite's whitespace is the five, and a byte-order mark where a token starts (its
          // tokenizer's CC_BOM): every other character here is a token SQLite rejects.
          const accepted = SQLITE_SPACES.includes(c) || (c === '\ufeff' && text === c + base);
          expect(got.status === 'ok', label).toBe(accepted);
          // Joined only when SQLite answers alike; a rejected text never takes the clean one's key.
          if (same) expect(got, label).toEqual(clean);
          if (!accepted) expect(same, label).toBe(false);
          if (SQLITE_SPACES.includes(c)) expect(same, label).toBe(true);
        }
      }
    }
  });

  it('a trailing U+00A0 after a space is an alias to SQLite (same rows): whichever key it gets, a shared key means the same verdict', async () => {
    const texts = ['SELECT a FROM t \u00a0', 'SELECT a FROM t', 'SELECT a FROM t \u3000 ', 'SELECT a FROM t\u00a0'];
    for (const x of texts)
      for (const y of texts)
        if (normalizedSql(x) === normalizedSql(y)) expect(await verdict(x), `${x} / ${y}`).toEqual(await verdict(y));
  });

  it('600 generated texts and their variants with whitespace around them: equal normal forms always mean equal verdicts', async () => {
    // A seeded generator (xorshift32): the same texts on every run.
    let seed = 0x9e3779b9;
    const next = () => {
      seed ^= seed << 13;
      seed ^= seed >>> 17;
      seed ^= seed << 5;
      return (seed >>> 0) / 0x100000000;
    };
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]!;
    const FRAGMENTS = [
      ' a',
      ' FROM t',
      ' 1',
      "'",
      '"',
      '`',
      '[',
      ']',
      ' --',
      '/*',
      '*/',
      '\n',
      '\t',
      ';',
      ' $x(',
      ')',
      '(',
      ',',
      ' ',
      '\u00a0',
      '\v',
      '\u3000',
      "''",
      ' @y::z',
      ' WHERE a = 1',
      '\r',
      '\f',
      '\ufeff',
      " '$x(')",
    ];
    const SPACES = [...SQLITE_SPACES, '\v', '\u00a0', '\u3000', '\u2028', '\ufeff', '\u200b'];
    const around = () => Array.from({ length: Math.floor(next() * 4) }, () => pick(SPACES)).join('');
    let joined = 0;
    let apart = 0;
    for (let n = 0; n < 600; n++) {
      const text = 'SELECT' + Array.from({ length: Math.floor(next() * 7) }, () => pick(FRAGMENTS)).join('');
      const variant = around() + text + around();
      const label = `${JSON.stringify(text)} / ${JSON.stringify(variant)}`;
      if (normalizedSql(variant) === normalizedSql(text)) {
        joined++;
        expect(await verdict(variant), label).toEqual(await verdict(text));
      } else apart++;
    }
    // Both kinds occur, so the check above is not empty.
    expect(joined).toBeGreaterThan(100);
    expect(apart).toBeGreaterThan(100);
  });

  it('never joins a text with its `;`-ended twin: SQLite and Python answer them differently', async () => {
    const pairs = [
      ['SELECT a FROM', 'SELECT a FROM;'],
      ['SELECT a FROM t; -- c\n', 'SELECT a FROM t; -- c\n;'],
      ['SELECT a FROM t; /* c */', 'SELECT a FROM t; /* c */;'],
      ['SELECT a FROM t;', 'SELECT a FROM t;;'],
    ];
    for (const [x, y] of pairs) {
      expect(await verdict(x!)).not.toEqual(await verdict(y!));
      expect(normalizedSql(x!)).not.toBe(normalizedSql(y!));
    }
  });
});

describe("the allow-list of deterministic functions against SQLite's own", () => {
  it("allows no built-in scalar function that SQLite registers without its deterministic flag (random(), changes(), sqlite_version() ...), and refuses SQLite's date and time functions though SQLite flags them", async () => {
    const SQL = await initSqlJs();
    const db = new SQL.Database();
    try {
      const rows = db.exec("SELECT name, flags FROM pragma_function_list WHERE builtin = 1 AND type = 's'")[0]!.values;
      const deterministic = new Map<string, boolean>();
      for (const [name, flags] of rows) {
        const n = String(name);
        deterministic.set(n, (deterministic.get(n) ?? false) || (Number(flags) & 0x800) !== 0);
      }
      const volatile = [...deterministic].filter(([, d]) => !d).map(([n]) => n);
      expect(volatile).toEqual(expect.arrayContaining(['random', 'randomblob', 'changes', 'last_insert_rowid']));
      for (const name of volatile) {
        expect(DETERMINISTIC_FUNCTIONS.has(name), name).toBe(false);
        expect(isNonDeterministic(`SELECT ${name}()`), name).toBe(true);
      }
      for (const name of ['date', 'time', 'datetime', 'julianday', 'unixepoch', 'strftime', 'timediff']) {
        expect(deterministic.get(name), name).toBe(true);
        expect(isNonDeterministic(`SELECT ${name}('%S')`), name).toBe(true);
        expect(isNonDeterministic(`SELECT ${name}(a, b) FROM t`), name).toBe(true);
      }
      // Every allow-listed scalar this SQLite defines is one it flags deterministic itself.
      for (const name of DETERMINISTIC_FUNCTIONS)
        if (deterministic.has(name)) expect(deterministic.get(name), name).toBe(true);
    } finally {
      db.close();
    }
  });

  it('keeps the real BIRD mini-dev golds reusable: every one of the 500 but those that call a date or time function', () => {
    const golds = readSharedText('bird', 'minidev', 'mini_dev_sqlite_gold.sql')
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => l.split('\t')[0]!);
    expect(golds).toHaveLength(500);
    const refused = golds.filter((g) => isNonDeterministic(g));
    const clock = /\b(strftime|date|time|datetime|julianday|unixepoch|timediff)\s*\(/i;
    expect(refused.filter((g) => !clock.test(g))).toEqual([]);
    expect(golds.filter((g) => clock.test(g) && !isNonDeterministic(g))).toEqual([]);
    const share = 1 - refused.length / golds.length;
    console.log(
      `mini-dev golds reusable: ${golds.length - refused.length} of ${golds.length} (${(100 * share).toFixed(1)} %)`,
    );
    expect(share).toBeGreaterThan(0.88);
  });
});
