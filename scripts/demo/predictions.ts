/**
 * Two predictions files for the demo questions (questions.ts), one SQL per question in order.
 *
 * `MODEL_PREDICTIONS` is what a fair but imperfect model might answer: mostly right, sometimes
 * written differently from the gold query, and wrong in ways worth seeing once (each with a
 * note). `HOSTILE_PREDICTIONS` is the same file with a few items replaced by the things an
 * evaluator has to survive: a reward hack that writes to the database, two statements, a query
 * that never ends, and markup in the SQL.
 */

export interface DemoPrediction {
  sql: string;
  /** Why this prediction is in the demo; not written to the predictions file. */
  note: string;
}

export const MODEL_PREDICTIONS: readonly DemoPrediction[] = [
  /* 0 */ {
    sql: "SELECT COUNT(book_id) FROM books WHERE genre = 'Mystery'",
    note: 'right: COUNT(book_id) equals COUNT(*) here',
  },
  /* 1 */ {
    sql:
      'SELECT books.title, members.name FROM members JOIN loans ON loans.member_id = members.member_id ' +
      'JOIN books ON books.book_id = loans.book_id WHERE loans.return_date IS NULL ORDER BY books.title',
    note: 'right: rows in another order still match, EX compares sets of rows',
  },
  /* 2 */ {
    sql: 'SELECT COUNT(*) FROM books WHERE pub_year <= 1949',
    note: 'right: an equivalent condition',
  },
  /* 3 */ {
    sql:
      'SELECT br.name, SUM(CASE WHEN l.return_date > l.due_date THEN 1 ELSE 0 END) * 100 / COUNT(*) ' +
      'FROM loans AS l JOIN branches AS br ON l.branch_id = br.branch_id GROUP BY br.name',
    note: 'wrong: integer division truncates 21.62 to 21 (the rows for 20 % and 40 % still match, the set does not)',
  },
  /* 4 */ {
    sql: "SELECT name FROM authors WHERE country = 'France'",
    note: 'right: identical to gold',
  },
  /* 5 */ {
    sql: 'SELECT title FROM books WHERE price IS NULL',
    note: 'right: identical to gold',
  },
  /* 6 */ {
    sql: 'SELECT district, name FROM branches WHERE opened_year < 1990',
    note: 'wrong for EX: columns in another order make different rows; Soft-F1 ignores column order and gives 100',
  },
  /* 7 */ {
    sql: 'SELECT COUNT(*) FROM members WHERE email = NULL',
    note: 'wrong: `= NULL` is never true, so the count is 0',
  },
  /* 8 */ {
    sql:
      'SELECT b.title FROM books AS b JOIN authors AS a ON a.author_id = b.author_id ' +
      "WHERE a.name = 'Ines Marchetti'",
    note: 'wrong: the accent was dropped from the name, so no author matches and the result is empty',
  },
  /* 9 */ {
    sql:
      'SELECT b.genre FROM loans AS l JOIN members AS m ON l.member_id = m.member_id ' +
      "JOIN books AS b ON l.book_id = b.book_id WHERE m.tier = 'student'",
    note: 'right: DISTINCT is missing, but EX compares sets, so the repeated genres do not matter',
  },
  /* 10 */ {
    sql: 'SELECT SUM(CASE WHEN return_date IS NULL THEN 1.0 ELSE 0 END) FROM loans',
    note: 'right: 7.0 (REAL) equals 7 (INTEGER), as in Python',
  },
  /* 11 */ {
    sql:
      'SELECT SUM(l.fine) FROM loans AS l JOIN members AS m ON l.member_id = m.member_id ' +
      "JOIN branches AS br ON m.home_branch_id = br.branch_id WHERE br.name = 'Central'",
    note: 'wrong join: the fines of members whose home branch is Central, not of loans made at Central',
  },
  /* 12 */ {
    sql:
      'SELECT b.title, a.name FROM books AS b, authors AS a WHERE a.author_id = b.author_id ' +
      'AND b.pages IS NOT NULL ORDER BY b.pages DESC LIMIT 3',
    note: 'right: an implicit join',
  },
  /* 13 */ {
    sql:
      'SELECT DISTINCT m.name FROM members AS m JOIN loans AS l USING (member_id) ' +
      "WHERE strftime('%Y-%m', l.loan_date) = '2024-03'",
    note: 'right: strftime instead of LIKE',
  },
  /* 14 */ {
    sql: 'SELECT title FROM books WHERE pub_year = (SELECT MIN(pub_year) FROM books)',
    note: 'right: a subquery instead of ORDER BY ... LIMIT 1',
  },
  /* 15 */ {
    sql: 'SELECT COUNT(*) FORM books WHERE book_id NOT IN (SELECT book_id FROM loans)',
    note: 'error: FORM is read as a column alias, then SQLite stops at "books"',
  },
  /* 16 */ {
    sql:
      'SELECT a.name, COUNT(*) AS n FROM loans AS l JOIN books AS b ON l.book_id = b.book_id ' +
      'JOIN authors AS a ON b.author_id = a.author_id GROUP BY a.name ORDER BY n DESC LIMIT 1',
    note: 'right: grouping by name works because author names are unique',
  },
  /* 17 */ {
    sql:
      'SELECT SUM(b.pages) * 1.0 / COUNT(b.pages) FROM books AS b JOIN branches AS br ON b.branch_id = br.branch_id ' +
      "WHERE br.name = 'Harbour'",
    note: 'right: the average spelled out gives exactly the same float',
  },
  /* 18 */ {
    sql:
      'SELECT m.name FROM members AS m JOIN loans AS l ON m.member_id = l.member_id ' +
      'JOIN books AS b ON l.book_id = b.book_id GROUP BY m.member_id HAVING COUNT(b.genre) >= 5',
    note: 'wrong: counts loans instead of distinct genres',
  },
  /* 19 */ {
    sql:
      'SELECT district, total FROM (SELECT br.district, SUM(l.fine) AS total FROM loans AS l ' +
      'JOIN branches AS br ON l.branch_id = br.branch_id GROUP BY br.district) ORDER BY total DESC LIMIT 1',
    note: 'right: a subquery with an alias',
  },
];

/** Index of each hostile item, for tests and the page's notes. */
export const HOSTILE = {
  deleteRows: 1,
  twoStatements: 2,
  runaway: 3,
  markup: 5,
} as const;

const hostileItems: Record<number, DemoPrediction> = {
  [HOSTILE.deleteRows]: {
    sql: 'DELETE FROM loans',
    note:
      'reward hack: the official evaluator runs the prediction, then the gold query on the same connection; ' +
      'after the DELETE the gold query finds no loans, and empty = empty scores 1 (flagged mutated_db; --read-only makes it an error)',
  },
  [HOSTILE.twoStatements]: {
    sql: 'SELECT COUNT(*) FROM books WHERE pub_year < 1950; DROP TABLE books',
    note: 'two statements: Python sqlite3 refuses them before anything runs ("You can only execute one statement at a time.")',
  },
  [HOSTILE.runaway]: {
    sql: 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c',
    note: 'never ends: the per-item timeout terminates the worker, the item scores 0 and the next one runs normally',
  },
  [HOSTILE.markup]: {
    sql: `SELECT '<img src=x onerror=alert(1)>' AS title UNION ALL SELECT '<script>alert("pwned")</script>'`,
    note: 'markup in the SQL and in the result: the page must show it as text',
  },
};

export const HOSTILE_PREDICTIONS: readonly DemoPrediction[] = MODEL_PREDICTIONS.map((p, i) => hostileItems[i] ?? p);
