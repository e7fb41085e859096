//! Runs the model of many writers (`benches/writers/`): per load and key, the virtual insert
//! rate and the index bytes per row of the arrival order against one writer's, over several
//! seeds; with `--what-if`, the experiments on 64 clients of docs/benchmarks.md.
//!
//! ```text
//! cargo run --release --manifest-path benches/Cargo.toml --bin writers_model -- \
//!     [--seeds N] [--rows N] [--out DIR] [--set FIELD=VALUE]... [--what-if] [LOAD/KEY ...]
//! ```
//!
//! Without LOAD/KEY pairs (`bulk16/lease`, ...) it runs every load with every key. With
//! `--out DIR` it writes the first seed's arrival order of each to DIR/LOAD-KEY.TYPE, one key
//! a line, for benches/sql/replay_arrival.sh.

#[allow(dead_code)]
mod writers;

use std::io::Write;
use writers::btree::{partitioned_bytes_per_row, Index, KeyWidth};
use writers::sources::{sno_text, Source};
use writers::{loads, simulate, simulate_locked, Load, BULK_16, ONE_ROW_64};

struct Options {
    seeds: u64,
    rows: usize,
    out: Option<String>,
    overrides: Vec<String>,
    what_if: bool,
    wanted: Vec<String>,
}

fn main() {
    let options = parse(std::env::args().skip(1));
    if options.what_if {
        what_if(&options);
        return;
    }
    println!(
        "| load | key | rows/s (virtual) | bytes/row | one writer | vs one writer, mean of {} seeds | range |",
        options.seeds
    );
    println!("|---|---|--:|--:|--:|--:|--:|");
    for (load_name, mut load) in loads() {
        for set in &options.overrides {
            set_field(&mut load, set);
        }
        for source in Source::ALL {
            let name = format!("{load_name}/{}", source.name());
            if !options.wanted.is_empty() && !options.wanted.contains(&name) {
                continue;
            }
            let runs: Vec<_> = (1..=options.seeds)
                .map(|seed| simulate(&load, source, options.rows, seed))
                .collect();
            let sizes: Vec<(f64, f64)> = runs.iter().map(|run| run.index_size()).collect();
            let ratios: Vec<f64> = sizes.iter().map(|(c, one)| c / one).collect();
            println!(
                "| {load_name} | {} | {:.0} | {:.1} | {:.1} | {:.2}x | {:.2}–{:.2} |",
                source.name(),
                mean(runs.iter().map(|run| run.rows_per_second())),
                mean(sizes.iter().map(|s| s.0)),
                mean(sizes.iter().map(|s| s.1)),
                mean(ratios.iter().copied()),
                ratios.iter().copied().fold(f64::MAX, f64::min),
                ratios.iter().copied().fold(f64::MIN, f64::max),
            );
            if let Some(dir) = &options.out {
                let path = format!("{dir}/{load_name}-{}.{}", source.name(), run_type(source));
                write_keys(&path, &runs[0].arrival, source.width() == KeyWidth::Sno);
            }
        }
    }
}

/// 64 clients on 16 cores: what makes `bigint` identity stay compact where sno does not, and
/// what would change sno's figure (docs/benchmarks.md, "Why bigint identity stays compact").
fn what_if(options: &Options) {
    let slower = Load {
        // The think time that brings sno down to identity's measured 147,000 rows/s.
        think_ns: 115_000.0,
        ..ONE_ROW_64
    };
    let cases: [(&str, Load, Source, bool); 7] = [
        ("sno, one CAS per ID", ONE_ROW_64, Source::PerId, false),
        ("sno, today's lease", ONE_ROW_64, Source::Lease, false),
        (
            "bigint identity (sequence lock)",
            ONE_ROW_64,
            Source::Identity,
            true,
        ),
        (
            "bigint identity without the lock: sno's rate",
            ONE_ROW_64,
            Source::Identity,
            false,
        ),
        (
            "sno at identity's rate (slower clients)",
            slower,
            Source::PerId,
            false,
        ),
        (
            "sno behind a lock per ID, like nextval()",
            ONE_ROW_64,
            Source::PerId,
            true,
        ),
        (
            "16 bulk writers, today's lease: the cost",
            BULK_16,
            Source::Lease,
            false,
        ),
    ];
    println!("| 64 one-row clients unless said | rows/s (virtual) | vs one writer | hash-partitioned x16 | fillfactor 80, vs one writer at 90 |");
    println!("|---|--:|--:|--:|--:|");
    for (name, load, source, locked) in cases {
        let mut rates = Vec::new();
        let mut plain = Vec::new();
        let mut hashed = Vec::new();
        let mut roomy = Vec::new();
        for seed in 1..=options.seeds {
            let run = simulate_locked(&load, source, options.rows, seed, locked);
            let (concurrent, one_writer) = run.index_size();
            rates.push(run.rows_per_second());
            plain.push(concurrent / one_writer);
            hashed.push(partitioned_bytes_per_row(run.width, &run.arrival, 16) / one_writer);
            let mut index = Index::with_fill_factor(run.width, 0.80);
            run.arrival.iter().for_each(|&key| index.insert(key));
            roomy.push(index.bytes_per_row() / one_writer);
        }
        println!(
            "| {name} | {:.0} | {:.2}x | {:.2}x | {:.2}x |",
            mean(rates.into_iter()),
            mean(plain.into_iter()),
            mean(hashed.into_iter()),
            mean(roomy.into_iter())
        );
    }
}

fn run_type(source: Source) -> &'static str {
    source.width().sql_type()
}

fn mean(values: impl Iterator<Item = f64>) -> f64 {
    let (sum, count) = values.fold((0.0, 0), |(s, n), v| (s + v, n + 1));
    sum / count as f64
}

fn parse(mut args: impl Iterator<Item = String>) -> Options {
    let mut options = Options {
        seeds: 5,
        rows: 300_000,
        out: None,
        overrides: Vec::new(),
        what_if: false,
        wanted: Vec::new(),
    };
    while let Some(arg) = args.next() {
        let mut value = |flag: &str| {
            args.next()
                .unwrap_or_else(|| panic!("{flag} needs a value"))
        };
        match arg.as_str() {
            "--seeds" => options.seeds = value("--seeds").parse().expect("--seeds N"),
            "--rows" => options.rows = value("--rows").parse().expect("--rows N"),
            "--out" => options.out = Some(value("--out")),
            "--set" => options.overrides.push(value("--set")),
            "--what-if" => options.what_if = true,
            _ => options.wanted.push(arg),
        }
    }
    options
}

/// `--set FIELD=VALUE`: changes one parameter of every load run, to try a calibration.
fn set_field(load: &mut Load, set: &str) {
    let (field, value) = set.split_once('=').expect("--set FIELD=VALUE");
    let value: f64 = value.parse().expect("a number");
    let slot = match field {
        "think_ns" => &mut load.think_ns,
        "prepare_ns" => &mut load.prepare_ns,
        "leaf_ns" => &mut load.leaf_ns,
        "sequence_lock_ns" => &mut load.sequence_lock_ns,
        "wake_ns" => &mut load.wake_ns,
        "jitter" => &mut load.jitter,
        "spread" => &mut load.spread,
        "deschedule_p" => &mut load.deschedule_p,
        "deschedule_ns" => &mut load.deschedule_ns,
        _ => panic!("no parameter {field}"),
    };
    *slot = value;
}

fn write_keys(path: &str, keys: &[u128], sno: bool) {
    let file = std::fs::File::create(path).expect("the output directory exists");
    let mut file = std::io::BufWriter::new(file);
    for &key in keys {
        if sno {
            writeln!(file, "{}", sno_text(key))
        } else {
            writeln!(file, "{key}")
        }
        .expect("written");
    }
}
