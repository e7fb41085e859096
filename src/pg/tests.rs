//! Tests inside a running server (`cargo pgrx test`); each runs in a transaction rolled back after.

#[pgrx::pg_schema]
mod tests {
    use crate::id::Sno;
    use pgrx::prelude::*;

    fn one<T: IntoDatum + FromDatum>(query: &str) -> T {
        Spi::get_one::<T>(query)
            .unwrap_or_else(|e| panic!("{query}: {e}"))
            .unwrap_or_else(|| panic!("{query}: NULL"))
    }

    fn text(query: &str) -> String {
        one::<String>(query)
    }

    fn run(query: &str) {
        Spi::run(query).unwrap_or_else(|e| panic!("{query}: {e}"));
    }

    /// The plan of `query`, as EXPLAIN's JSON text.
    fn plan_of(query: &str) -> String {
        Spi::explain(query)
            .unwrap_or_else(|e| panic!("{query}: {e}"))
            .0
            .to_string()
    }

    /// "SQLSTATE: message / detail" of the error `query` raises, or "no error".
    fn error_of(query: &str) -> String {
        run(r#"
            CREATE OR REPLACE FUNCTION pg_temp.error_of(query text) RETURNS text
            LANGUAGE plpgsql AS $$
            DECLARE state text; message text; detail text;
            BEGIN
                EXECUTE query;
                RETURN 'no error';
            EXCEPTION WHEN OTHERS THEN
                GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE, message = MESSAGE_TEXT,
                                        detail = PG_EXCEPTION_DETAIL;
                RETURN state || ': ' || message || coalesce(' / ' || nullif(detail, ''), '');
            END $$"#);
        let quoted = query.replace('\'', "''");
        text(&format!("SELECT pg_temp.error_of('{quoted}')"))
    }

    #[pg_test]
    fn extension_is_installed() {
        assert_eq!(
            text("SELECT extversion::text FROM pg_extension WHERE extname = 'sno'"),
            "0.1.0"
        );
    }

    #[pg_test]
    fn the_type_is_ten_plain_bytes() {
        assert_eq!(
            one::<i32>("SELECT pg_column_size('brpk4q72xwf2m63l'::sno)"),
            10
        );
        assert_eq!(
            text("SELECT format('%s %s %s %s', typlen, typbyval, typalign, typstorage) FROM pg_type WHERE typname = 'sno'"),
            "10 f c p"
        );
        let id = one::<Sno>("SELECT 'brpk4q72xwf2m63l'::sno");
        assert_eq!(id, "brpk4q72xwf2m63l".parse().unwrap());
    }

    /// SPEC §4: (unix ms, tick, meta, partition, sequence, hex, text).
    const VECTORS: &[(i64, i32, i32, i32, i32, &str, &str)] = &[
        (
            1262304000000,
            0,
            0,
            0,
            0,
            "00000000000000000000",
            "2222222222222222",
        ),
        (
            1262304000003,
            0,
            0,
            0,
            0,
            "00000000000000000000",
            "2222222222222222",
        ),
        (
            1262304000004,
            0,
            0,
            0,
            0,
            "00000000020000000000",
            "2222222422222222",
        ),
        (
            1262304000004,
            1,
            0,
            0,
            0,
            "00000000030000000000",
            "2222222522222222",
        ),
        (
            1262304001000,
            0,
            0,
            0,
            0,
            "00000001f40000000000",
            "222222hm22222222",
        ),
        (
            1262304000000,
            0,
            255,
            0,
            0,
            "0000000000ff00000000",
            "22222222xu222222",
        ),
        (
            1262304000000,
            0,
            0,
            65535,
            0,
            "000000000000ffff0000",
            "2222222225xxw222",
        ),
        (
            1262304000000,
            0,
            0,
            0,
            65535,
            "0000000000000000ffff",
            "2222222222223xxx",
        ),
        (
            3461327255548,
            0,
            0,
            0,
            0,
            "fffffffffe0000000000",
            "xxxxxxxw22222222",
        ),
        (
            3461327255548,
            1,
            255,
            65535,
            65535,
            "ffffffffffffffffffff",
            "xxxxxxxxxxxxxxxx",
        ),
        (
            1936047814976,
            0,
            255,
            39434,
            4147,
            "4e6f2160a0ff9a0a1033",
            "brpk4q72xwf2m63l",
        ),
        (
            1636681382123,
            0,
            42,
            9350,
            77,
            "2b9550c0742a2486004d",
            "7gcn3i5m7akae24f",
        ),
        (
            1636681382123,
            1,
            42,
            9350,
            77,
            "2b9550c0752a2486004d",
            "7gcn3i5n7akae24f",
        ),
        (
            1709210096789,
            0,
            128,
            32768,
            32768,
            "3406d6ee4a8080008000",
            "8i5fftkci4223222",
        ),
    ];

    #[pg_test]
    fn spec_vectors_parse_to_their_parts_and_print_back() {
        for &(ms, tick, meta, partition, sequence, hex, id) in VECTORS {
            let floored = ms - (ms - 1_262_304_000_000) % 4;
            let decoded = text(&format!(
                "SELECT format('%s %s %s %s %s %s %s', \
                   (extract(epoch FROM d.time) * 1000)::bigint, d.tick_tock, d.meta, d.partition, \
                   d.sequence, encode('{id}'::sno::bytea, 'hex'), upper('{id}')::sno) \
                 FROM sno_decode('{id}') d"
            ));
            assert_eq!(
                decoded,
                format!("{floored} {tick} {meta} {partition} {sequence} {hex} {id}")
            );
            let built = text(&format!(
                "SELECT sno_from_parts('epoch'::timestamptz + {ms} * interval '1 ms', {meta}, {partition}, {sequence}, {tick})::text"
            ));
            assert_eq!(built, id);
            assert_eq!(
                text(&format!("SELECT decode('{hex}', 'hex')::sno::text")),
                id
            );
        }
    }

    #[pg_test]
    fn bad_text_is_rejected_with_22p02_saying_what_and_where() {
        let cases = [
            (
                "brpk4q72xwf2m631",
                "character '1' at position 16 is not one of 2-9, a-x",
            ),
            (
                "yyyyyyyyyyyyyyyy",
                "character 'y' at position 1 is not one of 2-9, a-x",
            ),
            (
                "0000000000000000",
                "character '0' at position 1 is not one of 2-9, a-x",
            ),
            ("brpk4q72xwf2m63", "a sno is 16 characters long, not 15"),
            ("brpk4q72xwf2m63ll", "a sno is 16 characters long, not 17"),
            ("", "a sno is 16 characters long, not 0"),
            (
                "brpk4q72xwf2m6é",
                "byte 0xc3 at position 15 is not one of 2-9, a-x",
            ),
        ];
        for (input, detail) in cases {
            assert_eq!(
                error_of(&format!("SELECT '{input}'::sno")),
                format!("22P02: invalid input syntax for type sno: \"{input}\" / {detail}")
            );
        }
        assert_eq!(one::<i32>("SELECT 1"), 1, "the server is still up");
    }

    // What drivers send for a byte string: bytea's hex text form (pgx), or a bytea value
    // (psycopg, asyncpg, pgJDBC), which the assignment cast takes in INSERT and UPDATE only.
    #[pg_test]
    fn sno_in_takes_the_bytea_hex_form_and_bytea_assigns() {
        assert_eq!(
            text(
                r"SELECT format('%s %s', '\x00000000000000000000'::sno, '\x4E6F4D6F72654E6F6E65'::sno)"
            ),
            "2222222222222222 brpmsttken98wtl7"
        );
        assert_eq!(
            text(
                r"SELECT ('\x' || encode(id::bytea, 'hex'))::sno::text FROM (SELECT 'brpk4q72xwf2m63l'::sno AS id) AS s"
            ),
            "brpk4q72xwf2m63l"
        );
        for (input, detail) in [
            (
                r"\x0102",
                r"the bytea hex form of a sno is \x and 20 hex digits, not 4",
            ),
            (
                r"\x0000000000000000000g",
                "'g' at position 22 is not a hex digit",
            ),
            (
                r"\X00000000000000000000",
                "a sno is 16 characters long, not 22",
            ),
        ] {
            assert_eq!(
                error_of(&format!("SELECT '{input}'::sno")),
                format!("22P02: invalid input syntax for type sno: \"{input}\" / {detail}")
            );
        }
        run(r"CREATE TEMP TABLE assigned (id sno)");
        run(r"INSERT INTO assigned VALUES ('\x4e6f4d6f72654e6f6e65'::bytea)");
        run(r"UPDATE assigned SET id = '\x00000000000000000000'::bytea");
        assert_eq!(text("SELECT id::text FROM assigned"), "2222222222222222");
        assert_eq!(
            error_of(r"SELECT id = '\x00000000000000000000'::bytea FROM assigned"),
            "42883: operator does not exist: sno = bytea"
        );
    }

    #[pg_test]
    fn bytea_casts_take_exactly_ten_bytes() {
        assert_eq!(
            text("SELECT encode('brpk4q72xwf2m63l'::sno::bytea, 'hex')"),
            "4e6f2160a0ff9a0a1033"
        );
        assert_eq!(
            error_of("SELECT '\\x4e6f2160a0ff9a0a10'::bytea::sno"),
            "22P02: invalid bytea for type sno: a binary sno is 10 bytes, not 9"
        );
        assert_eq!(
            error_of("SELECT '\\x4e6f2160a0ff9a0a103300'::bytea::sno"),
            "22P02: invalid bytea for type sno: a binary sno is 10 bytes, not 11"
        );
        assert_eq!(
            text("SELECT string_agg(format('%s->%s:%s', castsource::regtype, casttarget::regtype, castcontext), ' ' ORDER BY castsource::regtype::text, casttarget::regtype::text) FROM pg_cast WHERE castsource = 'sno'::regtype OR casttarget = 'sno'::regtype"),
            "bytea->sno:a sno->bytea:e sno->timestamp with time zone:e",
            "every cast is explicit, but bytea assigns (for drivers that send byte strings)"
        );
    }

    #[pg_test]
    fn decoding_functions_read_each_part() {
        run("SET TIME ZONE 'UTC'");
        let id = "'7gcn3i5n7akae24f'::sno";
        assert_eq!(
            text(&format!("SELECT format('%s|%s|%s|%s|%s|%s', sno_time({id}), sno_tick_tock({id}), sno_meta({id}), sno_partition({id}), sno_sequence({id}), {id}::timestamptz)")),
            "2021-11-12 01:43:02.12+00|1|42|9350|77|2021-11-12 01:43:02.12+00"
        );
    }

    #[pg_test]
    fn parts_out_of_range_fail_naming_the_part() {
        let at = "'2024-05-01 00:00:00+00'";
        let cases = [
            (
                format!("sno_from_parts({at}, 256, 0, 0)"),
                "22003: sno meta 256 is out of range 0..255",
            ),
            (
                format!("sno_from_parts({at}, -1, 0, 0)"),
                "22003: sno meta -1 is out of range 0..255",
            ),
            (
                format!("sno_from_parts({at}, 0, 65536, 0)"),
                "22003: sno partition 65536 is out of range 0..65535",
            ),
            (
                format!("sno_from_parts({at}, 0, 0, -1)"),
                "22003: sno sequence -1 is out of range 0..65535",
            ),
            (
                format!("sno_from_parts({at}, 0, 0, 0, 2)"),
                "22003: sno tick_tock 2 is out of range 0..1",
            ),
        ];
        for (call, expected) in cases {
            assert_eq!(error_of(&format!("SELECT {call}")), expected);
        }
        let time_error = "22008: timestamp out of range for sno / A sno holds times from 2010-01-01 00:00:00+00 to 2079-09-07 15:47:35.548+00.";
        for at in [
            "'2009-12-31 23:59:59.999+00'",
            "'2079-09-07 15:47:35.549+00'",
            "'infinity'",
            "'-infinity'",
            "'4713-01-01 BC'",
        ] {
            assert_eq!(
                error_of(&format!("SELECT sno_from_parts({at}, 0, 0, 0)")),
                time_error
            );
            assert_eq!(error_of(&format!("SELECT sno_min({at})")), time_error);
            assert_eq!(error_of(&format!("SELECT sno_max({at})")), time_error);
        }
        assert_eq!(
            text("SELECT sno_max('2079-09-07 15:47:35.548999+00')::text"),
            "xxxxxxxxxxxxxxxx"
        );
        assert_eq!(
            text("SELECT sno_min('2010-01-01 00:00:00+00')::text"),
            "2222222222222222"
        );
    }

    #[pg_test]
    fn min_and_max_bound_the_unit_and_make_an_index_range_scan() {
        assert_eq!(
            text("SELECT format('%s %s', sno_min('2024-05-01 00:00:00.003+00'), sno_max('2024-05-01 00:00:00.003+00'))"),
            "8kkk6x2222222222 8kkk6x23xxxxxxxx"
        );
        run("CREATE TABLE events (id sno PRIMARY KEY)");
        run("INSERT INTO events SELECT sno_from_parts('2024-04-01'::timestamptz + i * interval '1 minute', 1, 1, 0) FROM generate_series(1, 100000) i");
        run("ANALYZE events");
        let plan = plan_of(
            "SELECT id FROM events WHERE id >= sno_min('2024-05-01') AND id < sno_min('2024-05-02')",
        );
        assert!(
            plan.contains("\"Index Only Scan\"") && plan.contains("events_pkey"),
            "{plan}"
        );
        assert!(
            plan.contains("((id >= '") && plan.contains("'::sno) AND (id < '"),
            "{plan}"
        );
        assert!(
            !plan.contains("sno_min"),
            "the bounds are folded to constants: {plan}"
        );
        assert_eq!(
            one::<i64>("SELECT count(*) FROM events WHERE id >= sno_min('2024-05-01') AND id < sno_min('2024-05-02')"),
            24 * 60
        );
    }

    /// A million random IDs: sort order, a checked btree, deduplication, every join method.
    #[pg_test]
    fn a_million_random_ids_sort_index_and_join_consistently() {
        run("CREATE EXTENSION IF NOT EXISTS amcheck");
        run("CREATE EXTENSION IF NOT EXISTS pageinspect");
        run("CREATE TABLE r AS SELECT i, substring(sha256(i::text::bytea) FROM 1 FOR 10)::sno AS id FROM generate_series(1, 1000000) i");
        assert!(one::<bool>(
            "SELECT array(SELECT i FROM r ORDER BY id) = array(SELECT i FROM r ORDER BY id::bytea)"
        ));
        assert!(
            one::<bool>("SELECT array(SELECT id::text FROM r ORDER BY id) = array(SELECT id::text FROM r ORDER BY id::text COLLATE \"C\")"),
            "text order is byte order"
        );
        run("CREATE INDEX r_id ON r (id)");
        run("SELECT bt_index_check('r_id', heapallindexed => true)");
        assert!(
            one::<bool>("SELECT allequalimage FROM bt_metap('r_id')"),
            "btree deduplication is allowed"
        );
        run("CREATE TABLE s AS SELECT id FROM r WHERE i % 3 = 0");
        run("ANALYZE r; ANALYZE s");
        let join =
            "SELECT count(*), sum(hashtext(r.id::text)::bigint) FROM r JOIN s ON r.id = s.id";
        let mut results = Vec::new();
        for (method, settings) in [
            (
                "Hash Join",
                "SET LOCAL enable_mergejoin = off; SET LOCAL enable_nestloop = off",
            ),
            (
                "Merge Join",
                "SET LOCAL enable_hashjoin = off; SET LOCAL enable_nestloop = off",
            ),
            (
                "Nested Loop",
                "SET LOCAL enable_hashjoin = off; SET LOCAL enable_mergejoin = off",
            ),
        ] {
            run("RESET enable_hashjoin; RESET enable_mergejoin; RESET enable_nestloop");
            run(settings);
            let plan = plan_of(join);
            assert!(plan.contains(method), "{method}: {plan}");
            results.push(text(&format!(
                "SELECT format('%s %s', count, sum) FROM ({join}) j"
            )));
        }
        assert_eq!(results[0], results[1]);
        assert_eq!(results[1], results[2]);
        assert!(results[0].starts_with("333333 "), "{}", results[0]);
    }

    #[pg_test]
    fn min_and_max_aggregate_and_use_the_index() {
        run("CREATE TABLE m (id sno PRIMARY KEY)");
        run("INSERT INTO m SELECT substring(sha256(i::text::bytea) FROM 1 FOR 10)::sno FROM generate_series(1, 10000) i");
        assert!(one::<bool>(
            "SELECT min(id) = (SELECT id FROM m ORDER BY id LIMIT 1) AND max(id) = (SELECT id FROM m ORDER BY id DESC LIMIT 1) FROM m"
        ));
        run("ANALYZE m");
        let plan = plan_of("SELECT max(id) FROM m");
        assert!(
            plan.contains("\"Index Only Scan\"") && plan.contains("\"Backward\""),
            "{plan}"
        );
        assert_eq!(
            text("SELECT format('%s|%s', min(id), max(id)) FROM (VALUES (NULL::sno)) v(id)"),
            "|"
        );
    }

    #[pg_test]
    fn hash_aggregation_and_hash_partitioning_work() {
        run("CREATE TABLE p (id sno) PARTITION BY HASH (id)");
        for remainder in 0..4 {
            run(&format!("CREATE TABLE p{remainder} PARTITION OF p FOR VALUES WITH (MODULUS 4, REMAINDER {remainder})"));
        }
        run("INSERT INTO p SELECT substring(sha256(i::text::bytea) FROM 1 FOR 10)::sno FROM generate_series(1, 10000) i");
        for remainder in 0..4 {
            let rows = one::<i64>(&format!("SELECT count(*) FROM p{remainder}"));
            assert!((2000..3000).contains(&rows), "p{remainder} has {rows} rows");
        }
        assert_eq!(
            one::<i64>("SELECT count(*) FROM p WHERE id = substring(sha256('77'::bytea) FROM 1 FOR 10)::sno"),
            1,
            "partition pruning finds the row"
        );
        run("SET LOCAL enable_sort = off");
        assert_eq!(
            one::<i64>("SELECT count(*) FROM (SELECT id FROM p GROUP BY id) g"),
            10000
        );
        assert!(
            one::<bool>("SELECT sno_hash_extended(x, 0) & 4294967295 = sno_hash(x)::bigint & 4294967295 AND sno_hash_extended(x, 1) <> sno_hash_extended(x, 0) FROM (VALUES ('brpk4q72xwf2m63l'::sno)) v(x)"),
            "seed 0 extends the standard hash; other seeds differ"
        );
    }

    #[pg_test]
    fn a_brin_index_answers_a_time_range_query() {
        run("CREATE TABLE log (id sno)");
        run("INSERT INTO log SELECT sno_from_parts('2024-01-01'::timestamptz + i * interval '10 ms', 1, 1, 0) FROM generate_series(1, 200000) i");
        run("CREATE INDEX log_brin ON log USING brin (id)");
        run("ANALYZE log");
        run("SET LOCAL enable_seqscan = off");
        let query = "SELECT count(*) FROM log WHERE id >= sno_min('2024-01-01 00:10') AND id <= sno_max('2024-01-01 00:19:59.999')";
        let plan = plan_of(query);
        assert!(
            plan.contains("Bitmap Index Scan") && plan.contains("log_brin"),
            "{plan}"
        );
        assert_eq!(one::<i64>(query), 60_000);
    }

    #[pg_test]
    fn copy_text_and_binary_round_trip() {
        run("CREATE TABLE src AS SELECT substring(sha256(i::text::bytea) FROM 1 FOR 10)::sno AS id FROM generate_series(1, 10000) i");
        for format in ["text", "binary"] {
            let file = format!("/tmp/sno_copy_test_{}.{format}", std::process::id());
            run(&format!("COPY src TO '{file}' (FORMAT {format})"));
            run("CREATE TEMP TABLE dst (id sno)");
            run(&format!("COPY dst FROM '{file}' (FORMAT {format})"));
            assert_eq!(
                one::<i64>("SELECT count(*) FROM (SELECT * FROM src EXCEPT ALL SELECT * FROM dst UNION ALL SELECT * FROM dst EXCEPT ALL SELECT * FROM src) diff"),
                0,
                "{format}"
            );
            assert_eq!(one::<i64>("SELECT count(*) FROM dst"), 10000);
            run("DROP TABLE dst");
            let _ = std::fs::remove_file(&file);
        }
    }

    #[pg_test]
    fn binary_input_of_the_wrong_length_fails_with_22p03() {
        let file = format!("/tmp/sno_copy_test_{}.bad", std::process::id());
        run(&format!(
            "COPY (SELECT '\\x4e6f2160a0ff9a0a10'::bytea) TO '{file}' (FORMAT binary)"
        ));
        run("CREATE TEMP TABLE dst (id sno)");
        assert_eq!(
            error_of(&format!("COPY dst FROM '{file}' (FORMAT binary)")),
            "22P03: invalid binary sno: 9 bytes, a sno is 10"
        );
        let _ = std::fs::remove_file(&file);
    }

    #[pg_test]
    fn every_object_has_a_comment() {
        let missing = text(
            "SELECT coalesce(string_agg(pg_describe_object(classid, objid, 0), ', '), 'none') \
             FROM pg_depend d \
             WHERE refclassid = 'pg_extension'::regclass \
               AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'sno') \
               AND deptype = 'e' \
               AND obj_description(objid, classid::regclass::name) IS NULL \
               AND pg_describe_object(classid, objid, 0) NOT LIKE '% tests.%' \
               AND pg_describe_object(classid, objid, 0) <> 'schema tests'",
        );
        assert_eq!(missing, "none");
    }

    #[pg_test]
    fn generated_ids_carry_meta_and_the_configured_partition() {
        run("SET TIME ZONE 'UTC'");
        assert_eq!(
            text("SELECT format('%s %s %s', sno_meta(id), sno_partition(id), sno_tick_tock(id)) FROM (SELECT sno_generate(7) id) g"),
            "7 4242 0"
        );
        assert_eq!(one::<i32>("SELECT sno_meta(sno_generate())"), 0);
        assert!(
            one::<bool>(
                "SELECT abs(extract(epoch FROM sno_time(sno_generate()) - clock_timestamp())) < 1"
            ),
            "the ID's time is now"
        );
        assert!(
            one::<bool>("SELECT bool_and(a < b) FROM (SELECT id a, lead(id) OVER (ORDER BY n) b FROM (SELECT n, sno_generate(1) id FROM generate_series(1, 100000) n) s) t WHERE b IS NOT NULL"),
            "one session's IDs rise"
        );
    }

    #[pg_test]
    fn generate_rejects_meta_outside_a_byte() {
        for meta in ["256", "-1"] {
            assert_eq!(
                error_of(&format!("SELECT sno_generate({meta})")),
                format!("22003: sno meta {meta} is out of range 0..255")
            );
        }
        assert_eq!(
            error_of("SELECT sno_generate_at(300, now())"),
            "22003: sno meta 300 is out of range 0..255"
        );
    }

    // Backfill cursors and the state file outlive a test run, so the times are relative to
    // now(): a later run backfills later times, going forward as cursors need.
    #[pg_test]
    fn generate_at_stamps_the_time_and_the_backfill_partition() {
        assert_eq!(
            text("SELECT format('%s %s %s %s', sno_time(id) = sno_time(sno_min(t)), sno_tick_tock(id), sno_meta(id), sno_partition(id)) FROM (SELECT t, sno_generate_at(42, t) id FROM (SELECT now() - interval '1 year' AS t) AS n) g"),
            "t 0 42 4243"
        );
        assert_eq!(
            one::<i64>("SELECT count(DISTINCT sno_generate_at(1, now() - interval '1 day')) FROM generate_series(1, 1000)"),
            1000
        );
        assert_eq!(
            error_of("SELECT sno_generate_at(1, '2009-12-31 23:59:59+00')"),
            "22008: timestamp out of range for sno / A sno holds times from 2010-01-01 00:00:00+00 to 2079-09-07 15:47:35.548+00."
        );
    }

    #[pg_test]
    fn settings_cannot_be_changed_in_a_session() {
        assert_eq!(text("SHOW sno.partition"), "4242");
        for setting in [
            "sno.partition = 1",
            "sno.sequence_min = 5",
            "sno.sequence_max = 9",
            "sno.backfill_partition = 9",
        ] {
            let name = setting.split(' ').next().unwrap();
            assert_eq!(
                error_of(&format!("SET {setting}")),
                format!("55P02: parameter \"{name}\" cannot be changed now")
            );
        }
        assert_eq!(
            one::<i64>("SELECT count(*) FROM pg_settings WHERE name LIKE 'sno.%' AND context = 'sighup' AND short_desc <> ''"),
            4
        );
    }

    #[pg_test]
    fn stats_report_the_settings() {
        run("SELECT sno_generate(1)");
        assert_eq!(
            text("SELECT format('%s %s %s', partition, sequence_min, sequence_max) FROM sno_generator_stats()"),
            "4242 0 65535"
        );
        assert!(one::<bool>(
            "SELECT generated > 0 AND persisted_through >= last_time FROM sno_generator_stats()"
        ));
    }
}
