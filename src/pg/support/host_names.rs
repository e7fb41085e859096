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
//! A name with several addresses (`localhost`: `::1` and `127.0.0.1`) stays several entries,
//! each with one of them, in the resolver's order, which libpq tries in turn as it would have.

use std::net::{IpAddr, ToSocketAddrs};
use std::sync::mpsc;
use std::time::Instant;

/// The `host`, `hostaddr` and `port` lists to connect with, once the names in the `host` list
/// of a connection string are looked up (`port`: the one given, or one per entry when the
/// string gives one per host); `None` when no entry is a name to look up.
pub(crate) fn resolved_within(
    hosts: &str,
    ports: &str,
    deadline: Instant,
) -> Result<Option<[String; 3]>, String> {
    let entries: Vec<&str> = hosts.split(',').map(str::trim).collect();
    if !entries.iter().copied().any(is_name) {
        return Ok(None);
    }
    let port_list: Vec<&str> = ports.split(',').map(str::trim).collect();
    let per_host = port_list.len() > 1;
    let (mut host, mut hostaddr, mut port) = (Vec::new(), Vec::new(), Vec::new());
    for (index, &entry) in entries.iter().enumerate() {
        let addresses = if is_name(entry) {
            lookup(entry, deadline)?
        } else {
            vec![String::new()]
        };
        for address in addresses {
            host.push(entry.to_string());
            hostaddr.push(address);
            if per_host {
                port.push(
                    port_list
                        .get(index)
                        .copied()
                        .unwrap_or_default()
                        .to_string(),
                );
            }
        }
    }
    let port = if per_host {
        port.join(",")
    } else {
        ports.to_string()
    };
    Ok(Some([host.join(","), hostaddr.join(","), port]))
}

/// A host name, as opposed to a Unix socket directory (an absolute path, or `@` for Linux's
/// abstract namespace), an address, or nothing.
fn is_name(entry: &str) -> bool {
    !(entry.is_empty()
        || entry.starts_with('/')
        || entry.starts_with('@')
        || entry.parse::<IpAddr>().is_ok())
}

/// Every address of `name`, in the resolver's order.
fn lookup(name: &str, deadline: Instant) -> Result<Vec<String>, String> {
    let (sender, receiver) = mpsc::channel();
    let owned = name.to_string();
    let spawned = with_signals_blocked(|| {
        std::thread::Builder::new()
            .name("sno host lookup".into())
            .spawn(move || {
                let found = (owned.as_str(), 0).to_socket_addrs().map(|addresses| {
                    let mut ips: Vec<String> = Vec::new();
                    for address in addresses {
                        let ip = address.ip().to_string();
                        if !ips.contains(&ip) {
                            ips.push(ip);
                        }
                    }
                    ips
                });
                let _ = sender.send(found);
            })
    });
    spawned.map_err(|error| format!("could not look up host name \"{name}\": {error}"))?;
    let left = deadline.saturating_duration_since(Instant::now());
    match receiver.recv_timeout(left) {
        Ok(Ok(addresses)) if addresses.is_empty() => {
            Err(format!("host name \"{name}\" has no address"))
        }
        Ok(Ok(addresses)) => Ok(addresses),
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
