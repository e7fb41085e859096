//! `Sno` through the `postgres` crate and sqlx, with no cast in the SQL: an ID made in Rust with
//! the same core the extension uses goes in as its 10 bytes, and server-made IDs come back as
//! `Sno`. Connects with PGHOST, PGPORT and PGUSER; prints PASS/FAIL per check and a summary.

use sno::{Config, Generator, RealtimeClock, Sno};
use std::fmt::Debug;

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

fn sample() -> Sno {
    "brpk4q72xwf2m63l".parse().unwrap()
}

/// An ID made in the application, offline, by the same generator the extension runs.
fn made_here() -> Sno {
    Generator::new(Config::new(4242))
        .generate(9, &RealtimeClock)
        .unwrap()
}

fn env(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| panic!("{name} is not set"))
}

fn with_postgres(checks: &mut Checks) {
    let config = format!(
        "host={} port={} user={} dbname=postgres",
        env("PGHOST"),
        env("PGPORT"),
        env("PGUSER")
    );
    let mut client = postgres::Client::connect(&config, postgres::NoTls).unwrap();
    client
        .batch_execute("CREATE TEMP TABLE t (id sno PRIMARY KEY DEFAULT sno_generate(1), n int)")
        .unwrap();
    let ours = made_here();
    client
        .execute("INSERT INTO t VALUES ($1, 1), ($2, 2)", &[&sample(), &ours])
        .unwrap();
    let row = client
        .query_one("SELECT id, n FROM t WHERE id = $1", &[&ours])
        .unwrap();
    checks.check(
        "postgres: an ID made in Rust, in INSERT and WHERE",
        (row.get::<_, Sno>(0), row.get::<_, i32>(1)),
        (ours, 2),
    );
    let made: Sno = client
        .query_one("INSERT INTO t (n) VALUES (3) RETURNING id", &[])
        .unwrap()
        .get(0);
    let text: String = client
        .query_one("SELECT id::text FROM t WHERE n = 3", &[])
        .unwrap()
        .get(0);
    checks.check("postgres: a server-made ID as Sno", made.to_string(), text);
    checks.check(
        "postgres: ... with meta 1 and partition 31",
        (made.meta(), made.partition()),
        (1, 31),
    );
    let ids: Vec<Sno> = client
        .query_one("SELECT ARRAY[$1::sno, $2]", &[&sample(), &ours])
        .unwrap()
        .get(0);
    checks.check("postgres: an array of sno", ids, vec![sample(), ours]);
    let refused = client
        .query_one("SELECT $1::int", &[&sample()])
        .err()
        .map(|e| e.to_string());
    checks.check(
        "postgres: a Sno is refused for another type",
        refused.is_some_and(|e| e.contains("error serializing parameter 0")),
        true,
    );
}

async fn with_sqlx(checks: &mut Checks) {
    let url = format!(
        "postgres://{}@localhost/postgres?host={}&port={}",
        env("PGUSER"),
        env("PGHOST"),
        env("PGPORT")
    );
    let mut conn = <sqlx::PgConnection as sqlx::Connection>::connect(&url)
        .await
        .unwrap();
    sqlx::query("CREATE TEMP TABLE t (id sno PRIMARY KEY DEFAULT sno_generate(1), n int)")
        .execute(&mut conn)
        .await
        .unwrap();
    let ours = made_here();
    sqlx::query("INSERT INTO t VALUES ($1, 1)")
        .bind(ours)
        .execute(&mut conn)
        .await
        .unwrap();
    let (id, n): (Sno, i32) = sqlx::query_as("SELECT id, n FROM t WHERE id = $1")
        .bind(ours)
        .fetch_one(&mut conn)
        .await
        .unwrap();
    checks.check(
        "sqlx: an ID made in Rust, in INSERT and WHERE",
        (id, n),
        (ours, 1),
    );
    let (made,): (Sno,) = sqlx::query_as("INSERT INTO t (n) VALUES (2) RETURNING id")
        .fetch_one(&mut conn)
        .await
        .unwrap();
    checks.check(
        "sqlx: a server-made ID as Sno",
        (made.meta(), made.partition()),
        (1, 31),
    );
    let ids: (Vec<Sno>,) = sqlx::query_as("SELECT ARRAY[$1::sno, $2::sno]")
        .bind(sample())
        .bind(ours)
        .fetch_one(&mut conn)
        .await
        .unwrap();
    checks.check("sqlx: an array of sno", ids.0, vec![sample(), ours]);
}

fn main() {
    let mut checks = Checks {
        passed: 0,
        failed: 0,
    };
    // The synchronous client runs a runtime of its own, so it runs outside sqlx's.
    with_postgres(&mut checks);
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(with_sqlx(&mut checks));
    println!("{} passed, {} failed", checks.passed, checks.failed);
    std::process::exit(if checks.failed == 0 { 0 } else { 1 });
}
