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
//!    model of a built-in key (`sources.rs`); `bigint` identity first takes the sequence's
//!    buffer lock, held `sequence_lock_ns` per value;
//! 3. *prepare*: forming the row and inserting it into the heap, before the index insert;
//!    with probability `deschedule_p` the writer is descheduled here for `deschedule_ns`, give
//!    or take half of it (more sessions than cores);
//! 4. *leaf*: the right-edge leaf's lock, held `leaf_ns` per insert. The key reaches the index
//!    when the writer gets the lock.
//!
//! Both locks behave as PostgreSQL's LWLock ([`LwLock`]): free for whoever comes first, one
//! sleeping waiter woken at a time, `wake_ns` after the release. Every duration varies by
//! `jitter` around its mean, and each writer runs at its own speed (`spread`). Everything
//! random comes from one seed, so a run is exactly repeatable. The parameters of each load,
//! and where they come from, are in docs/benchmarks.md ("A model of many writers").

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

/// One load: the writers and the time each step of a row takes, in nanoseconds (see the
/// module documentation for the steps).
#[derive(Copy, Clone, Debug)]
pub struct Load {
    pub writers: usize,
    pub think_ns: f64,
    pub prepare_ns: f64,
    /// How long an insert holds the right-edge leaf.
    pub leaf_ns: f64,
    /// A sequence without a cache (`bigint` identity): the sequence page's buffer lock, held
    /// this long per value. 0: generation takes no lock.
    pub sequence_lock_ns: f64,
    /// How long a writer woken for a lock it waited on takes to run.
    pub wake_ns: f64,
    /// Each duration is its mean give or take this part of it, uniformly.
    pub jitter: f64,
    /// Each writer's durations are scaled by its own factor, 1 give or take this.
    pub spread: f64,
    /// The chance that a writer is descheduled between making its key and inserting it, and
    /// for how long (give or take half).
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

/// A PostgreSQL LWLock taken exclusively: a writer that finds it free takes it at once, even
/// ahead of sleeping waiters; a release wakes the first waiter (one at a time), which takes
/// the lock if it is still free when it runs and otherwise queues again at the tail.
#[derive(Default)]
struct LwLock {
    held: bool,
    waiters: std::collections::VecDeque<usize>,
    waking: bool,
}

impl LwLock {
    /// Whether `writer` got the lock; if not, it sleeps in the queue.
    fn acquire(&mut self, writer: usize) -> bool {
        if self.held {
            self.waiters.push_back(writer);
            return false;
        }
        self.held = true;
        true
    }

    /// Releases the lock; the waiter to wake, if one is to be woken.
    fn release(&mut self) -> Option<usize> {
        self.held = false;
        if self.waking {
            return None;
        }
        let woken = self.waiters.pop_front();
        self.waking = woken.is_some();
        woken
    }

    /// A woken writer runs: whether it got the lock (if not, it sleeps in the queue again).
    fn woken_runs(&mut self, writer: usize) -> bool {
        self.waking = false;
        self.acquire(writer)
    }
}

/// A descheduled writer waits its mean time give or take this part of it: about a time slice
/// of the tasks ahead of it.
const DESCHEDULE_SPREAD: f64 = 0.5;

#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Lock {
    Sequence,
    Leaf,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Step {
    /// Done thinking: wants a key.
    WantsKey,
    /// Holds the sequence's lock (or needs none): makes the key.
    Generate,
    /// Made the key and let go of the sequence's lock: prepares the row.
    Prepare,
    /// Asks for the right-edge leaf.
    WantsLeaf,
    /// Done inserting: lets go of the leaf.
    Inserted,
    /// Woken for a lock it waited on.
    Woken(Lock),
}

struct Model<'a> {
    load: &'a Load,
    /// The sequence lock's hold time, for the one key that takes it (else 0).
    sequence_lock_ns: f64,
    rng: Rng,
    clock: VirtualClock,
    keys: Keys,
    speed: Vec<f64>,
    pending: Vec<u128>,
    events: BinaryHeap<Reverse<(i64, u64, Step, usize)>>,
    order: u64,
    sequence: LwLock,
    leaf: LwLock,
    arrival: Vec<u128>,
}

/// Runs `load` with keys from `source` until `rows` keys reached the index. Only `bigint`
/// identity takes the sequence's lock.
pub fn simulate(load: &Load, source: Source, rows: usize, seed: u64) -> Run {
    simulate_locked(load, source, rows, seed, source == Source::Identity)
}

/// [`simulate`], with every key made under the sequence's lock (`locked`) or none: what sno
/// would do if `sno_generate` took a lock per ID, as `nextval()` does.
pub fn simulate_locked(load: &Load, source: Source, rows: usize, seed: u64, locked: bool) -> Run {
    let mut rng = Rng::new(seed);
    let speed: Vec<f64> = (0..load.writers)
        .map(|_| rng.around(1.0, load.spread))
        .collect();
    let mut model = Model {
        load,
        sequence_lock_ns: if locked { load.sequence_lock_ns } else { 0.0 },
        rng,
        clock: VirtualClock::default(),
        keys: Keys::new(source, load.writers),
        speed,
        pending: vec![0; load.writers],
        events: BinaryHeap::new(),
        order: 0,
        sequence: LwLock::default(),
        leaf: LwLock::default(),
        arrival: Vec::with_capacity(rows),
    };
    for writer in 0..load.writers {
        let start = model.rng.unit() * (load.think_ns + load.prepare_ns) * model.speed[writer];
        model.schedule(start, Step::WantsKey, writer);
    }
    let mut now = 0.0;
    while model.arrival.len() < rows {
        let Reverse((at, _, step, writer)) = model.events.pop().expect("writers never stop");
        now = at as f64;
        model.step(now, step, writer);
    }
    assert_eq!(
        model.clock.waits(),
        0,
        "the loads stay below a partition's capacity"
    );
    Run {
        arrival: model.arrival,
        width: source.width(),
        seconds: now / 1e9,
    }
}

impl Model<'_> {
    fn schedule(&mut self, at: f64, step: Step, writer: usize) {
        self.order += 1;
        self.events
            .push(Reverse((at.round() as i64, self.order, step, writer)));
    }

    fn step(&mut self, now: f64, step: Step, writer: usize) {
        let load = self.load;
        let pace = self.speed[writer];
        match step {
            Step::WantsKey if self.sequence_lock_ns > 0.0 => {
                if self.sequence.acquire(writer) {
                    self.schedule(now, Step::Generate, writer);
                }
            }
            Step::WantsKey => self.schedule(now, Step::Generate, writer),
            Step::Generate => {
                self.clock.set(now as i64);
                self.pending[writer] = self.keys.next(writer, &self.clock);
                if self.sequence_lock_ns > 0.0 {
                    let held = self.rng.around(self.sequence_lock_ns, load.jitter);
                    self.schedule(now + held, Step::Prepare, writer);
                } else {
                    self.schedule(now, Step::Prepare, writer);
                }
            }
            Step::Prepare => {
                if self.sequence_lock_ns > 0.0 {
                    self.release(now, Lock::Sequence);
                }
                let mut ready = now + self.rng.around(load.prepare_ns * pace, load.jitter);
                if self.rng.chance(load.deschedule_p) {
                    ready += self.rng.around(load.deschedule_ns, DESCHEDULE_SPREAD);
                }
                self.schedule(ready, Step::WantsLeaf, writer);
            }
            Step::WantsLeaf => {
                if self.leaf.acquire(writer) {
                    self.insert(now, writer);
                }
            }
            Step::Inserted => {
                self.release(now, Lock::Leaf);
                let next = now + self.rng.around(load.think_ns * pace, load.jitter);
                self.schedule(next, Step::WantsKey, writer);
            }
            Step::Woken(Lock::Sequence) => {
                if self.sequence.woken_runs(writer) {
                    self.schedule(now, Step::Generate, writer);
                }
            }
            Step::Woken(Lock::Leaf) => {
                if self.leaf.woken_runs(writer) {
                    self.insert(now, writer);
                }
            }
        }
    }

    /// `writer` holds the leaf: its key reaches the index now.
    fn insert(&mut self, now: f64, writer: usize) {
        self.arrival.push(self.pending[writer]);
        let held = self.rng.around(self.load.leaf_ns, self.load.jitter);
        self.schedule(now + held, Step::Inserted, writer);
    }

    fn release(&mut self, now: f64, lock: Lock) {
        let woken = match lock {
            Lock::Sequence => self.sequence.release(),
            Lock::Leaf => self.leaf.release(),
        };
        if let Some(waiter) = woken {
            let load = self.load;
            let runs_at = now + self.rng.around(load.wake_ns, load.jitter);
            self.schedule(runs_at, Step::Woken(lock), waiter);
        }
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
    leaf_ns: 1_000.0,
    sequence_lock_ns: 1_300.0,
    wake_ns: 2_000.0,
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
    leaf_ns: 1_000.0,
    sequence_lock_ns: 1_000.0,
    wake_ns: 2_000.0,
    jitter: 0.5,
    spread: 0.3,
    deschedule_p: 0.0,
    deschedule_ns: 0.0,
};

/// The same with 64 clients on 16 cores.
pub const ONE_ROW_64: Load = Load {
    writers: 64,
    think_ns: 60_000.0,
    prepare_ns: 4_000.0,
    leaf_ns: 1_000.0,
    sequence_lock_ns: 3_000.0,
    wake_ns: 8_000.0,
    jitter: 0.5,
    spread: 0.3,
    deschedule_p: 0.12,
    deschedule_ns: 2_500_000.0,
};
