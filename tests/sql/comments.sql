-- Every object of the extension has a comment (\dT+, \df+ and \do+ show it). Not counted: the
-- array type sno[], which comes with the type, and the row type of the table
-- sno_partition_leases and its array type, which come with the table (PostgreSQL 17 and later
-- also make them members of the extension).
CREATE TEMP VIEW extension_objects AS
SELECT d.classid, d.objid, d.objsubid
FROM pg_depend d
WHERE d.refclassid = 'pg_extension'::regclass
  AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'sno')
  AND d.deptype = 'e'
  AND (d.classid, d.objid) <> ('pg_type'::regclass, 'sno[]'::regtype)
  AND NOT (d.classid = 'pg_type'::regclass AND EXISTS (
      SELECT FROM pg_type t LEFT JOIN pg_type e ON e.oid = t.typelem
      WHERE t.oid = d.objid AND (t.typrelid <> 0 OR e.typrelid <> 0)));
-- The objects without one: expected none.
SELECT pg_describe_object(classid, objid, objsubid) AS object_without_comment
FROM extension_objects
WHERE obj_description(objid, classid::regclass::name) IS NULL
ORDER BY 1;
-- The query sees them all: the extension has this many objects (adding one changes it; give
-- the new object a comment too).
SELECT count(*) AS objects FROM extension_objects;
