/**
 * The demo questions about the city_library database, in BIRD's question format. Written for
 * the workbench (not taken from any benchmark). The gold SQL here is the single source of both
 * public/demo/questions.json and public/demo/gold.sql.
 *
 * The order matters to the hostile predictions file (see predictions.ts): questions 1-3 and 5
 * are the ones it attacks, and question 4 is the ordinary item right after the runaway query.
 */
import type { Difficulty } from '../../src/core/types.ts';

export const DEMO_DB_ID = 'city_library';

export interface DemoQuestion {
  question: string;
  evidence: string;
  SQL: string;
  difficulty: Exclude<Difficulty, 'unknown'>;
}

export const DEMO_QUESTIONS: readonly DemoQuestion[] = [
  {
    question: 'How many books in the collection are mysteries?',
    evidence: "mysteries refers to genre = 'Mystery'",
    SQL: "SELECT COUNT(*) FROM books WHERE genre = 'Mystery'",
    difficulty: 'simple',
  },
  {
    // The hostile file answers this one with `DELETE FROM loans`: the gold query then finds no
    // loans either, and empty = empty is a match under the official semantics.
    question: 'Which books are currently on loan, and who has each of them?',
    evidence: 'currently on loan refers to return_date IS NULL; who refers to the member name',
    SQL:
      'SELECT b.title, m.name FROM loans AS l INNER JOIN books AS b ON l.book_id = b.book_id ' +
      'INNER JOIN members AS m ON l.member_id = m.member_id WHERE l.return_date IS NULL',
    difficulty: 'moderate',
  },
  {
    question: 'How many books were published before 1950?',
    evidence: 'published before 1950 refers to pub_year < 1950',
    SQL: 'SELECT COUNT(*) FROM books WHERE pub_year < 1950',
    difficulty: 'simple',
  },
  {
    question: 'For each branch, what percentage of its loans were returned late?',
    evidence:
      'late refers to return_date > due_date; percentage = DIVIDE(COUNT(late loans), COUNT(loans)) * 100; ' +
      'the branch of a loan is loans.branch_id',
    SQL:
      'SELECT br.name, CAST(SUM(CASE WHEN l.return_date > l.due_date THEN 1 ELSE 0 END) AS REAL) * 100 / COUNT(*) ' +
      'FROM loans AS l INNER JOIN branches AS br ON l.branch_id = br.branch_id GROUP BY br.branch_id',
    difficulty: 'challenging',
  },
  {
    question: 'Which authors were born in France?',
    evidence: "born in France refers to country = 'France'",
    SQL: "SELECT name FROM authors WHERE country = 'France'",
    difficulty: 'simple',
  },
  {
    question: 'List the titles of the books whose replacement price is unknown.',
    evidence: 'price is unknown refers to price IS NULL',
    SQL: 'SELECT title FROM books WHERE price IS NULL',
    difficulty: 'simple',
  },
  {
    question: 'List the name and district of every branch opened before 1990.',
    evidence: 'opened before 1990 refers to opened_year < 1990',
    SQL: 'SELECT name, district FROM branches WHERE opened_year < 1990',
    difficulty: 'simple',
  },
  {
    question: 'How many members have no e-mail address on file?',
    evidence: 'no e-mail address refers to email IS NULL',
    SQL: 'SELECT COUNT(*) FROM members WHERE email IS NULL',
    difficulty: 'simple',
  },
  {
    question: 'What are the titles of the books written by Inès Marchetti?',
    evidence: "Inès Marchetti is the name of an author: name = 'Inès Marchetti'",
    SQL:
      'SELECT b.title FROM books AS b INNER JOIN authors AS a ON b.author_id = a.author_id ' +
      "WHERE a.name = 'Inès Marchetti'",
    difficulty: 'moderate',
  },
  {
    question: 'Which genres have been borrowed by student members?',
    evidence: "student members refers to tier = 'student'",
    SQL:
      'SELECT DISTINCT b.genre FROM loans AS l INNER JOIN members AS m ON l.member_id = m.member_id ' +
      "INNER JOIN books AS b ON l.book_id = b.book_id WHERE m.tier = 'student'",
    difficulty: 'moderate',
  },
  {
    question: 'How many loans are still outstanding?',
    evidence: 'outstanding refers to return_date IS NULL',
    SQL: 'SELECT COUNT(*) FROM loans WHERE return_date IS NULL',
    difficulty: 'simple',
  },
  {
    question: 'What is the total of the fines charged on loans made at the Central branch?',
    evidence: "loans made at a branch refers to loans.branch_id; Central refers to branches.name = 'Central'",
    SQL:
      'SELECT SUM(l.fine) FROM loans AS l INNER JOIN branches AS br ON l.branch_id = br.branch_id ' +
      "WHERE br.name = 'Central'",
    difficulty: 'moderate',
  },
  {
    question: 'Name the three longest books and their authors.',
    evidence: 'longest refers to the highest number of pages',
    SQL:
      'SELECT b.title, a.name FROM books AS b INNER JOIN authors AS a ON b.author_id = a.author_id ' +
      'ORDER BY b.pages DESC LIMIT 3',
    difficulty: 'moderate',
  },
  {
    question: 'Which members borrowed at least one book in March 2024?',
    evidence: "in March 2024 refers to loan_date LIKE '2024-03%'",
    SQL:
      'SELECT DISTINCT m.name FROM members AS m INNER JOIN loans AS l ON m.member_id = l.member_id ' +
      "WHERE l.loan_date LIKE '2024-03%'",
    difficulty: 'moderate',
  },
  {
    question: 'What is the title of the oldest book in the collection?',
    evidence: 'oldest refers to MIN(pub_year)',
    SQL: 'SELECT title FROM books ORDER BY pub_year ASC LIMIT 1',
    difficulty: 'simple',
  },
  {
    question: 'How many books have never been borrowed?',
    evidence: 'never been borrowed refers to book_id NOT IN loans',
    SQL: 'SELECT COUNT(*) FROM books WHERE book_id NOT IN (SELECT book_id FROM loans)',
    difficulty: 'moderate',
  },
  {
    question: 'Whose books were borrowed most often, and how many loans was that?',
    evidence: 'whose refers to the author name; most often refers to MAX(COUNT(loan_id))',
    SQL:
      'SELECT a.name, COUNT(l.loan_id) FROM loans AS l INNER JOIN books AS b ON l.book_id = b.book_id ' +
      'INNER JOIN authors AS a ON b.author_id = a.author_id GROUP BY a.author_id ORDER BY COUNT(l.loan_id) DESC LIMIT 1',
    difficulty: 'challenging',
  },
  {
    question: 'What is the average number of pages of the books shelved at the Harbour branch?',
    evidence: "Harbour refers to branches.name = 'Harbour'; average = AVG(pages)",
    SQL:
      'SELECT AVG(b.pages) FROM books AS b INNER JOIN branches AS br ON b.branch_id = br.branch_id ' +
      "WHERE br.name = 'Harbour'",
    difficulty: 'moderate',
  },
  {
    question: 'Which members have borrowed books of at least five different genres?',
    evidence: 'at least five different genres refers to COUNT(DISTINCT genre) >= 5',
    SQL:
      'SELECT m.name FROM members AS m INNER JOIN loans AS l ON m.member_id = l.member_id ' +
      'INNER JOIN books AS b ON l.book_id = b.book_id GROUP BY m.member_id HAVING COUNT(DISTINCT b.genre) >= 5',
    difficulty: 'challenging',
  },
  {
    question: 'In which district is the branch whose loans brought in the most fines, and how much was it?',
    evidence: 'the branch of a loan is loans.branch_id; most fines refers to MAX(SUM(fine))',
    SQL:
      'SELECT br.district, SUM(l.fine) FROM loans AS l INNER JOIN branches AS br ON l.branch_id = br.branch_id ' +
      'GROUP BY br.branch_id ORDER BY SUM(l.fine) DESC LIMIT 1',
    difficulty: 'challenging',
  },
];
