//! `Sno` as a Diesel model's primary key, through the crate's `diesel` feature: insert with the
//! server's default and the ID back, get by ID, a time window with `sno_min`, order, bulk insert,
//! a foreign key, a string where an ID is expected, and the reference vectors of SPEC.md read and
//! sorted the same in Rust and in SQL. Connects with PGHOST, PGPORT and PGUSER; the vectors'
//! file is the first argument. Prints PASS/FAIL per check and a summary.

use diesel::connection::SimpleConnection;
use diesel::dsl::sql;
use diesel::prelude::*;
use diesel::result::{DatabaseErrorKind, Error};
use diesel::sql_types::{Array, Int4, Nullable, Text, Timestamptz};
use sno::{Parts, Sno, Units};
use std::fmt::Debug;

diesel::table! {
    items (id) {
        id -> sno::sql_types::Sno,
        n -> Int4,
    }
}

diesel::table! {
    children (id) {
        id -> sno::sql_types::Sno,
        item_id -> sno::sql_types::Sno,
    }
}

diesel::table! {
    vectors (k) {
        k -> Int4,
        id -> sno::sql_types::Sno,
    }
}

diesel::joinable!(children -> items (item_id));
diesel::allow_tables_to_appear_in_same_query!(items, children);

diesel::define_sql_function!(fn sno_min(at: Timestamptz) -> sno::sql_types::Sno);

#[derive(Queryable, Selectable, Insertable, Debug, PartialEq)]
#[diesel(table_name = items)]
struct Item {
    id: Sno,
    n: i32,
}

#[derive(QueryableByName, Debug, PartialEq)]
struct N {
    #[diesel(sql_type = Int4)]
    n: i32,
}

struct Checks {
    passed: u32,
    failed: u32,
}

impl Checks {
    fn check<T: PartialEq + Debug>(&mut self, name: &str, got: T, expected: T) {
        if got == expected {
            self.passed += 1;
            println!("PASS: {name}");
        } else {
            self.failed += 1;
            println!("FAIL: {name}\n  expected: {expected:?}\n  got:      {got:?}");
        }
    }
}

fn env(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| panic!("{name} is not set"))
}

/// An ID for a time of the application's choosing, built in Rust.
fn id_at(unix_ms: i64, sequence: u16) -> Sno {
    Sno::from_parts(Parts {
        time: Units::from_unix_millis(unix_ms).unwrap(),
        meta: 7,
        partition: 500,
        sequence,
        ..Parts::default()
    })
}

const JAN_2021: i64 = 1_609_459_200_000;
const JAN_2022: i64 = 1_640_995_200_000;
const JAN_2023: i64 = 1_672_531_200_000;

fn server_default_and_lookups(conn: &mut PgConnection, checks: &mut Checks) {
    let made: Sno = diesel::insert_into(items::table)
        .values(items::n.eq(1))
        .returning(items::id)
        .get_result(conn)
        .unwrap();
    let text: String = items::table
        .filter(items::n.eq(1))
        .select(sql::<Text>("id::text"))
        .first(conn)
        .unwrap();
    checks.check(
        "insert with the server default returns the ID",
        made.to_string(),
        text,
    );
    checks.check(
        "... made by sno_generate(1) on partition 31",
        (made.meta(), made.partition()),
        (1, 31),
    );
    let found: Item = items::table.find(made).first(conn).unwrap();
    checks.check("get by ID", found, Item { id: made, n: 1 });
    let missing = items::table
        .find(id_at(JAN_2021, 0))
        .first::<Item>(conn)
        .optional()
        .unwrap();
    checks.check("get by an ID not there finds nothing", missing, None);

    let bulk: Vec<Sno> = diesel::insert_into(items::table)
        .values((2..=6).map(|n| items::n.eq(n)).collect::<Vec<_>>())
        .returning(items::id)
        .get_results(conn)
        .unwrap();
    let mut sorted = bulk.clone();
    sorted.sort();
    checks.check(
        "bulk insert returns 5 IDs, in order",
        (bulk.len(), &sorted),
        (5, &bulk),
    );
    let ordered: Vec<i32> = items::table
        .order(items::id.desc())
        .select(items::n)
        .load(conn)
        .unwrap();
    checks.check(
        "ORDER BY id DESC is the insert order reversed",
        ordered,
        vec![6, 5, 4, 3, 2, 1],
    );
}

fn time_window(conn: &mut PgConnection, checks: &mut Checks) {
    let old = [
        Item {
            id: id_at(JAN_2021, 0),
            n: 2021,
        },
        Item {
            id: id_at(JAN_2022 - 1, 0),
            n: 2021,
        },
        Item {
            id: id_at(JAN_2022, 0),
            n: 2022,
        },
        Item {
            id: id_at(JAN_2023 - 1, 9),
            n: 2022,
        },
        Item {
            id: id_at(JAN_2023, 0),
            n: 2023,
        },
    ];
    diesel::insert_into(items::table)
        .values(&old[..])
        .execute(conn)
        .unwrap();
    let in_2022 = |from, to| {
        items::table
            .filter(items::id.ge(sno_min(sql::<Timestamptz>(from))))
            .filter(items::id.lt(sno_min(sql::<Timestamptz>(to))))
            .select(items::id)
            .order(items::id)
    };
    let window: Vec<Sno> = in_2022("'2022-01-01Z'", "'2023-01-01Z'")
        .load(conn)
        .unwrap();
    checks.check(
        "sno_min time window: 2022's IDs",
        window,
        vec![old[2].id, old[3].id],
    );
    let from_rust: Vec<Sno> = items::table
        .filter(items::id.ge(Sno::min_at(Units::from_unix_millis(JAN_2022).unwrap())))
        .filter(items::id.lt(Sno::min_at(Units::from_unix_millis(JAN_2023).unwrap())))
        .select(items::id)
        .order(items::id)
        .load(conn)
        .unwrap();
    checks.check(
        "the same window with Rust's Sno::min_at",
        from_rust,
        vec![old[2].id, old[3].id],
    );
    let sql_min: Sno = diesel::select(sno_min(sql::<Timestamptz>("'2021-11-12T01:43:02.123Z'")))
        .get_result(conn)
        .unwrap();
    checks.check(
        "sno_min in SQL is Sno::min_at in Rust",
        sql_min,
        Sno::min_at(Units::from_unix_millis(1_636_681_382_123).unwrap()),
    );
}

fn foreign_key(conn: &mut PgConnection, checks: &mut Checks) {
    let parent: Sno = items::table
        .filter(items::n.eq(3))
        .select(items::id)
        .first(conn)
        .unwrap();
    let child: Sno = diesel::insert_into(children::table)
        .values(children::item_id.eq(parent))
        .returning(children::id)
        .get_result(conn)
        .unwrap();
    let joined: (Sno, Sno, i32) = children::table
        .inner_join(items::table)
        .select((children::id, items::id, items::n))
        .first(conn)
        .unwrap();
    checks.check(
        "a foreign key to a sno key, joined",
        joined,
        (child, parent, 3),
    );
    checks.check("... the child's ID has meta 2", child.meta(), 2);
    let orphan = diesel::insert_into(children::table)
        .values(children::item_id.eq(id_at(JAN_2021, 1)))
        .execute(conn);
    checks.check(
        "a child of no item is a foreign key violation",
        matches!(
            orphan,
            Err(Error::DatabaseError(
                DatabaseErrorKind::ForeignKeyViolation,
                _
            ))
        ),
        true,
    );
}

/// A string where an ID is expected: Diesel's query builder does not compile it (the doc test of
/// with_diesel.rs), so it comes either parsed in Rust or as a raw SQL parameter typed text.
fn strings(conn: &mut PgConnection, checks: &mut Checks) {
    let text: String = items::table
        .filter(items::n.eq(1))
        .select(sql::<Text>("id::text"))
        .first(conn)
        .unwrap();
    let parsed: Sno = text.parse().unwrap();
    checks.check(
        "a string parsed in Rust finds by value",
        items::table
            .find(parsed)
            .select(items::n)
            .first::<i32>(conn)
            .unwrap(),
        1,
    );
    checks.check(
        "a bad string is an error in Rust, before any query",
        "brpk4q72xwf2m631".parse::<Sno>().is_err(),
        true,
    );
    let as_text = diesel::sql_query("SELECT n FROM items WHERE id = $1")
        .bind::<Text, _>("brpk4q72xwf2m63l")
        .execute(conn);
    let message = match as_text {
        Err(Error::DatabaseError(_, info)) => info.message().to_string(),
        other => format!("{other:?}"),
    };
    checks.check(
        "a text parameter compared with a sno column is refused by the server",
        message,
        "operator does not exist: sno = text".to_string(),
    );
    let cast: Vec<N> = diesel::sql_query("SELECT n FROM items WHERE id = $1::sno")
        .bind::<Text, _>(&text)
        .load(conn)
        .unwrap();
    checks.check(
        "the workaround: a text parameter cast to sno in the SQL",
        cast,
        vec![N { n: 1 }],
    );
    let typed: Vec<N> = diesel::sql_query("SELECT n FROM items WHERE id = $1")
        .bind::<sno::sql_types::Sno, _>(parsed)
        .load(conn)
        .unwrap();
    checks.check(
        "... or the parameter bound as a Sno",
        typed,
        vec![N { n: 1 }],
    );
}

fn arrays_and_nulls(conn: &mut PgConnection, checks: &mut Checks) {
    let ids = vec![id_at(JAN_2022, 1), Sno::NIL, Sno::MAX];
    let round: Vec<Sno> = diesel::select(ids.clone().into_sql::<Array<sno::sql_types::Sno>>())
        .get_result(conn)
        .unwrap();
    checks.check("an array of sno in and out", round, ids);
    let none: Option<Sno> = diesel::select(sql::<Nullable<sno::sql_types::Sno>>("NULL::sno"))
        .get_result(conn)
        .unwrap();
    checks.check("a NULL sno is None", none, None);
}

/// An ID as text, Unix milliseconds and (tick-tock, meta, partition, sequence).
type Decoded = (String, i64, (bool, u8, u16, u16));

struct Vector {
    id: Sno,
    text: String,
    unix_ms: i64,
    parts: (bool, u8, u16, u16),
}

fn read_vectors(path: &str) -> Vec<Vector> {
    let file = std::fs::read_to_string(path).unwrap();
    file.lines()
        .filter(|line| !line.starts_with('#') && !line.is_empty())
        .map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            let bytes: Vec<u8> = (0..10)
                .map(|i| u8::from_str_radix(&f[0][2 * i..2 * i + 2], 16).unwrap())
                .collect();
            Vector {
                id: Sno::try_from(&bytes[..]).unwrap(),
                text: f[1].to_string(),
                unix_ms: f[2].parse().unwrap(),
                parts: (
                    f[3] == "1",
                    f[4].parse().unwrap(),
                    f[5].parse().unwrap(),
                    f[6].parse().unwrap(),
                ),
            }
        })
        .collect()
}

/// The reference vectors decode in Rust as in Go, go in and come back through Diesel unchanged,
/// and sort the same in Rust and in SQL.
fn reference_vectors(conn: &mut PgConnection, checks: &mut Checks, path: &str) {
    let vectors = read_vectors(path);
    let decoded: Vec<Decoded> = vectors
        .iter()
        .map(|v| {
            let id = v.id;
            (
                id.to_string(),
                id.unix_millis(),
                (id.tick_tock(), id.meta(), id.partition(), id.sequence()),
            )
        })
        .collect();
    let expected: Vec<_> = vectors
        .iter()
        .map(|v| (v.text.clone(), v.unix_ms, v.parts))
        .collect();
    checks.check(
        "reference vectors: decoded in Rust as in Go",
        decoded,
        expected.clone(),
    );
    let rows: Vec<(i32, Sno)> = vectors
        .iter()
        .enumerate()
        .map(|(k, v)| (k as i32, v.id))
        .collect();
    diesel::insert_into(vectors::table)
        .values(
            rows.iter()
                .map(|(k, id)| (vectors::k.eq(k), vectors::id.eq(id)))
                .collect::<Vec<_>>(),
        )
        .execute(conn)
        .unwrap();
    let in_sql: Vec<Decoded> = vectors::table
        .order(vectors::k)
        .select((
            sql::<Text>("id::text"),
            sql::<diesel::sql_types::Int8>("(extract(epoch FROM sno_time(id)) * 1000)::int8"),
            sql::<Int4>("sno_tick_tock(id)"),
            sql::<Int4>("sno_meta(id)"),
            sql::<Int4>("sno_partition(id)"),
            sql::<Int4>("sno_sequence(id)"),
        ))
        .load::<(String, i64, i32, i32, i32, i32)>(conn)
        .unwrap()
        .into_iter()
        .map(|(t, ms, tick, m, p, s)| (t, ms, (tick == 1, m as u8, p as u16, s as u16)))
        .collect();
    checks.check(
        "reference vectors: decoded in SQL as in Go",
        in_sql,
        expected,
    );
    let back: Vec<(i32, Sno)> = vectors::table
        .order(vectors::k)
        .select((vectors::k, vectors::id))
        .load(conn)
        .unwrap();
    checks.check(
        "reference vectors: through Diesel and back unchanged",
        back,
        rows.clone(),
    );
    let mut in_rust = rows.clone();
    in_rust.sort_by_key(|&(k, id)| (id, k));
    let sql_order: Vec<i32> = vectors::table
        .order((vectors::id, vectors::k))
        .select(vectors::k)
        .load(conn)
        .unwrap();
    checks.check(
        "reference vectors: ORDER BY id in SQL is Rust's order",
        sql_order,
        in_rust.iter().map(|&(k, _)| k).collect(),
    );
}

fn main() {
    let vectors_file = std::env::args()
        .nth(1)
        .expect("usage: sno-diesel-tests VECTORS_FILE");
    let url = format!(
        "host={} port={} user={} dbname=postgres",
        env("PGHOST"),
        env("PGPORT"),
        env("PGUSER")
    );
    let mut conn = PgConnection::establish(&url).unwrap();
    conn.batch_execute(
        "CREATE TEMP TABLE items (id sno PRIMARY KEY DEFAULT sno_generate(1), n int NOT NULL);
         CREATE TEMP TABLE children (id sno PRIMARY KEY DEFAULT sno_generate(2),
                                     item_id sno NOT NULL REFERENCES items);
         CREATE TEMP TABLE vectors (k int PRIMARY KEY, id sno NOT NULL)",
    )
    .unwrap();
    let mut checks = Checks {
        passed: 0,
        failed: 0,
    };
    server_default_and_lookups(&mut conn, &mut checks);
    time_window(&mut conn, &mut checks);
    foreign_key(&mut conn, &mut checks);
    strings(&mut conn, &mut checks);
    arrays_and_nulls(&mut conn, &mut checks);
    reference_vectors(&mut conn, &mut checks, &vectors_file);
    println!("{} passed, {} failed", checks.passed, checks.failed);
    std::process::exit(if checks.failed == 0 { 0 } else { 1 });
}
