-- sno: compact, sortable, unique 10-byte IDs.

-- Complain if the script is sourced in psql rather than run by CREATE EXTENSION (which drops
-- this line).
\echo Use "CREATE EXTENSION sno" to load this file. \quit

--
-- Every object of the extension is declared here. Functions written in Rust are C functions
-- whose symbol is the Rust name plus "_wrapper".
