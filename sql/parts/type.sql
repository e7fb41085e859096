
-- The type -------------------------------------------------------------------------------------

CREATE TYPE sno;

CREATE FUNCTION sno_in(cstring) RETURNS sno
    AS 'MODULE_PATHNAME', 'sno_in_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION sno_out(sno) RETURNS cstring
    AS 'MODULE_PATHNAME', 'sno_out_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION sno_recv(internal) RETURNS sno
    AS 'MODULE_PATHNAME', 'sno_recv_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION sno_send(sno) RETURNS bytea
    AS 'MODULE_PATHNAME', 'sno_send_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE TYPE sno (
    INTERNALLENGTH = 10,
    INPUT = sno_in,
    OUTPUT = sno_out,
    RECEIVE = sno_recv,
    SEND = sno_send,
    ALIGNMENT = char,
    STORAGE = plain,
    CATEGORY = 'U'
);

COMMENT ON TYPE sno IS
    'sno ID: 10 bytes (4 ms time, tick-tock bit, meta, partition, sequence), k-sortable; text form is 16 base32 characters';
COMMENT ON FUNCTION sno_in(cstring) IS 'text input of sno: 16 characters of 2-9 and a-x (A-X accepted)';
COMMENT ON FUNCTION sno_out(sno) IS 'text output of sno: 16 lowercase characters';
COMMENT ON FUNCTION sno_recv(internal) IS 'binary input of sno: the 10 raw bytes';
COMMENT ON FUNCTION sno_send(sno) IS 'binary output of sno: the 10 raw bytes';

-- Comparison -----------------------------------------------------------------------------------

CREATE FUNCTION sno_eq(sno, sno) RETURNS boolean
    AS 'MODULE_PATHNAME', 'sno_eq_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION sno_ne(sno, sno) RETURNS boolean
    AS 'MODULE_PATHNAME', 'sno_ne_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION sno_lt(sno, sno) RETURNS boolean
    AS 'MODULE_PATHNAME', 'sno_lt_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION sno_le(sno, sno) RETURNS boolean
    AS 'MODULE_PATHNAME', 'sno_le_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION sno_gt(sno, sno) RETURNS boolean
    AS 'MODULE_PATHNAME', 'sno_gt_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION sno_ge(sno, sno) RETURNS boolean
    AS 'MODULE_PATHNAME', 'sno_ge_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION sno_cmp(sno, sno) RETURNS integer
    AS 'MODULE_PATHNAME', 'sno_cmp_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION sno_sortsupport(internal) RETURNS void
    AS 'MODULE_PATHNAME', 'sno_sortsupport_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION sno_hash(sno) RETURNS integer
    AS 'MODULE_PATHNAME', 'sno_hash_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION sno_hash_extended(sno, bigint) RETURNS bigint
    AS 'MODULE_PATHNAME', 'sno_hash_extended_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

COMMENT ON FUNCTION sno_eq(sno, sno) IS 'implementation of = for sno';
COMMENT ON FUNCTION sno_ne(sno, sno) IS 'implementation of <> for sno';
COMMENT ON FUNCTION sno_lt(sno, sno) IS 'implementation of < for sno';
COMMENT ON FUNCTION sno_le(sno, sno) IS 'implementation of <= for sno';
COMMENT ON FUNCTION sno_gt(sno, sno) IS 'implementation of > for sno';
COMMENT ON FUNCTION sno_ge(sno, sno) IS 'implementation of >= for sno';
COMMENT ON FUNCTION sno_cmp(sno, sno) IS 'btree comparison of sno: byte order, which is time order';
COMMENT ON FUNCTION sno_sortsupport(internal) IS 'btree sort support for sno, with abbreviated keys';
COMMENT ON FUNCTION sno_hash(sno) IS 'hash of sno';
COMMENT ON FUNCTION sno_hash_extended(sno, bigint) IS 'seeded 64-bit hash of sno';

CREATE OPERATOR = (
    LEFTARG = sno, RIGHTARG = sno, FUNCTION = sno_eq,
    COMMUTATOR = =, NEGATOR = <>, RESTRICT = eqsel, JOIN = eqjoinsel, HASHES, MERGES
);
CREATE OPERATOR <> (
    LEFTARG = sno, RIGHTARG = sno, FUNCTION = sno_ne,
    COMMUTATOR = <>, NEGATOR = =, RESTRICT = neqsel, JOIN = neqjoinsel
);
CREATE OPERATOR < (
    LEFTARG = sno, RIGHTARG = sno, FUNCTION = sno_lt,
    COMMUTATOR = >, NEGATOR = >=, RESTRICT = scalarltsel, JOIN = scalarltjoinsel
);
CREATE OPERATOR <= (
    LEFTARG = sno, RIGHTARG = sno, FUNCTION = sno_le,
    COMMUTATOR = >=, NEGATOR = >, RESTRICT = scalarlesel, JOIN = scalarlejoinsel
);
CREATE OPERATOR > (
    LEFTARG = sno, RIGHTARG = sno, FUNCTION = sno_gt,
    COMMUTATOR = <, NEGATOR = <=, RESTRICT = scalargtsel, JOIN = scalargtjoinsel
);
CREATE OPERATOR >= (
    LEFTARG = sno, RIGHTARG = sno, FUNCTION = sno_ge,
    COMMUTATOR = <=, NEGATOR = <, RESTRICT = scalargesel, JOIN = scalargejoinsel
);

COMMENT ON OPERATOR = (sno, sno) IS 'equal';
COMMENT ON OPERATOR <> (sno, sno) IS 'not equal';
COMMENT ON OPERATOR < (sno, sno) IS 'less than (earlier, for IDs of different 4 ms units)';
COMMENT ON OPERATOR <= (sno, sno) IS 'less than or equal';
COMMENT ON OPERATOR > (sno, sno) IS 'greater than (later, for IDs of different 4 ms units)';
COMMENT ON OPERATOR >= (sno, sno) IS 'greater than or equal';

-- Aggregates ------------------------------------------------------------------------------------

CREATE FUNCTION sno_smaller(sno, sno) RETURNS sno
    AS 'MODULE_PATHNAME', 'sno_smaller_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION sno_larger(sno, sno) RETURNS sno
    AS 'MODULE_PATHNAME', 'sno_larger_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE AGGREGATE min(sno) (
    SFUNC = sno_smaller, STYPE = sno, COMBINEFUNC = sno_smaller, SORTOP = <, PARALLEL = SAFE
);
CREATE AGGREGATE max(sno) (
    SFUNC = sno_larger, STYPE = sno, COMBINEFUNC = sno_larger, SORTOP = >, PARALLEL = SAFE
);

COMMENT ON FUNCTION sno_smaller(sno, sno) IS 'the smaller of two IDs';
COMMENT ON FUNCTION sno_larger(sno, sno) IS 'the larger of two IDs';
COMMENT ON AGGREGATE min(sno) IS 'the smallest (earliest) ID; uses a btree index when there is one';
COMMENT ON AGGREGATE max(sno) IS 'the largest (latest) ID; uses a btree index when there is one';

-- Index support --------------------------------------------------------------------------------

CREATE OPERATOR CLASS sno_ops DEFAULT FOR TYPE sno USING btree AS
    OPERATOR 1 <,
    OPERATOR 2 <=,
    OPERATOR 3 =,
    OPERATOR 4 >=,
    OPERATOR 5 >,
    FUNCTION 1 sno_cmp(sno, sno),
    FUNCTION 2 sno_sortsupport(internal),
    FUNCTION 4 btequalimage(oid);

CREATE OPERATOR CLASS sno_ops DEFAULT FOR TYPE sno USING hash AS
    OPERATOR 1 =,
    FUNCTION 1 sno_hash(sno),
    FUNCTION 2 sno_hash_extended(sno, bigint);

CREATE OPERATOR CLASS sno_minmax_ops DEFAULT FOR TYPE sno USING brin AS
    OPERATOR 1 <,
    OPERATOR 2 <=,
    OPERATOR 3 =,
    OPERATOR 4 >=,
    OPERATOR 5 >,
    FUNCTION 1 brin_minmax_opcinfo(internal),
    FUNCTION 2 brin_minmax_add_value(internal, internal, internal, internal),
    FUNCTION 3 brin_minmax_consistent(internal, internal, internal),
    FUNCTION 4 brin_minmax_union(internal, internal, internal);

COMMENT ON OPERATOR CLASS sno_ops USING btree IS
    'default btree operator class for sno: byte order, sort support, deduplication';
COMMENT ON OPERATOR FAMILY sno_ops USING btree IS 'btree operators for sno';
COMMENT ON OPERATOR CLASS sno_ops USING hash IS 'default hash operator class for sno';
COMMENT ON OPERATOR FAMILY sno_ops USING hash IS 'hash operators for sno';
COMMENT ON OPERATOR CLASS sno_minmax_ops USING brin IS
    'default BRIN operator class for sno: min/max ranges, small for time-ordered IDs';
COMMENT ON OPERATOR FAMILY sno_minmax_ops USING brin IS 'BRIN min/max operators for sno';

-- Decoding -------------------------------------------------------------------------------------

CREATE FUNCTION sno_time(sno) RETURNS timestamptz
    AS 'MODULE_PATHNAME', 'sno_time_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION sno_tick_tock(sno) RETURNS integer
    AS 'MODULE_PATHNAME', 'sno_tick_tock_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION sno_meta(sno) RETURNS integer
    AS 'MODULE_PATHNAME', 'sno_meta_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION sno_partition(sno) RETURNS integer
    AS 'MODULE_PATHNAME', 'sno_partition_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION sno_sequence(sno) RETURNS integer
    AS 'MODULE_PATHNAME', 'sno_sequence_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION sno_decode(id sno,
    OUT "time" timestamptz, OUT tick_tock integer, OUT meta integer,
    OUT "partition" integer, OUT "sequence" integer)
    RETURNS record
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    AS $$ SELECT @extschema@.sno_time(id), @extschema@.sno_tick_tock(id), @extschema@.sno_meta(id),
                 @extschema@.sno_partition(id), @extschema@.sno_sequence(id) $$;

COMMENT ON FUNCTION sno_time(sno) IS 'the start of the 4 ms unit the ID was made in';
COMMENT ON FUNCTION sno_tick_tock(sno) IS
    'the tick-tock bit (0 or 1): flips when the generator handles a clock regression';
COMMENT ON FUNCTION sno_meta(sno) IS 'the metabyte (0..255): the caller''s, e.g. which table';
COMMENT ON FUNCTION sno_partition(sno) IS 'the partition (0..65535): which generator made the ID';
COMMENT ON FUNCTION sno_sequence(sno) IS 'the sequence (0..65535) within the 4 ms unit';
COMMENT ON FUNCTION sno_decode(sno) IS 'all parts of the ID as one record';

-- Construction ---------------------------------------------------------------------------------

CREATE FUNCTION sno_from_parts(at timestamptz, meta integer, "partition" integer,
    "sequence" integer, tick_tock integer DEFAULT 0) RETURNS sno
    AS 'MODULE_PATHNAME', 'sno_from_parts_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION sno_min(at timestamptz) RETURNS sno
    AS 'MODULE_PATHNAME', 'sno_min_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION sno_max(at timestamptz) RETURNS sno
    AS 'MODULE_PATHNAME', 'sno_max_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION sno_from_parts(timestamptz, integer, integer, integer, integer) IS
    'the ID made of these parts; the time is truncated to its 4 ms unit';
COMMENT ON FUNCTION sno_min(timestamptz) IS
    'the smallest ID of the 4 ms unit containing the time: use as an inclusive lower bound';
COMMENT ON FUNCTION sno_max(timestamptz) IS
    'the largest ID of the 4 ms unit containing the time: use as an inclusive upper bound';
