//! What `sno_generator.state` records, and its text forms: the file's lines, one line for a WAL
//! record, and the file that says a carry across pg_upgrade failed; with what the carry reads of
//! pg_upgrade's server log. Plain Rust, so that it is tested without a server; the extension
//! reads and writes the file (`pg::server::state_file`) and carries it across pg_upgrade
//! (`pg::recovery::pg_upgrade_carry`).
//!
//! For the live generator the file holds a unit through which IDs may have been issued
//! (`through`), how far the other timeline went (`other_through`) and the count of clock
//! regressions (`clock_regressions`, whose low bit is the tick-tock bit); the file's text names
//! them `wall_hi`, `wall_safe` and `drifts`, after SPEC §3, in [`fields`] and [`parse_fields`]
//! only. While the server runs, `through` is a reservation ahead
//! of the clock, written before any ID beyond it is returned (as pgEdge's snowflake logs a
//! look-ahead); at a clean shutdown the exact state replaces it. Each backfill cursor (one per
//! meta) has a line of the same kind. With `sno.partition_source = 'citus'` the file also
//! records the Citus group the partition comes from (`citus_group`), so that a restart or a
//! promotion has its partition before any database is read; with `'registry'`, the partition
//! last leased (`leased_partition`), which a restart or a promotion asks the registry for.

// Without the extension only the tests use it.
#![cfg_attr(not(feature = "extension"), allow(dead_code))]

use crate::generator::{BackfillCursor, Snapshot};
use crate::time::Units;

/// The file's name, relative to the data directory (the working directory of every server
/// process).
pub(crate) const STATE_FILE: &str = "sno_generator.state";

/// What the file records for the live generator: enough to restore one that never repeats an
/// earlier ID.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct HighWater {
    pub through: Units,
    pub other_through: Units,
    pub clock_regressions: u64,
}

impl HighWater {
    pub fn of(snapshot: &Snapshot) -> HighWater {
        HighWater {
            through: snapshot.last_unit,
            other_through: snapshot.other_last_unit,
            clock_regressions: snapshot.clock_regressions,
        }
    }

    /// How far IDs may have gone in the timeline with this tick-tock bit.
    pub fn bound_in(&self, tick_tock: bool) -> Units {
        if (self.clock_regressions & 1 == 1) == tick_tock {
            self.through
        } else {
            self.other_through
        }
    }

    /// A high-water mark that covers every ID either one covers, in both timelines.
    pub fn covering(&self, other: &HighWater) -> HighWater {
        let clock_regressions = self.clock_regressions.max(other.clock_regressions);
        let tick_tock = clock_regressions & 1 == 1;
        HighWater {
            through: self.bound_in(tick_tock).max(other.bound_in(tick_tock)),
            other_through: self.bound_in(!tick_tock).max(other.bound_in(!tick_tock)),
            clock_regressions,
        }
    }
}

/// What the file records for one meta's backfill cursor: its current timeline reaches at most
/// `through`, the other one at most `other_through`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct BackfillMark {
    pub meta: u8,
    pub through: u64,
    pub tick_tock: bool,
    pub other_through: Option<u64>,
    pub clock_regressions: u64,
}

impl BackfillMark {
    pub fn cursor(&self) -> BackfillCursor {
        BackfillCursor::restored(
            self.through,
            self.tick_tock,
            self.other_through,
            self.clock_regressions,
        )
    }

    fn bound_in(&self, tick_tock: bool) -> Option<u64> {
        if self.tick_tock == tick_tock {
            Some(self.through)
        } else {
            self.other_through
        }
    }

    /// A mark for the same meta that covers every ID either one covers: the timeline of the
    /// one that flipped more often, each timeline as far as either went.
    pub fn covering(&self, other: &BackfillMark) -> BackfillMark {
        let tick_tock = if other.clock_regressions > self.clock_regressions {
            other.tick_tock
        } else {
            self.tick_tock
        };
        let through = self.bound_in(tick_tock).max(other.bound_in(tick_tock));
        BackfillMark {
            meta: self.meta,
            through: through.expect("the chosen timeline is the current one of one of them"),
            tick_tock,
            other_through: self.bound_in(!tick_tock).max(other.bound_in(!tick_tock)),
            clock_regressions: self.clock_regressions.max(other.clock_regressions),
        }
    }
}

/// The whole file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct State {
    pub live: HighWater,
    pub backfills: Vec<BackfillMark>,
    /// The Citus group the live generator's partition came from, where it came from one.
    pub citus_group: Option<u32>,
    /// The partition last leased from the registry (`sno.partition_source = 'registry'`), which
    /// a restart or a promotion asks the registry for.
    pub leased_partition: Option<u16>,
}

impl State {
    /// A state under which the generator repeats no ID made under either: what a cluster
    /// upgraded by pg_upgrade records, when the old cluster's state joins its own, and what a
    /// standby records when it replays its primary's. `other` is the newer one: its Citus group,
    /// if it names one, is the one in use now.
    pub(crate) fn covering(&self, other: &State) -> State {
        let mut backfills = self.backfills.clone();
        for mark in &other.backfills {
            match backfills.iter_mut().find(|known| known.meta == mark.meta) {
                Some(known) => *known = known.covering(mark),
                None => backfills.push(*mark),
            }
        }
        backfills.sort_by_key(|mark| mark.meta);
        State {
            live: self.live.covering(&other.live),
            backfills,
            citus_group: other.citus_group.or(self.citus_group),
            leased_partition: other.leased_partition.or(self.leased_partition),
        }
    }
}

/// The file's text.
pub(crate) fn to_text(state: &State) -> String {
    format!(
        "# sno generator state; written by the sno extension, do not edit\n{}\n",
        fields(state).join("\n")
    )
}

/// The state as `name=value` fields, one per line of the file.
fn fields(state: &State) -> Vec<String> {
    let mut fields = vec![
        "version=2".to_string(),
        format!("wall_hi={}", state.live.through.get()),
        format!("wall_safe={}", state.live.other_through.get()),
        format!("drifts={}", state.live.clock_regressions),
    ];
    for mark in &state.backfills {
        let other = mark
            .other_through
            .map_or("-".to_string(), |unit| unit.to_string());
        fields.push(format!(
            "backfill.{}={},{},{},{}",
            mark.meta, mark.through, mark.tick_tock as u8, other, mark.clock_regressions
        ));
    }
    if let Some(group) = state.citus_group {
        fields.push(format!("{CITUS_GROUP}={group}"));
    }
    if let Some(partition) = state.leased_partition {
        fields.push(format!("{LEASED_PARTITION}={partition}"));
    }
    fields
}

/// Optional: files and records without it (every earlier sno's) have no Citus group, and
/// earlier sno releases ignore it.
const CITUS_GROUP: &str = "citus_group";
/// Optional, like [`CITUS_GROUP`].
const LEASED_PARTITION: &str = "leased_partition";

/// The state on one line (fields separated by spaces), for a log line.
pub(crate) fn to_line(state: &State) -> String {
    fields(state).join(" ")
}

/// What [`to_line`] wrote.
pub(crate) fn from_line(line: &str) -> Option<State> {
    parse(&line.split_whitespace().collect::<Vec<_>>().join("\n"))
}

/// The state the file's text records, or `None` if it is not a valid state file (one that
/// says a carry across pg_upgrade failed is not).
pub(crate) fn parse(text: &str) -> Option<State> {
    if carry_failure(text).is_some() {
        return None;
    }
    parse_fields(text)
}

/// The state the file's fields record, whether or not it also says a carry failed.
pub(crate) fn parse_fields(text: &str) -> Option<State> {
    let field = |name: &str| -> Option<&str> {
        text.lines()
            .find_map(|line| line.strip_prefix(name)?.strip_prefix('='))
            .map(str::trim)
    };
    let number = |name: &str| -> Option<u64> { field(name)?.parse().ok() };
    let version = number("version")?;
    if !(1..=2).contains(&version) {
        return None;
    }
    let live = HighWater {
        through: Units::new(number("wall_hi")?)?,
        other_through: Units::new(number("wall_safe")?)?,
        clock_regressions: number("drifts")?,
    };
    let mut backfills = Vec::new();
    for line in text.lines().filter(|line| line.starts_with("backfill.")) {
        backfills.push(parse_backfill(line)?);
    }
    let citus_group = match field(CITUS_GROUP) {
        None => None,
        Some(group) => Some(group.parse().ok()?),
    };
    let leased_partition = match field(LEASED_PARTITION) {
        None => None,
        Some(partition) => Some(partition.parse().ok()?),
    };
    Some(State {
        live,
        backfills,
        citus_group,
        leased_partition,
    })
}

fn parse_backfill(line: &str) -> Option<BackfillMark> {
    let (meta, values) = line.strip_prefix("backfill.")?.split_once('=')?;
    let mut values = values.trim().split(',');
    let mut next = || values.next();
    let through = Units::new(next()?.parse().ok()?)?.get();
    let tick_tock = match next()? {
        "0" => false,
        "1" => true,
        _ => return None,
    };
    let other_through = match next()? {
        "-" => None,
        other => Some(Units::new(other.parse().ok()?)?.get()),
    };
    let clock_regressions = next()?.parse().ok()?;
    if next().is_some() {
        return None;
    }
    Some(BackfillMark {
        meta: meta.parse().ok()?,
        through,
        tick_tock,
        other_through,
        clock_regressions,
    })
}

/// The line of a state file in which pg_upgrade's carry (`pg::upgrade`) says why it could not
/// take in the old cluster's state. Such a file is not a usable state: it turns generation off
/// until an operator replaces it with the old data directory's file or removes it.
const CARRY_FAILED: &str = "carry_failed=";

/// The text of a state file that says the carry failed, and why: with the new cluster's own
/// state, if it had one, so that a later start of the same pg_upgrade run still joins it.
pub(crate) fn carry_failed_text(own: Option<&State>, reason: &str) -> String {
    let reason = reason.split_whitespace().collect::<Vec<_>>().join(" ");
    let own = own.map_or(String::new(), |own| fields(own).join("\n") + "\n");
    format!(
        "# sno generator state; written by the sno extension, do not edit\n\
         # pg_upgrade did not carry the old cluster's generator state into this file: until it\n\
         # is replaced by the old data directory's sno_generator.state, or removed, no IDs\n\
         {CARRY_FAILED}{reason}\n{own}"
    )
}

/// Why a carry across pg_upgrade failed, if the file's text says one did.
pub(crate) fn carry_failure(text: &str) -> Option<&str> {
    text.lines()
        .find_map(|line| line.strip_prefix(CARRY_FAILED))
}

/// A server start that pg_upgrade wrote into its server log (`exec_prog`, PostgreSQL 15 to 18)
/// before it ran it:
/// `command: "<bindir>/pg_ctl" -w -l "<log>" -D "<dir>" -o "<options>" start >> "<log>" 2>&1`.
/// Bytes, not text: paths need not be UTF-8, and neither does the rest of the log.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct ServerStart<'a> {
    /// The server log as pg_upgrade named it: inside the new data directory as pg_upgrade was
    /// given it, relative to pg_upgrade's working directory or absolute.
    pub log: &'a [u8],
    /// The data (or configuration) directory of the server started, spelled the same way.
    pub dir: &'a [u8],
}

/// The server start a log line records, if it is one of pg_upgrade's.
pub(crate) fn server_start(line: &[u8]) -> Option<ServerStart<'_>> {
    let rest = line.strip_prefix(b"command: \"")?;
    let (_, rest) = split_once(rest, b"/pg_ctl\" -w -l \"")?;
    let (log, rest) = split_once(rest, b"\" -D \"")?;
    let (dir, rest) = split_once(rest, b"\" -o \"")?;
    let mut tail = b"\" start >> \"".to_vec();
    tail.extend_from_slice(log);
    tail.extend_from_slice(b"\" 2>&1");
    rest.ends_with(&tail).then_some(ServerStart { log, dir })
}

/// The server start on the first command line of a pg_upgrade server log, if it is one. pg_upgrade
/// writes each command before it runs it, and its first is the start of the old server: it
/// precedes everything the old server logs, and with it every text a database role can make a
/// server log. Nothing after that first command line is looked at, so that a start line a role
/// forged is never taken, not even where pg_upgrade's own line has a form this code does not
/// know (a later major's): the carry then fails, and says so.
pub(crate) fn first_server_start(log: &[u8]) -> Option<ServerStart<'_>> {
    let first_command = log
        .split(|&byte| byte == b'\n')
        .find(|line| line.starts_with(b"command: "))?;
    server_start(first_command)
}

fn split_once<'a>(bytes: &'a [u8], separator: &[u8]) -> Option<(&'a [u8], &'a [u8])> {
    let at = bytes
        .windows(separator.len())
        .position(|window| window == separator)?;
    Some((&bytes[..at], &bytes[at + separator.len()..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn live(through: u64, other_through: u64, clock_regressions: u64) -> HighWater {
        HighWater {
            through: Units::new(through).unwrap(),
            other_through: Units::new(other_through).unwrap(),
            clock_regressions,
        }
    }

    #[test]
    fn parses_what_it_writes_and_nothing_else() {
        let text = "# c\nversion=1\nwall_hi=123456\nwall_safe=99\ndrifts=3\n";
        assert_eq!(
            parse(text),
            Some(State {
                live: live(123456, 99, 3),
                backfills: vec![],
                citus_group: None,
                leased_partition: None,
            })
        );
        assert_eq!(parse("version=3\nwall_hi=1\nwall_safe=1\ndrifts=0\n"), None);
        assert_eq!(parse("version=1\nwall_hi=1\ndrifts=0\n"), None);
        assert_eq!(parse("version=1\nwall_hi=x\nwall_safe=1\ndrifts=0\n"), None);
        assert_eq!(
            parse("version=1\nwall_hi=549755813888\nwall_safe=1\ndrifts=0\n"),
            None
        );
        // A file cut short loses its last lines, and so its required fields.
        assert_eq!(parse("# sno generator state; written by the sno ext"), None);
    }

    #[test]
    fn parses_backfill_cursors() {
        let text = "version=2\nwall_hi=10\nwall_safe=9\ndrifts=0\n\
                    backfill.7=500,1,400,3\nbackfill.255=42,0,-,0\n";
        assert_eq!(
            parse(text).unwrap().backfills,
            vec![
                BackfillMark {
                    meta: 7,
                    through: 500,
                    tick_tock: true,
                    other_through: Some(400),
                    clock_regressions: 3
                },
                BackfillMark {
                    meta: 255,
                    through: 42,
                    tick_tock: false,
                    other_through: None,
                    clock_regressions: 0
                }
            ]
        );
        for bad in [
            "backfill.7=500,2,400,3",
            "backfill.256=500,1,400,3",
            "backfill.7=500,1,400",
            "backfill.7=500,1,400,3,1",
            "backfill.7=x,1,400,3",
        ] {
            let text = format!("version=2\nwall_hi=10\nwall_safe=9\ndrifts=0\n{bad}\n");
            assert_eq!(parse(&text), None, "{bad}");
        }
    }

    #[test]
    fn a_state_survives_one_line() {
        let state = parse(
            "version=2\nwall_hi=10\nwall_safe=9\ndrifts=1\nbackfill.7=500,1,400,3\nbackfill.8=5,0,-,0\n",
        )
        .unwrap();
        let line = to_line(&state);
        assert_eq!(
            line,
            "version=2 wall_hi=10 wall_safe=9 drifts=1 backfill.7=500,1,400,3 backfill.8=5,0,-,0"
        );
        assert_eq!(from_line(&line), Some(state));
    }

    #[test]
    fn records_the_citus_group_where_there_is_one() {
        let text = "version=2\nwall_hi=10\nwall_safe=9\ndrifts=0\ncitus_group=4096\n";
        let state = parse(text).unwrap();
        assert_eq!(state.citus_group, Some(4096));
        assert_eq!(
            to_line(&state),
            "version=2 wall_hi=10 wall_safe=9 drifts=0 citus_group=4096"
        );
        assert_eq!(from_line(&to_line(&state)), Some(state));
        for bad in [
            "citus_group=",
            "citus_group=-1",
            "citus_group=x",
            "citus_group=4294967296",
        ] {
            let text = format!("version=2\nwall_hi=10\nwall_safe=9\ndrifts=0\n{bad}\n");
            assert_eq!(parse(&text), None, "{bad}");
        }
    }

    #[test]
    fn records_the_leased_partition_where_there_is_one() {
        let text = "version=2\nwall_hi=10\nwall_safe=9\ndrifts=0\nleased_partition=65535\n";
        let state = parse(text).unwrap();
        assert_eq!(state.leased_partition, Some(65535));
        assert_eq!(
            to_line(&state),
            "version=2 wall_hi=10 wall_safe=9 drifts=0 leased_partition=65535"
        );
        assert_eq!(from_line(&to_line(&state)), Some(state));
        for bad in [
            "leased_partition=",
            "leased_partition=-1",
            "leased_partition=65536",
        ] {
            let text = format!("version=2\nwall_hi=10\nwall_safe=9\ndrifts=0\n{bad}\n");
            assert_eq!(parse(&text), None, "{bad}");
        }
        let with = |leased_partition| State {
            live: live(10, 0, 0),
            backfills: vec![],
            citus_group: None,
            leased_partition,
        };
        assert_eq!(
            with(Some(1)).covering(&with(Some(2))).leased_partition,
            Some(2)
        );
        assert_eq!(
            with(Some(1)).covering(&with(None)).leased_partition,
            Some(1)
        );
    }

    #[test]
    fn covering_takes_the_newer_citus_group() {
        let with = |citus_group| State {
            live: live(10, 0, 0),
            backfills: vec![],
            citus_group,
            leased_partition: None,
        };
        assert_eq!(with(Some(1)).covering(&with(Some(2))).citus_group, Some(2));
        assert_eq!(with(Some(1)).covering(&with(None)).citus_group, Some(1));
        assert_eq!(with(None).covering(&with(Some(3))).citus_group, Some(3));
    }

    #[test]
    fn covering_keeps_each_timeline_as_far_as_either_went() {
        // Timeline 0 reached 100 in the first, 300 in the second; timeline 1 reached 250 and 90.
        let first = State {
            live: live(250, 100, 1),
            backfills: vec![],
            citus_group: None,
            leased_partition: None,
        };
        let second = State {
            live: live(300, 90, 2),
            backfills: vec![],
            citus_group: None,
            leased_partition: None,
        };
        // The second has the higher count (2, timeline 0): it stays the current one.
        assert_eq!(first.covering(&second).live, live(300, 250, 2));
        assert_eq!(second.covering(&first).live, live(300, 250, 2));
        // The same state twice is itself.
        assert_eq!(first.covering(&first), first);
    }

    #[test]
    fn covering_joins_backfill_cursors_by_meta() {
        let mark = |meta, through, tick_tock, other_through, clock_regressions| BackfillMark {
            meta,
            through,
            tick_tock,
            other_through,
            clock_regressions,
        };
        let first = State {
            live: live(10, 0, 0),
            backfills: vec![mark(7, 500, false, None, 0), mark(9, 40, false, None, 0)],
            citus_group: None,
            leased_partition: None,
        };
        let second = State {
            live: live(10, 0, 0),
            backfills: vec![mark(3, 1, false, None, 0), mark(7, 200, true, Some(600), 1)],
            citus_group: None,
            leased_partition: None,
        };
        assert_eq!(
            first.covering(&second).backfills,
            vec![
                mark(3, 1, false, None, 0),
                // Flipped once in the second: timeline 1 current (200), timeline 0 to 600.
                mark(7, 200, true, Some(600), 1),
                mark(9, 40, false, None, 0),
            ]
        );
    }

    #[test]
    fn a_failed_carry_keeps_its_reason_and_the_own_state_but_is_no_state() {
        let own = State {
            live: live(10, 9, 1),
            backfills: vec![],
            citus_group: None,
            leased_partition: None,
        };
        let text = carry_failed_text(Some(&own), "no line\nat all");
        assert_eq!(carry_failure(&text), Some("no line at all"));
        assert_eq!(parse(&text), None);
        assert_eq!(parse_fields(&text), Some(own));
        let text = carry_failed_text(None, "why");
        assert_eq!((parse(&text), parse_fields(&text)), (None, None));
        assert_eq!(
            carry_failure(&to_text(
                &parse_fields("version=2\nwall_hi=1\nwall_safe=0\ndrifts=0").unwrap()
            )),
            None
        );
    }

    const START: &[u8] =
        b"command: \"/usr/lib/pg 15/bin/pg_ctl\" -w -l \"/n/pg_upgrade_output.d/r/log/\
        pg_upgrade_server.log\" -D \"/srv/old \xe9\" -o \"-p 50432 -b  -c listen_addresses=''\" \
        start >> \"/n/pg_upgrade_output.d/r/log/pg_upgrade_server.log\" 2>&1";

    #[test]
    fn finds_pg_upgrades_server_starts() {
        assert_eq!(
            server_start(START),
            Some(ServerStart {
                log: b"/n/pg_upgrade_output.d/r/log/pg_upgrade_server.log",
                dir: b"/srv/old \xe9",
            })
        );
        // A stop, a start whose redirection names another log, text around it: not starts.
        assert_eq!(
            server_start(b"command: \"/b/pg_ctl\" -w -D \"/srv/old\" -m fast stop >> \"/l\" 2>&1"),
            None
        );
        let mut other_log = START.to_vec();
        other_log.truncate(START.len() - 6);
        other_log.extend_from_slice(b"x\" 2>&1");
        assert_eq!(server_start(&other_log), None);
        let mut quoted = b"WARNING:  ".to_vec();
        quoted.extend_from_slice(START);
        assert_eq!(server_start(&quoted), None);
    }

    #[test]
    fn only_the_first_command_counts() {
        let forged =
            b"command: \"/b/pg_ctl\" -w -l \"/l\" -D \"/forged\" -o \"\" start >> \"/l\" 2>&1";
        let own = b"command: \"/b/pg_ctl\" -w -l \"/l\" -D \"/new\" -o \"\" start >> \"/l\" 2>&1";
        let mut log = b"\n---\n  pg_upgrade run on Tue\n\xff\xfe\n".to_vec();
        for line in [&own[..], START, forged] {
            log.extend_from_slice(line);
            log.push(b'\n');
        }
        // The new server started first (a stale postmaster.pid of the new cluster).
        assert_eq!(first_server_start(&log).unwrap().dir, b"/new");
        let from_start = log.len() - START.len() - forged.len() - 2;
        assert_eq!(
            first_server_start(&log[from_start..]).unwrap().dir,
            b"/srv/old \xe9"
        );
        // A first command of a form not known here: nothing after it is taken.
        let mut log = b"command: \"/b/pg_ctl\" -w -D \"/srv/old\" start\n".to_vec();
        log.extend_from_slice(forged);
        assert_eq!(first_server_start(&log), None);
        assert_eq!(first_server_start(b"no command\n"), None);
    }
}
