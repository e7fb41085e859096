//! Names each PostgreSQL major's code paths once: for the major a `pgNN` feature selects, it sets
//! the cfg `pgMM_or_later` for every major MM up to it (on 17: `pg15_or_later`, `pg16_or_later`,
//! `pg17_or_later`). Code that changed in a major is written `#[cfg(pg18_or_later)]` and
//! `#[cfg(not(pg18_or_later))]`, never with a feature of one major, so that a new major takes
//! the newest code path without anyone enumerating it at every site.

/// The majors that have a `pgNN` feature (Cargo.toml), oldest first.
const MAJORS: [u32; 7] = [13, 14, 15, 16, 17, 18, 19];

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    for major in MAJORS {
        println!("cargo::rustc-check-cfg=cfg(pg{major}_or_later)");
    }
    let selected = MAJORS
        .iter()
        .copied()
        .filter(|major| std::env::var_os(format!("CARGO_FEATURE_PG{major}")).is_some())
        .collect::<Vec<_>>();
    // More than one major is an error that pgrx reports better; without one, the crate is the
    // core alone, which has no major's code.
    if let [major] = selected[..] {
        for older in MAJORS.iter().filter(|older| **older <= major) {
            println!("cargo::rustc-cfg=pg{older}_or_later");
        }
    }
}
