//! Host names of a connection string resolved within a deadline, before libpq connects.
//!
//! libpq looks names up with `getaddrinfo`, which blocks for as long as the system's resolver
//! takes (seconds per server tried, times its retries), and no deadline of libpq's covers it: a
//! lease holder stuck there would outlive its lease's deadline without trying again. Here each
//! name is looked up on a short-lived thread of its own while the caller waits at most until
//! the deadline; libpq then gets the addresses as `hostaddr`, and still checks TLS certificates
//! against the names in `host`. The thread touches nothing of PostgreSQL's, and starts with every
//! signal blocked, so that the server's signals still reach the process's main thread. A lookup
//! that outlasts the deadline is left to end by itself.
//!
//! What changes for a name with several addresses: libpq would try each in turn; here the first
//! the resolver gives is used.

use std::net::{IpAddr, ToSocketAddrs};
use std::sync::mpsc;
use std::time::Instant;

/// For each entry of a connection string's `host` list, the address to give as `hostaddr`
/// (empty for a socket directory, an address already, or an empty entry), or `None` when no
/// entry is a name to look up.
pub(crate) fn addresses_within(hosts: &str, deadline: Instant) -> Result<Option<String>, String> {
    let entries: Vec<&str> = hosts.split(',').map(str::trim).collect();
    if !entries.iter().copied().any(is_name) {
        return Ok(None);
    }
    let addresses = entries
        .iter()
        .map(|&entry| {
            if is_name(entry) {
                lookup(entry, deadline).map(|address| address.to_string())
            } else {
                Ok(String::new())
            }
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Some(addresses.join(",")))
}

/// A host name, as opposed to a Unix socket directory (an absolute path, or `@` for Linux's
/// abstract namespace), an address, or nothing.
fn is_name(entry: &str) -> bool {
    !(entry.is_empty()
        || entry.starts_with('/')
        || entry.starts_with('@')
        || entry.parse::<IpAddr>().is_ok())
}

fn lookup(name: &str, deadline: Instant) -> Result<IpAddr, String> {
    let (sender, receiver) = mpsc::channel();
    let owned = name.to_string();
    let spawned = with_signals_blocked(|| {
        std::thread::Builder::new()
            .name("sno host lookup".into())
            .spawn(move || {
                let found = (owned.as_str(), 0)
                    .to_socket_addrs()
                    .map(|mut addresses| addresses.next().map(|address| address.ip()));
                let _ = sender.send(found);
            })
    });
    spawned.map_err(|error| format!("could not look up host name \"{name}\": {error}"))?;
    let left = deadline.saturating_duration_since(Instant::now());
    match receiver.recv_timeout(left) {
        Ok(Ok(Some(address))) => Ok(address),
        Ok(Ok(None)) => Err(format!("host name \"{name}\" has no address")),
        Ok(Err(error)) => Err(format!("could not translate host name \"{name}\": {error}")),
        Err(_) => Err(format!(
            "no answer for host name \"{name}\" within the time allowed"
        )),
    }
}

/// Runs `start` with every signal blocked in this thread, so that a thread it starts inherits
/// that mask; the mask is put back after.
fn with_signals_blocked<T>(start: impl FnOnce() -> T) -> T {
    // SAFETY: pthread_sigmask on this thread with masks that live on the stack.
    unsafe {
        let mut all: libc::sigset_t = std::mem::zeroed();
        let mut previous: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut previous);
        let started = start();
        libc::pthread_sigmask(libc::SIG_SETMASK, &previous, std::ptr::null_mut());
        started
    }
}
