SELECT COUNT(*) FROM books WHERE genre = 'Mystery'	city_library
SELECT b.title, m.name FROM loans AS l INNER JOIN books AS b ON l.book_id = b.book_id INNER JOIN members AS m ON l.member_id = m.member_id WHERE l.return_date IS NULL	city_library
SELECT COUNT(*) FROM books WHERE pub_year < 1950	city_library
SELECT br.name, CAST(SUM(CASE WHEN l.return_date > l.due_date THEN 1 ELSE 0 END) AS REAL) * 100 / COUNT(*) FROM loans AS l INNER JOIN branches AS br ON l.branch_id = br.branch_id GROUP BY br.branch_id	city_library
SELECT name FROM authors WHERE country = 'France'	city_library
SELECT title FROM books WHERE price IS NULL	city_library
SELECT name, district FROM branches WHERE opened_year < 1990	city_library
SELECT COUNT(*) FROM members WHERE email IS NULL	city_library
SELECT b.title FROM books AS b INNER JOIN authors AS a ON b.author_id = a.author_id WHERE a.name = 'Inès Marchetti'	city_library
SELECT DISTINCT b.genre FROM loans AS l INNER JOIN members AS m ON l.member_id = m.member_id INNER JOIN books AS b ON l.book_id = b.book_id WHERE m.tier = 'student'	city_library
SELECT COUNT(*) FROM loans WHERE return_date IS NULL	city_library
SELECT SUM(l.fine) FROM loans AS l INNER JOIN branches AS br ON l.branch_id = br.branch_id WHERE br.name = 'Central'	city_library
SELECT b.title, a.name FROM books AS b INNER JOIN authors AS a ON b.author_id = a.author_id ORDER BY b.pages DESC LIMIT 3	city_library
SELECT DISTINCT m.name FROM members AS m INNER JOIN loans AS l ON m.member_id = l.member_id WHERE l.loan_date LIKE '2024-03%'	city_library
SELECT title FROM books ORDER BY pub_year ASC LIMIT 1	city_library
SELECT COUNT(*) FROM books WHERE book_id NOT IN (SELECT book_id FROM loans)	city_library
SELECT a.name, COUNT(l.loan_id) FROM loans AS l INNER JOIN books AS b ON l.book_id = b.book_id INNER JOIN authors AS a ON b.author_id = a.author_id GROUP BY a.author_id ORDER BY COUNT(l.loan_id) DESC LIMIT 1	city_library
SELECT AVG(b.pages) FROM books AS b INNER JOIN branches AS br ON b.branch_id = br.branch_id WHERE br.name = 'Harbour'	city_library
SELECT m.name FROM members AS m INNER JOIN loans AS l ON m.member_id = l.member_id INNER JOIN books AS b ON l.book_id = b.book_id GROUP BY m.member_id HAVING COUNT(DISTINCT b.genre) >= 5	city_library
SELECT br.district, SUM(l.fine) FROM loans AS l INNER JOIN branches AS br ON l.branch_id = br.branch_id GROUP BY br.branch_id ORDER BY SUM(l.fine) DESC LIMIT 1	city_library
