//! Encode, decode and generation costs of the core, without PostgreSQL.
//!
//! `cargo bench --manifest-path benches/Cargo.toml` (a package of its own: see its Cargo.toml).
//! Targets (issue 2): encode <= 3 ns, decode <= 5 ns, generation with a fixed clock <= 5 ns. The
//! clock reads are measured alone too, since they dominate generation with a real clock.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use sno::{Clock, CoarseClock, Config, Generator, Lease, ManualClock, RealtimeClock, Sno};
use std::hint::black_box;
use std::time::SystemTime;

const FIXED_MS: i64 = 1_714_521_600_000;

fn sample_ids() -> Vec<Sno> {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    (0..1024)
        .map(|_| {
            let mut bytes = [0u8; 10];
            for b in &mut bytes {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                *b = state as u8;
            }
            Sno::from_bytes(bytes)
        })
        .collect()
}

fn text_form(c: &mut Criterion) {
    let ids = sample_ids();
    let texts: Vec<[u8; 16]> = ids.iter().map(Sno::encode).collect();
    let mut group = c.benchmark_group("text");
    group.throughput(Throughput::Elements(ids.len() as u64));
    group.bench_function("encode", |b| {
        b.iter(|| {
            for id in &ids {
                black_box(black_box(id).encode());
            }
        })
    });
    group.bench_function("decode", |b| {
        b.iter(|| {
            for text in &texts {
                black_box(Sno::decode(black_box(text)).unwrap());
            }
        })
    });
    group.finish();
}

fn clocks(c: &mut Criterion) {
    let mut group = c.benchmark_group("clock");
    group.bench_function("SystemTime::now", |b| {
        b.iter(|| black_box(SystemTime::now()))
    });
    group.bench_function("CLOCK_REALTIME", |b| {
        b.iter(|| black_box(RealtimeClock.unix_millis()))
    });
    group.bench_function("CLOCK_REALTIME_COARSE", |b| {
        b.iter(|| black_box(CoarseClock.unix_millis()))
    });
    // What a lease does instead of a reading while its run lasts: read the CPU's counter and
    // compare (the deadline itself soon passes; the check costs the same either way).
    let deadline = RealtimeClock.deadline(RealtimeClock.unix_millis() + 4);
    group.bench_function("deadline check (time-stamp counter)", |b| {
        b.iter(|| black_box(RealtimeClock.is_before(black_box(deadline))))
    });
    group.finish();
    eprintln!(
        "deadlines timed by the time-stamp counter: {}",
        RealtimeClock::has_timer()
    );
    eprintln!(
        "CLOCK_REALTIME_COARSE resolution (clock_getres): {:?}",
        CoarseClock::resolution()
    );
}

fn generation(c: &mut Criterion) {
    let mut group = c.benchmark_group("generate");
    // The fixed clock moves only when the generator waits on it (once per 65,536 IDs, when the
    // unit's pool is spent), so this measures the claim itself.
    let fixed = ManualClock::new(FIXED_MS);
    let generator = Generator::new(Config::new(1));
    group.bench_function("fixed clock", |b| {
        b.iter(|| black_box(generator.generate(1, &fixed).unwrap()))
    });
    // What the extension does: most IDs come from the caller's run, one swap per 32 IDs.
    let generator = Generator::new(Config::new(1));
    let mut lease = Lease::new();
    group.bench_function("fixed clock, leased", |b| {
        b.iter(|| black_box(lease.generate(&generator, 1, &fixed).unwrap()))
    });
    let generator = Generator::new(Config::new(1));
    group.bench_function("CLOCK_REALTIME", |b| {
        b.iter(|| black_box(generator.generate(1, &RealtimeClock).unwrap()))
    });
    group.bench_function("CLOCK_REALTIME_COARSE", |b| {
        b.iter(|| black_box(generator.generate(1, &CoarseClock).unwrap()))
    });
    group.bench_function("CLOCK_REALTIME, leased", |b| {
        b.iter(|| black_box(lease.generate(&generator, 1, &RealtimeClock).unwrap()))
    });
    group.finish();
}

/// Two threads on one generator: the cost per ID of each while the other generates too.
fn contended_generation(c: &mut Criterion) {
    let mut group = c.benchmark_group("generate, 2 threads");
    let generator = Generator::new(Config::new(1));
    let cases = [
        ("CLOCK_REALTIME", false, false),
        ("CLOCK_REALTIME_COARSE", true, false),
        ("CLOCK_REALTIME, leased", false, true),
        ("CLOCK_REALTIME_COARSE, leased", true, true),
    ];
    for (name, coarse, leased) in cases {
        group.bench_function(name, |b| {
            b.iter_custom(|iters| {
                let start = std::time::Instant::now();
                std::thread::scope(|scope| {
                    for _ in 0..2 {
                        scope.spawn(|| {
                            let mut lease = Lease::new();
                            for _ in 0..iters {
                                let id = match (coarse, leased) {
                                    (false, false) => generator.generate(1, &RealtimeClock),
                                    (true, false) => generator.generate(1, &CoarseClock),
                                    (false, true) => lease.generate(&generator, 1, &RealtimeClock),
                                    (true, true) => lease.generate(&generator, 1, &CoarseClock),
                                };
                                black_box(id.unwrap());
                            }
                        });
                    }
                });
                start.elapsed()
            })
        });
    }
    group.finish();
}

criterion_group!(benches, text_form, clocks, generation, contended_generation);
criterion_main!(benches);
