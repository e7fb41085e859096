//! What tells this server apart from every copy of it, for the partition registry: the instance,
//! a random token its postmaster makes when it starts, and the resume secret, which a clean
//! shutdown leaves in the data directory for the next start of that same directory.
//!
//! Why not the system identifier, timeline, address or port: a clone made with pg_basebackup, a
//! restored file copy or snapshot, and a promoted standby share the system identifier; clones
//! behind one proxy, NAT or pooler share the address; containers share the port. A postmaster
//! shares its memory with nothing but its own children, so a token made there is this run's
//! alone. It is made once, in the postmaster while it loads sno, and kept for the postmaster's
//! life: backends and workers inherit it (fork), and so do the ones started after a crash
//! restart, which keeps the lease.
//!
//! A clean shutdown gives the lease back; the next start is another instance. So that it still
//! gets its partition back at once, the lease holder writes a fresh secret into the data
//! directory before giving the lease back, and the registry keeps its SHA-256: only a start
//! of that data directory as it was at the shutdown shows it (a copy taken while the server
//! ran has an older secret, already used, or none).

use pgrx::pg_sys;
use std::io::Write;
use std::sync::OnceLock;

/// The file in the data directory that holds the resume secret.
pub(crate) const RESUME_FILE: &str = "sno_lease_resume";

static INSTANCE: OnceLock<[u8; 16]> = OnceLock::new();

/// Makes this postmaster's instance token; call from `_PG_init` while preloading.
pub(crate) fn make() {
    INSTANCE.get_or_init(random_bytes::<16>);
}

/// This server's instance, as a UUID's text (version 4 bits set, so that it reads as one).
pub(crate) fn instance() -> String {
    let mut bytes = *INSTANCE.get_or_init(random_bytes::<16>);
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    let hex = hex(&bytes);
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

/// The resume secret the last clean shutdown left, as bytea's hex text, if there is one.
pub(crate) fn resume_secret() -> Option<String> {
    let bytes = std::fs::read(RESUME_FILE).ok()?;
    (bytes.len() == 32).then(|| format!("\\x{}", hex(&bytes)))
}

/// Writes a fresh resume secret into the data directory, durably, and returns it as bytea's hex
/// text: written before the lease is given back, so that a crash between the two leaves a
/// secret the registry does not know, never a lease given back that no start can take again at
/// once (which would only cost a wait).
pub(crate) fn write_resume_secret() -> std::io::Result<String> {
    let secret = random_bytes::<32>();
    let temporary = format!("{RESUME_FILE}.tmp");
    let mut file = std::fs::File::create(&temporary)?;
    file.write_all(&secret)?;
    file.sync_all()?;
    std::fs::rename(&temporary, RESUME_FILE)?;
    std::fs::File::open(".")?.sync_all()?;
    Ok(format!("\\x{}", hex(&secret)))
}

fn random_bytes<const N: usize>() -> [u8; N] {
    let mut bytes = [0u8; N];
    // SAFETY: fills the buffer it is given; PostgreSQL's source of strong randomness.
    let filled = unsafe { pg_sys::pg_strong_random(bytes.as_mut_ptr().cast(), N) };
    assert!(
        filled,
        "sno: no strong random numbers for the instance token"
    );
    bytes
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}
