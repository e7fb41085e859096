-- Bad text is a soft error (PostgreSQL 16+): callers that ask for one get it reported, not
-- raised, with the SQLSTATE, message and detail of the hard error.
SELECT pg_input_is_valid('brpk4q72xwf2m63l', 'sno') AS valid,
       pg_input_is_valid('xyz', 'sno') AS short,
       pg_input_is_valid('brpk4q72xwf2m63!', 'sno') AS bad_symbol,
       pg_input_is_valid('\x0123456789abcdef0123', 'sno') AS hex,
       pg_input_is_valid('\x0123', 'sno') AS short_hex;

SELECT * FROM pg_input_error_info('xyz', 'sno');
SELECT * FROM pg_input_error_info('brpk4q72xwf2m63!', 'sno');
SELECT * FROM pg_input_error_info('\x01234567890123456789zz', 'sno');
SELECT * FROM pg_input_error_info('brpk4q72xwf2m63l', 'sno');

-- The same input raises the same error where no one asks for a soft one.
SELECT 'xyz'::sno;
\echo :LAST_ERROR_SQLSTATE

-- Arrays of sno take it too: one bad element makes the whole literal invalid.
SELECT pg_input_is_valid('{brpk4q72xwf2m63l,2222222222222222}', 'sno[]') AS good_array,
       pg_input_is_valid('{brpk4q72xwf2m63l,xyz}', 'sno[]') AS bad_array;

-- The bytea cast and binary input stay hard errors, as PostgreSQL's own types' do.
SELECT '\x0102'::bytea::sno;
