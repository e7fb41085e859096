//! The guard for many writers (issue 27): in the model of `benches/writers/`, which drives this
//! crate's real `Generator` and `Lease` with virtual writers on a virtual clock, today's lease
//! keeps the primary-key index within 3% of one writer's at 16 bulk writers and at 16 one-row
//! clients, calibrated on a 16-core machine's measurements; the lease before it (runs kept to
//! the end of their unit) does not.
//!
//! Deterministic: the same seed gives the same arrival order on any machine, however many cores
//! it has, and the index is simulated leaf by leaf with PostgreSQL's split rules, so this is a
//! test rather than a benchmark. `benches/sql/replay_arrival.sh` replays the same arrival orders
//! into PostgreSQL: its index bytes per row agreed with the simulation's to 0.1 byte in all 15
//! loads (docs/benchmarks.md, "A model of many writers").

#[allow(dead_code)]
#[path = "../benches/writers/mod.rs"]
mod writers;

use writers::btree::{Index, KeyWidth};
use writers::sources::Source;
use writers::{simulate, Load, BULK_16, ONE_ROW_16};

/// Enough rows for a few hundred leaf pages: the ratios move by under 1% from here to 300,000.
const ROWS: usize = 100_000;
const LIMIT: f64 = 1.03;

fn size_ratio(load: &Load, source: Source, seed: u64) -> f64 {
    simulate(load, source, ROWS, seed).size_ratio()
}

/// Today's lease under `load`, two seeds: within 3% of one writer's bytes per row.
fn assert_compact_with_todays_lease(load: &Load) {
    for seed in [1, 2] {
        let ratio = size_ratio(load, Source::Lease, seed);
        assert!(
            ratio <= LIMIT,
            "seed {seed}: {ratio:.3}x one writer's bytes per row"
        );
    }
}

#[test]
fn todays_lease_keeps_16_bulk_writers_within_3_percent_of_one_writer() {
    assert_compact_with_todays_lease(&BULK_16);
}

#[test]
fn todays_lease_keeps_16_one_row_clients_within_3_percent_of_one_writer() {
    assert_compact_with_todays_lease(&ONE_ROW_16);
}

/// The check can fail: the lease measured at 1.32x and 1.26x on 16 cores fails it here too.
#[test]
fn the_lease_before_stale_runs_fails_the_same_check() {
    for load in [BULK_16, ONE_ROW_16] {
        let ratio = size_ratio(&load, Source::OldLease, 1);
        assert!(ratio > 1.15, "{} writers: {ratio:.3}x", load.writers);
    }
}

#[test]
fn the_model_is_deterministic_for_a_seed() {
    let first = simulate(&ONE_ROW_16, Source::Lease, 20_000, 7).arrival;
    let again = simulate(&ONE_ROW_16, Source::Lease, 20_000, 7).arrival;
    let other = simulate(&ONE_ROW_16, Source::Lease, 20_000, 8).arrival;
    assert_eq!(first, again);
    assert_ne!(first, other);
}

/// Keys in order fill leaves to 90% (the rightmost leaf splits 90:10): PostgreSQL 15 gives
/// 31.6 bytes per row for one sno writer and 22.5 for `bigint` (docs/benchmarks.md).
#[test]
fn the_simulated_index_of_keys_in_order_has_postgresqls_size() {
    let keys: Vec<u128> = (1..=300_000).collect();
    let sno = Index::built_from(KeyWidth::Sno, &keys).bytes_per_row();
    let bigint = Index::built_from(KeyWidth::Bigint, &keys).bytes_per_row();
    assert_eq!(format!("{sno:.1} {bigint:.1}"), "31.6 22.5");
}

/// A key arriving after its leaf left the right edge goes into a 90% full leaf, which then
/// splits 50:50: every other key first, then the rest, makes the index 1.5 times one writer's
/// (leaves two thirds full instead of 90%).
#[test]
fn late_keys_split_leaves_in_half() {
    let early = (1..=100_000u128).map(|k| 2 * k);
    let late = (1..=100_000u128).map(|k| 2 * k - 1);
    let keys: Vec<u128> = early.chain(late).collect();
    let mut index = Index::new(KeyWidth::Sno);
    keys.iter().for_each(|&k| index.insert(k));
    let in_order = Index::built_from(KeyWidth::Sno, &(1..=200_000).collect::<Vec<_>>());
    let ratio = index.bytes_per_row() / in_order.bytes_per_row();
    assert!((1.45..1.55).contains(&ratio), "{ratio:.3}x");
}
