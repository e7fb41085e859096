//! Runs the model of many writers (`benches/writers/`) and prints, per load and key, the
//! virtual insert rate and the index bytes per row of the arrival order against one writer's.
//!
//! ```text
//! cargo run --release --manifest-path benches/Cargo.toml --bin writers_model -- \
//!     [--seed N] [--rows N] [--out DIR] [LOAD/SOURCE ...]
//! ```
//!
//! Without LOAD/SOURCE pairs it runs every load with every source. With `--out DIR` it writes
//! each arrival order to DIR/LOAD-SOURCE.TYPE, one key a line, for benches/sql/replay_arrival.sh.

#[allow(dead_code)]
mod writers;

use std::io::Write;
use writers::sources::{sno_text, Source};
use writers::{loads, simulate};

fn main() {
    let mut seed = 1u64;
    let mut rows = 300_000usize;
    let mut out = None;
    let mut wanted = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--seed" => seed = args.next().and_then(|v| v.parse().ok()).expect("--seed N"),
            "--rows" => rows = args.next().and_then(|v| v.parse().ok()).expect("--rows N"),
            "--out" => out = Some(args.next().expect("--out DIR")),
            _ => wanted.push(arg),
        }
    }
    println!("| load | key | rows/s (virtual) | bytes/row | one writer | vs one writer |");
    println!("|---|---|--:|--:|--:|--:|");
    for (load_name, load) in loads() {
        for source in Source::ALL {
            let name = format!("{load_name}/{}", source.name());
            if !wanted.is_empty() && !wanted.contains(&name) {
                continue;
            }
            let run = simulate(&load, source, rows, seed);
            let (concurrent, one_writer) = run.index_size();
            println!(
                "| {load_name} | {} | {:.0} | {concurrent:.1} | {one_writer:.1} | {:.2}x |",
                source.name(),
                run.rows_per_second(),
                concurrent / one_writer
            );
            if let Some(dir) = &out {
                let path = format!(
                    "{dir}/{load_name}-{}.{}",
                    source.name(),
                    run.width.sql_type()
                );
                write_keys(
                    &path,
                    &run.arrival,
                    source.width() == writers::btree::KeyWidth::Sno,
                );
            }
        }
    }
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
