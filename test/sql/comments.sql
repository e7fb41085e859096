-- Every object of the extension has a comment (\dT+, \df+ and \do+ show it): the objects
-- without one, expected none.
SELECT pg_describe_object(d.classid, d.objid, d.objsubid) AS object_without_comment
FROM pg_depend d
WHERE d.refclassid = 'pg_extension'::regclass
  AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'sno')
  AND d.deptype = 'e'
  AND obj_description(d.objid, d.classid::regclass::name) IS NULL
ORDER BY 1;
-- The query sees them all: the extension has this many objects (adding one changes it; give
-- the new object a comment too).
SELECT count(*) AS objects
FROM pg_depend d
WHERE d.refclassid = 'pg_extension'::regclass
  AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'sno')
  AND d.deptype = 'e';
