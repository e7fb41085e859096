-- COPY ... ON_ERROR ignore (PostgreSQL 17+) skips the rows whose sno column has bad text,
-- because sno_in reports it as a soft error. (COPY's text format unescapes \\x to \x.)
CREATE TABLE ids (id sno, n int);
COPY ids FROM STDIN WITH (ON_ERROR ignore, LOG_VERBOSITY verbose);
brpk4q72xwf2m63l	1
xyz	2
2222222222222222	3
\\x0123456789abcdef0123	4
brpk4q72xwf2m63!	5
\.
SELECT * FROM ids ORDER BY n;
-- Without it, the first bad row stops the COPY.
COPY ids FROM STDIN;
7gcn3i5m7akae24f	6
xyz	7
\.
SELECT count(*) FROM ids;
DROP TABLE ids;
