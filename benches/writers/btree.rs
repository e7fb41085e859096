//! The pages of a one-column PostgreSQL B-tree built by inserting keys in a given order, without
//! PostgreSQL: the split rules of `nbtsplitloc.c` for fixed-size unique keys.
//!
//! Why this stands in for a real index: with one key column and keys of one size, a leaf's
//! split point depends only on which keys the page holds and whether it is the rightmost leaf.
//! The rightmost leaf splits by the fill factor (90% left, `usemult`), any other leaf so that
//! both halves have equal free space, and the "localized monotonic insert" heuristic
//! (`_bt_afternewitemoff`) is skipped for one-column indexes. Every split point of a unique
//! one-column index has the same suffix-truncation penalty, so the one with the best free-space
//! balance wins. No deduplication happens (no equal keys). The leaves are simulated exactly;
//! the inner levels, under 1% of the pages, are estimated (`inner_pages`).
//! `benches/sql/replay_arrival.sh` checks the result against PostgreSQL itself.

use std::collections::BTreeMap;

/// Bytes a leaf page has for items: 8192 less the page header (24) and the B-tree's special
/// space (16).
const PAGE_SPACE: i64 = 8192 - 24 - 16;
/// A leaf's fill factor (BTREE_DEFAULT_FILLFACTOR) and the inner pages' (BTREE_NONLEAF_FILLFACTOR).
const LEAF_FILL: f64 = 0.90;
const INNER_FILL: f64 = 0.70;

/// The size of the key column, which decides how many index tuples a page holds.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum KeyWidth {
    /// `sno`: 10 bytes, a tuple of 8 + 10 padded to 24.
    Sno,
    /// `bigint`: 8 bytes, a tuple of 16.
    Bigint,
}

impl KeyWidth {
    /// A leaf item's bytes: the tuple, MAXALIGNed, and its 4-byte line pointer.
    fn item_bytes(self) -> i64 {
        match self {
            KeyWidth::Sno => 24 + 4,
            KeyWidth::Bigint => 16 + 4,
        }
    }

    pub fn sql_type(self) -> &'static str {
        match self {
            KeyWidth::Sno => "sno",
            KeyWidth::Bigint => "bigint",
        }
    }
}

/// A leaf: its keys in order; every leaf but the rightmost also has a high key.
struct Leaf {
    keys: Vec<u128>,
}

/// The leaves of the index as keys arrive; keyed by each leaf's lowest possible key.
pub struct Index {
    width: KeyWidth,
    /// The rightmost leaf's split point: PostgreSQL's `fillfactor` of the index / 100.
    fill: f64,
    leaves: BTreeMap<u128, Leaf>,
    rows: u64,
}

impl Index {
    pub fn new(width: KeyWidth) -> Index {
        Index::with_fill_factor(width, LEAF_FILL)
    }

    /// An index created `WITH (fillfactor = 100 * fill)`.
    pub fn with_fill_factor(width: KeyWidth, fill: f64) -> Index {
        let mut leaves = BTreeMap::new();
        leaves.insert(0, Leaf { keys: Vec::new() });
        Index {
            width,
            fill,
            leaves,
            rows: 0,
        }
    }

    /// The index built by inserting `keys` in this order.
    pub fn built_from(width: KeyWidth, keys: &[u128]) -> Index {
        let mut index = Index::new(width);
        for &key in keys {
            index.insert(key);
        }
        index
    }

    /// Inserts `key`, splitting its leaf if it is full.
    pub fn insert(&mut self, key: u128) {
        let item = self.width.item_bytes();
        let (&low, _) = self
            .leaves
            .range(..=key)
            .next_back()
            .expect("leaf 0 covers all");
        let rightmost = self.leaves.range(low + 1..).next().is_none();
        let leaf = self.leaves.get_mut(&low).expect("found above");
        let at = leaf.keys.partition_point(|&k| k < key);
        assert!(
            leaf.keys.get(at) != Some(&key),
            "keys are unique in a primary key"
        );
        leaf.keys.insert(at, key);
        self.rows += 1;
        let high_key = if rightmost { 0 } else { item };
        if leaf.keys.len() as i64 * item + high_key > PAGE_SPACE {
            let split = split_point(leaf.keys.len() as i64, item, rightmost, self.fill);
            let right = leaf.keys.split_off(split);
            self.leaves.insert(right[0], Leaf { keys: right });
        }
    }

    pub fn leaf_pages(&self) -> u64 {
        self.leaves.len() as u64
    }

    /// Leaves, estimated inner pages and the metapage: what `pg_relation_size` counts.
    pub fn pages(&self) -> u64 {
        self.leaf_pages() + inner_pages(self.leaf_pages(), self.width) + 1
    }

    pub fn bytes_per_row(&self) -> f64 {
        (self.pages() * 8192) as f64 / self.rows as f64
    }
}

/// How many of `count` items (the new one among them) stay on the left of a split:
/// `_bt_recsplitloc`'s free-space balance, the left page keeping room for a high key as large
/// as the first right item plus a heap TID.
fn split_point(count: i64, item: i64, rightmost: bool, fill: f64) -> usize {
    let old_high_key = if rightmost { 0 } else { item };
    (1..count)
        .filter_map(|left| {
            let left_free = PAGE_SPACE - left * item - (item + 8);
            let right_free = PAGE_SPACE - old_high_key - (count - left) * item;
            if left_free < 0 || right_free < 0 {
                return None;
            }
            let delta = if rightmost {
                fill * left_free as f64 - (1.0 - fill) * right_free as f64
            } else {
                (left_free - right_free) as f64
            };
            Some((delta.abs(), left))
        })
        .min_by(|a, b| a.0.total_cmp(&b.0))
        .expect("a full page has a split point")
        .1 as usize
}

/// Inner pages above `leaves`: downlinks arrive mostly at the right edge, so inner pages fill
/// to their fill factor; an estimate, since they are a fraction of a percent of the index.
fn inner_pages(leaves: u64, width: KeyWidth) -> u64 {
    let per_page = ((PAGE_SPACE / width.item_bytes()) as f64 * INNER_FILL).floor() as u64;
    let mut level = leaves;
    let mut total = 0;
    while level > 1 {
        level = level.div_ceil(per_page);
        total += level;
    }
    total
}

/// Index bytes per row of `keys` inserted in this order, against the same keys in order (what
/// one writer gives): 1.0 is as compact as one writer.
pub fn size_vs_sorted(width: KeyWidth, arrival: &[u128]) -> (f64, f64) {
    let mut sorted = arrival.to_vec();
    sorted.sort_unstable();
    let concurrent = Index::built_from(width, arrival).bytes_per_row();
    let one_writer = Index::built_from(width, &sorted).bytes_per_row();
    (concurrent, one_writer)
}

/// Index bytes per row of `arrival` in a table `PARTITION BY HASH` into `parts` partitions:
/// each partition's index gets its share of the keys in the same order. Any hash that scatters
/// keys gives the same picture as PostgreSQL's.
pub fn partitioned_bytes_per_row(width: KeyWidth, arrival: &[u128], parts: u64) -> f64 {
    let mut indexes: Vec<Index> = (0..parts).map(|_| Index::new(width)).collect();
    for &key in arrival {
        let mut hash = super::rng::Rng::new(key as u64 ^ (key >> 64) as u64);
        indexes[(hash.next_u64() % parts) as usize].insert(key);
    }
    let pages: u64 = indexes.iter().map(Index::pages).sum();
    (pages * 8192) as f64 / arrival.len() as f64
}
