//! What the partition watch (`sql::partition_watch`) found, kept in shared memory for
//! `sno_partition_watch()`, and the Citus group it read for `sno.partition_source = 'citus'`.

/// A short text in shared memory: the first one noted, cut at the buffer's size.
#[derive(Clone, Copy)]
pub(crate) struct Note {
    text: [u8; NOTE_BYTES],
    len: usize,
}

const NOTE_BYTES: usize = 1024;

impl Note {
    pub(crate) const fn empty() -> Note {
        Note {
            text: [0; NOTE_BYTES],
            len: 0,
        }
    }

    /// Keeps `text` unless a text is noted already.
    pub(crate) fn note(&mut self, text: &str) {
        if self.len > 0 {
            return;
        }
        let mut end = text.len().min(NOTE_BYTES);
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        self.text[..end].copy_from_slice(&text.as_bytes()[..end]);
        self.len = end;
    }

    /// Keeps `text` in place of what was noted.
    pub(crate) fn replace(&mut self, text: &str) {
        self.len = 0;
        self.note(text);
    }

    pub(crate) fn text(&self) -> Option<String> {
        (self.len > 0).then(|| String::from_utf8_lossy(&self.text[..self.len]).into_owned())
    }
}

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
    /// The first clash or unanswered node, described.
    detail: Note,
}

impl Findings {
    pub(crate) const fn none() -> Findings {
        Findings {
            checked_at_ms: 0,
            databases: 0,
            nodes: 0,
            clashes: 0,
            unanswered: 0,
            failed: 0,
            detail: Note::empty(),
        }
    }

    pub(crate) fn note(&mut self, text: &str) {
        self.detail.note(text);
    }

    pub(crate) fn detail(&self) -> Option<String> {
        self.detail.text()
    }
}

/// The Citus groups a round read, one per database with Citus.
#[derive(Clone, Copy)]
pub(crate) struct GroupReading {
    /// The first group Citus confirms (any group but 0, or 0 where `pg_dist_node` lists an active
    /// node: Citus's own test for the coordinator), with its database.
    pub confirmed: Option<u32>,
    pub confirmed_in: Note,
    /// Another group confirmed in another database: the server is a node of two clusters.
    pub disagreeing: Option<u32>,
    pub disagreeing_in: Note,
    /// A database whose group reads 0 with no active node listed: a worker not yet added reads
    /// the same as a coordinator without workers, so it confirms nothing.
    pub unconfirmed_in: Note,
}

impl GroupReading {
    pub(crate) const fn none() -> GroupReading {
        GroupReading {
            confirmed: None,
            confirmed_in: Note::empty(),
            disagreeing: None,
            disagreeing_in: Note::empty(),
            unconfirmed_in: Note::empty(),
        }
    }

    /// Takes one database's reading: its group, and whether Citus confirms it.
    pub(crate) fn add(&mut self, database: &str, group: u32, confirmed: bool) {
        if !confirmed {
            self.unconfirmed_in.note(database);
        } else if self.confirmed.is_none_or(|first| first == group) {
            self.confirmed = Some(group);
            self.confirmed_in.note(database);
        } else if self.disagreeing.is_none() {
            self.disagreeing = Some(group);
            self.disagreeing_in.note(database);
        }
    }

    /// The group to use, or what keeps it unknown.
    pub(crate) fn verdict(&self) -> Result<(u32, String), String> {
        let name = |note: &Note| note.text().unwrap_or_default();
        match (self.confirmed, self.disagreeing) {
            (Some(group), None) => Ok((group, name(&self.confirmed_in))),
            (Some(first), Some(second)) => Err(format!(
                "database \"{}\" says group {first} and database \"{}\" group {second}: this \
                 server is a node of two Citus clusters, and neither group is taken",
                name(&self.confirmed_in),
                name(&self.disagreeing_in)
            )),
            (None, _) => Err(match self.unconfirmed_in.text() {
                Some(database) => format!(
                    "in database \"{database}\" its group is 0 and pg_dist_node lists no active \
                     node: a worker that the coordinator has not added yet reads the same as a \
                     coordinator without workers"
                ),
                None => "no database that accepts connections has the citus extension".into(),
            }),
        }
    }
}

/// The round in progress, the last one completed, and the processes doing them.
pub(crate) struct Watch {
    pub round: Findings,
    pub last: Findings,
    /// The Citus groups of the round in progress.
    pub groups: GroupReading,
    /// With `sno.partition_source = 'citus'`, what the last round found in the way of a group:
    /// what generation waits for, while it waits.
    pub group_unknown: Note,
    /// The group the last round read, where it makes no partition (beyond 65535 with the offset).
    pub group_refused: Option<u32>,
    /// The watch's process while it runs, else 0: `watching` reads it, so a watch that ended
    /// is never reported as watching.
    pub pid: i32,
    /// Set by a database's check when it has recorded what it found: a check that ends
    /// without setting it is counted as failed.
    pub database_recorded: bool,
    /// Set by a database's check once it has read this node's group there (or found no Citus
    /// to read it from), before it compares the nodes' partitions.
    pub database_group_read: bool,
    /// The databases of the round in progress whose group was not read: the group the round
    /// read is used only when there are none. A comparison that a hung node held up past its
    /// deadline does not count, so that one hung worker never keeps the group unknown.
    pub groups_missed: u32,
}

impl Watch {
    pub(crate) const fn new() -> Watch {
        Watch {
            round: Findings::none(),
            last: Findings::none(),
            groups: GroupReading::none(),
            group_unknown: Note::empty(),
            group_refused: None,
            pid: 0,
            database_recorded: false,
            database_group_read: false,
            groups_missed: 0,
        }
    }
}
