-- sno 0.1.0 -> 0.2.0: ALTER EXTENSION sno UPDATE runs this. sql/sno.parts lists the whole 0.2.0
-- script; every change made there since 0.1.0 is made here too, from the same parts where it can be.

-- Complain if the script is sourced in psql rather than run by ALTER EXTENSION.
\echo Use "ALTER EXTENSION sno UPDATE TO '0.2.0'" to load this file. \quit

-- Time predicates (issue 25): the exact bounds the planner rewrites sno_time(id) comparisons
-- into, and sno_maintain_partitions.
