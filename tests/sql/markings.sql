-- Every function of the extension has in pg_proc the markings that README.md states ("Using
-- it", the markings below the table): volatility, strictness, parallel safety, leakproofness.
-- sql/parts/ declares them by hand (pgrx's #[pg_extern] attributes do not reach the catalog),
-- so this is where a wrong or changed marking shows: change the README with it.
CREATE TEMP VIEW extension_functions AS
SELECT p.*
FROM pg_depend d
JOIN pg_proc p ON p.oid = d.objid
WHERE d.classid = 'pg_proc'::regclass
  AND d.refclassid = 'pg_extension'::regclass
  AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'sno')
  AND d.deptype = 'e';
-- Each function's markings, as the README writes them (aggregates are kind "aggregate").
SELECT oid::regprocedure AS function,
       CASE prokind WHEN 'f' THEN '' WHEN 'a' THEN 'aggregate' ELSE prokind::text END AS kind,
       CASE provolatile WHEN 'i' THEN 'IMMUTABLE' WHEN 's' THEN 'STABLE' ELSE 'VOLATILE' END
         AS volatility,
       CASE WHEN proisstrict THEN 'STRICT' ELSE '' END AS strict,
       CASE proparallel WHEN 's' THEN 'SAFE' WHEN 'r' THEN 'RESTRICTED' ELSE 'UNSAFE' END
         AS parallel,
       CASE WHEN proleakproof THEN 'LEAKPROOF' ELSE '' END AS leakproof
FROM extension_functions
ORDER BY oid::regprocedure::text;
-- The list above is every function that sno's type, operators, casts, aggregates and operator
-- classes call: none of theirs lies outside the extension. Expected: none (PostgreSQL's own
-- selectivity estimators, which the operators name, are left out).
SELECT DISTINCT called_function
FROM (
    SELECT f::regprocedure AS called_function
    FROM pg_type t,
         unnest(ARRAY[t.typinput, t.typoutput, t.typreceive, t.typsend]::oid[]) AS f
    WHERE t.oid = 'sno'::regtype
    UNION ALL
    SELECT oprcode::oid::regprocedure FROM pg_operator
    WHERE oprleft = 'sno'::regtype OR oprright = 'sno'::regtype
    UNION ALL
    SELECT castfunc::regprocedure FROM pg_cast
    WHERE castsource = 'sno'::regtype OR casttarget = 'sno'::regtype
    UNION ALL
    SELECT f::regprocedure
    FROM pg_aggregate a
    JOIN pg_proc p ON p.oid = a.aggfnoid,
         unnest(ARRAY[a.aggtransfn, a.aggcombinefn]::oid[]) AS f
    WHERE p.proargtypes[0] = 'sno'::regtype
    UNION ALL
    SELECT amproc::oid::regprocedure FROM pg_amproc
    WHERE amproclefttype = 'sno'::regtype
) AS called
WHERE called_function::oid <> 0
  AND called_function::oid NOT IN (SELECT oid FROM extension_functions)
  AND called_function::oid >= 16384;
