//! A deterministic model of many sessions inserting generated keys into one B-tree, to see
//! what many cores do from a machine that has two (issue 27).
//!
//! A one-column B-tree's shape depends only on the order in which keys reach it (see
//! `btree.rs`), so what needs modelling is that order: when each writer called the generator,
//! what it got, and when its row reached the right-edge leaf. N virtual writers repeat, on a
//! virtual timeline in nanoseconds:
//!
//! 1. *think*: the work between one row's index insert and the next row's key (for a bulk
//!    `INSERT ... SELECT`, the next row of the query; for one-row transactions, the commit,
//!    the client's round trip and the next statement's start);
//! 2. *generate*: the real generator (`Generator`, `Lease`) at the virtual clock's time, or a
//!    model of a built-in key (`sources.rs`); a sequence without a cache is one buffer lock
//!    that writers take in turn (`sequence_lock_ns`);
//! 3. *prepare*: forming the row and inserting it into the heap, before the index insert;
//!    with probability `deschedule_p` the writer is descheduled here for an exponentially
//!    distributed time of mean `deschedule_ns` (more sessions than cores);
//! 4. *leaf*: the right-edge leaf's lock, held `leaf_ns` per insert, taken first come, first
//!    served. The key reaches the index when the writer gets the lock.
//!
//! Every duration varies by `jitter` around its mean, and each writer runs at its own speed
//! (`spread`). Everything random comes from one seed, so a run is exactly repeatable.

pub mod btree;
pub mod clock;
pub mod rng;
pub mod sources;

use btree::KeyWidth;
use clock::VirtualClock;
use rng::Rng;
use sources::{Keys, Source};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// One load: the writers and the time each step of a row takes, in nanoseconds.
#[derive(Copy, Clone, Debug)]
pub struct Load {
    pub writers: usize,
    pub think_ns: f64,
    pub prepare_ns: f64,
    pub leaf_ns: f64,
    /// A sequence without a cache (`bigint` identity): the sequence page's buffer lock, held
    /// this long per value. 0: generation takes no lock.
    pub sequence_lock_ns: f64,
    pub jitter: f64,
    pub spread: f64,
    pub deschedule_p: f64,
    pub deschedule_ns: f64,
}

/// What a run of the model gives.
pub struct Run {
    /// The keys in the order they reached the index.
    pub arrival: Vec<u128>,
    pub width: KeyWidth,
    /// Virtual seconds the rows took.
    pub seconds: f64,
}

impl Run {
    pub fn rows_per_second(&self) -> f64 {
        self.arrival.len() as f64 / self.seconds
    }

    /// Index bytes per row of the arrival order and of the same keys in order (one writer).
    pub fn index_size(&self) -> (f64, f64) {
        btree::size_vs_sorted(self.width, &self.arrival)
    }

    /// The arrival order's index size as a multiple of one writer's.
    pub fn size_ratio(&self) -> f64 {
        let (concurrent, one_writer) = self.index_size();
        concurrent / one_writer
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Step {
    Think,
    Generate,
    Leaf,
    Inserted,
}

/// Runs `load` with keys from `source` until `rows` keys reached the index.
pub fn simulate(load: &Load, source: Source, rows: usize, seed: u64) -> Run {
    let mut rng = Rng::new(seed);
    let clock = VirtualClock::default();
    let mut keys = Keys::new(source, load.writers);
    let speed: Vec<f64> = (0..load.writers)
        .map(|_| rng.around(1.0, load.spread))
        .collect();
    let mut pending: Vec<u128> = vec![0; load.writers];
    let mut events = BinaryHeap::new();
    let mut order = 0u64;
    let mut schedule = |events: &mut BinaryHeap<_>, at: f64, step: Step, writer: usize| {
        order += 1;
        events.push(Reverse((at.round() as i64, order, step, writer)));
    };
    for writer in 0..load.writers {
        let start = rng.unit() * (load.think_ns + load.prepare_ns) * speed[writer];
        schedule(&mut events, start, Step::Think, writer);
    }
    let mut leaf_free = 0.0f64;
    let mut sequence_free = 0.0f64;
    let mut arrival = Vec::with_capacity(rows);
    let mut now = 0.0;
    while arrival.len() < rows {
        let Reverse((at, _, step, writer)) = events.pop().expect("writers never stop");
        now = at as f64;
        let pace = speed[writer];
        match step {
            Step::Think => {
                // Done thinking: make the key, after the sequence's lock if there is one.
                let at = if load.sequence_lock_ns > 0.0 {
                    let granted = now.max(sequence_free);
                    sequence_free = granted + rng.around(load.sequence_lock_ns, load.jitter);
                    granted
                } else {
                    now
                };
                schedule(&mut events, at, Step::Generate, writer);
            }
            Step::Generate => {
                clock.set(at);
                pending[writer] = keys.next(writer, &clock);
                let mut ready = now + rng.around(load.prepare_ns * pace, load.jitter);
                if rng.chance(load.deschedule_p) {
                    ready += rng.exponential(load.deschedule_ns);
                }
                schedule(&mut events, ready, Step::Leaf, writer);
            }
            Step::Leaf => {
                // First come, first served: the order of these events is the index's order.
                arrival.push(pending[writer]);
                let granted = now.max(leaf_free);
                leaf_free = granted + rng.around(load.leaf_ns, load.jitter);
                schedule(&mut events, leaf_free, Step::Inserted, writer);
            }
            Step::Inserted => {
                let next = now + rng.around(load.think_ns * pace, load.jitter);
                schedule(&mut events, next, Step::Think, writer);
            }
        }
    }
    assert_eq!(
        clock.waits(),
        0,
        "the loads stay below a partition's capacity"
    );
    Run {
        arrival,
        width: source.width(),
        seconds: now / 1e9,
    }
}

/// The loads measured on 16 cores (issue 14), with the parameters justified in
/// docs/benchmarks.md ("A model of many writers").
pub fn loads() -> [(&'static str, Load); 3] {
    [
        ("bulk16", BULK_16),
        ("onerow16", ONE_ROW_16),
        ("onerow64", ONE_ROW_64),
    ]
}

/// 16 sessions each running `INSERT INTO t (v) SELECT g FROM generate_series(1, 500000) g`.
pub const BULK_16: Load = Load {
    writers: 16,
    think_ns: 3_000.0,
    prepare_ns: 3_000.0,
    leaf_ns: 1_950.0,
    sequence_lock_ns: 0.0,
    jitter: 0.3,
    spread: 0.1,
    deschedule_p: 0.0,
    deschedule_ns: 0.0,
};

/// pgbench, 16 clients, one-row `INSERT INTO t (v) VALUES (1)` transactions.
pub const ONE_ROW_16: Load = Load {
    writers: 16,
    think_ns: 85_000.0,
    prepare_ns: 4_000.0,
    leaf_ns: 1_500.0,
    sequence_lock_ns: 0.0,
    jitter: 0.5,
    spread: 0.1,
    deschedule_p: 0.0,
    deschedule_ns: 0.0,
};

/// The same with 64 clients on 16 cores.
pub const ONE_ROW_64: Load = Load {
    writers: 64,
    think_ns: 350_000.0,
    prepare_ns: 4_000.0,
    leaf_ns: 1_500.0,
    sequence_lock_ns: 0.0,
    jitter: 0.5,
    spread: 0.1,
    deschedule_p: 0.02,
    deschedule_ns: 3_000_000.0,
};
