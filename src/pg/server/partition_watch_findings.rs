//! What the partition watch (`sql::partition_watch`) found, kept in shared memory for
//! `sno_partition_watch()`.

/// What a round of checks found, kept in shared memory (under the generator's lock, briefly).
#[derive(Clone, Copy)]
pub(crate) struct Findings {
    /// When the round ended (Unix ms); 0 before the first.
    pub checked_at_ms: i64,
    /// Databases in which this server coordinates a Citus cluster with sno.
    pub databases: i32,
    pub nodes: i32,
    pub clashes: i32,
    /// Checks that could not ask every node.
    pub unanswered: i32,
    /// Databases whose check ended without a finding (an error, no worker slot, past its
    /// deadline): the server log says why.
    pub failed: i32,
    /// The first clash or unanswered node, described (cut at the buffer's size).
    detail: [u8; DETAIL_BYTES],
    detail_len: usize,
}

const DETAIL_BYTES: usize = 1024;

impl Findings {
    pub(crate) const fn none() -> Findings {
        Findings {
            checked_at_ms: 0,
            databases: 0,
            nodes: 0,
            clashes: 0,
            unanswered: 0,
            failed: 0,
            detail: [0; DETAIL_BYTES],
            detail_len: 0,
        }
    }

    pub(crate) fn note(&mut self, text: &str) {
        if self.detail_len > 0 {
            return;
        }
        let mut end = text.len().min(DETAIL_BYTES);
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        self.detail[..end].copy_from_slice(&text.as_bytes()[..end]);
        self.detail_len = end;
    }

    pub(crate) fn detail(&self) -> Option<String> {
        (self.detail_len > 0)
            .then(|| String::from_utf8_lossy(&self.detail[..self.detail_len]).into_owned())
    }
}

/// The round in progress, the last one completed, and the processes doing them.
pub(crate) struct Watch {
    pub round: Findings,
    pub last: Findings,
    /// The watch's process while it runs, else 0: `watching` reads it, so a watch that ended
    /// is never reported as watching.
    pub pid: i32,
    /// Set by a database's check when it has recorded what it found: a check that ends
    /// without setting it is counted as failed.
    pub database_recorded: bool,
}

impl Watch {
    pub(crate) const fn new() -> Watch {
        Watch {
            round: Findings::none(),
            last: Findings::none(),
            pid: 0,
            database_recorded: false,
        }
    }
}
