//! A breadth-first search over the model's states, and the runs it reports.

use super::model::{Action, Model, Move};
use super::rules::Rules;
use super::state::*;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::hash::{BuildHasherDefault, Hasher};
use std::time::{Duration, Instant};

/// FxHash's mixing: the default SipHash costs more than the rest of a step in a debug build.
#[derive(Default)]
struct FastHasher(u64);

impl FastHasher {
    fn mix(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

impl Hasher for FastHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.mix(u64::from_le_bytes(word));
        }
    }

    fn write_u8(&mut self, byte: u8) {
        self.mix(byte as u64);
    }

    fn write_i8(&mut self, byte: i8) {
        self.mix(byte as u64);
    }

    fn write_u16(&mut self, word: u16) {
        self.mix(word as u64);
    }

    fn write_u64(&mut self, word: u64) {
        self.mix(word);
    }

    fn write_usize(&mut self, word: usize) {
        self.mix(word as u64);
    }

    fn write_isize(&mut self, word: isize) {
        self.mix(word as u64);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// The states seen, each without its budget, with the budgets it was seen with (none of
/// which covers another).
type Visited = HashMap<State, Vec<Budget>, BuildHasherDefault<FastHasher>>;

/// Whether `state` is new: no state seen like it had at least its budget.
fn first_visit(visited: &mut Visited, state: &State) -> bool {
    let budgets = visited
        .entry(State {
            left: Budget::default(),
            ..*state
        })
        .or_default();
    if budgets.iter().any(|seen| seen.covers(&state.left)) {
        return false;
    }
    budgets.retain(|seen| !state.left.covers(seen));
    budgets.push(state.left);
    true
}

/// What an exploration saw. IDs are counted per transition that makes one.
#[derive(Debug, Default)]
pub struct Outcome {
    pub rules: String,
    pub states: usize,
    pub depth: usize,
    pub elapsed: Duration,
    /// The first state (in breadth-first order: reached by a shortest run) that repeats an ID
    /// or meets the goal, and the run to it.
    pub found: Option<State>,
    pub trace: Vec<String>,
    pub ids: usize,
    pub ids_by_clones: usize,
    pub ids_by_promoted_copies: usize,
    /// By servers whose clock is off.
    pub ids_off_the_clock: usize,
    /// In an epoch after the first (a registry restart, a restore, a failover).
    pub ids_in_later_epochs: usize,
    /// After the registry went back to a backup or a standby.
    pub ids_after_lost_commits: usize,
    pub backfill_ids: usize,
}

impl Outcome {
    pub fn repeat(&self) -> Option<Repeat> {
        self.found.and_then(|state| state.repeat)
    }

    pub fn report(&self) -> String {
        let mut text = format!(
            "{}: {} states to depth {} in {:.2?}; IDs made in {} transitions: {} by clones, \
             {} by promoted copies, {} off the clock, {} in later epochs, {} after lost \
             commits and {} backfilled",
            self.rules,
            self.states,
            self.depth,
            self.elapsed,
            self.ids,
            self.ids_by_clones,
            self.ids_by_promoted_copies,
            self.ids_off_the_clock,
            self.ids_in_later_epochs,
            self.ids_after_lost_commits,
            self.backfill_ids
        );
        if let Some(found) = self.found {
            let what = found.repeat.map_or("the goal".into(), |r| {
                let first = match r.first {
                    BY_HAND => "the server set by hand".into(),
                    instance => format!("#{instance}"),
                };
                format!(
                    "(p{}, {}) made by {first} and #{}",
                    r.partition, r.unit, r.second
                )
            });
            write!(text, "\nshortest run to {what}:").unwrap();
            self.trace
                .iter()
                .for_each(|line| write!(text, "\n  {line}").unwrap());
        }
        text
    }

    fn count(&mut self, model: &Model, mv: Move, after: &State) {
        let backfilling = match mv.action {
            Action::Backfill(slot) => 1 << slot,
            _ => 0,
        };
        for slot in (0..SLOTS).filter(|&slot| (mv.generate | backfilling) & 1 << slot != 0) {
            let server = &after.servers[slot];
            self.ids += 1;
            self.ids_by_clones += usize::from(server.origin == Origin::Clone);
            self.ids_by_promoted_copies += usize::from(server.origin == Origin::Promoted);
            self.ids_off_the_clock += usize::from(server.clock_offset != 0);
            self.ids_in_later_epochs += usize::from(after.registry.db.epoch_floor > 0);
            // Only a restore or a failover spends a saved registry.
            let spent = after.left.saves < model.saves && after.registry.saved.is_none();
            self.ids_after_lost_commits += usize::from(spent);
            self.backfill_ids += usize::from(backfilling & 1 << slot != 0);
        }
    }
}

/// A guard against bounds that would take the machine's memory.
const STATE_LIMIT: usize = 3_000_000;

/// Breadth-first search from the model's initial state, to the first state that repeats an
/// ID or meets `goal`, or through every state within the bounds.
pub fn explore(model: &Model, rules: &dyn Rules, goal: impl Fn(&State) -> bool) -> Outcome {
    let started = Instant::now();
    let initial = model.initial(rules, true);
    let mut visited = Visited::default();
    first_visit(&mut visited, &initial);
    // How each state was first reached: its parent's index and the action.
    let mut reached_by: Vec<(u32, Move)> = vec![(
        0,
        Move {
            generate: 0,
            action: Action::Tick,
        },
    )];
    let mut frontier = vec![(initial, 0u32)];
    let mut outcome = Outcome {
        rules: rules.name(),
        ..Outcome::default()
    };
    let mut found = None;
    'search: while !frontier.is_empty() {
        outcome.depth += 1;
        let mut next_frontier = vec![];
        for (state, index) in frontier {
            for mv in model.moves(&state) {
                let Some(next) = model.step(rules, &state, mv, true) else {
                    continue;
                };
                outcome.count(model, mv, &next);
                if !first_visit(&mut visited, &next) {
                    continue;
                }
                reached_by.push((index, mv));
                assert!(
                    reached_by.len() <= STATE_LIMIT,
                    "{}: over {STATE_LIMIT} states",
                    rules.name()
                );
                let next_index = (reached_by.len() - 1) as u32;
                if next.repeat.is_some() || goal(&next) {
                    found = Some((next, next_index));
                    break 'search;
                }
                next_frontier.push((next, next_index));
            }
        }
        frontier = next_frontier;
    }
    outcome.states = reached_by.len();
    if let Some((state, index)) = found {
        outcome.found = Some(state);
        outcome.trace = trace(model, rules, &reached_by, index);
    }
    outcome.elapsed = started.elapsed();
    outcome
}

/// The run to `index`, replayed from the initial state, a line per action.
fn trace(model: &Model, rules: &dyn Rules, reached_by: &[(u32, Move)], index: u32) -> Vec<String> {
    let mut moves = vec![];
    let mut at = index;
    while at != 0 {
        let (parent, mv) = reached_by[at as usize];
        moves.push(mv);
        at = parent;
    }
    moves.reverse();
    let mut state = model.initial(rules, false);
    let mut lines = vec![];
    for mv in moves {
        for slot in (0..SLOTS as u8).filter(|&slot| mv.generate & 1 << slot != 0) {
            let before = state;
            model
                .generate(rules, &mut state, slot)
                .expect("the run replays");
            lines.push(describe(&before, Action::Generate(slot), &state));
        }
        if !matches!(mv.action, Action::Generate(_)) && state.repeat.is_none() {
            let before = state;
            model
                .apply(rules, &mut state, mv.action)
                .expect("the run replays");
            lines.push(describe(&before, mv.action, &state));
        }
    }
    lines
}

fn describe(before: &State, action: Action, after: &State) -> String {
    use Action::*;
    let mut line = format!("t={} {action:?}", before.now);
    let slot = match action {
        Start(s)
        | Claim(s)
        | ClaimReplyLost(s)
        | Renew(s)
        | RenewReplyLost(s)
        | StopCleanly(s)
        | Crash(s)
        | Generate(s)
        | Backfill(s)
        | StepClock(s, _)
        | ChangeAddress(s) => Some(s),
        _ => None,
    };
    if let Some(slot) = slot {
        let server = &after.servers[slot as usize];
        write!(line, " [s{slot} clock {:+}", server.clock_offset).unwrap();
        match server.process {
            None => line.push_str(", stopped"),
            Some(process) => {
                write!(line, ", #{}", process.instance).unwrap();
                match process.fence {
                    Some(f) => write!(
                        line,
                        " fence p{} ({}, {}] until {}",
                        f.partition, f.floor, f.cap, f.deadline
                    )
                    .unwrap(),
                    None => line.push_str(" no fence"),
                }
            }
        }
        line.push(']');
    }
    if let Generate(s) | Backfill(s) = action {
        let made = after.made;
        let instance = after.servers[s as usize].process.unwrap().instance;
        let ids: Vec<String> = (0..PARTITIONS)
            .flat_map(|p| (0..UNITS).map(move |u| (p, u)))
            .filter(|&(p, u)| {
                made[p][u] != before.made[p][u]
                    || after
                        .repeat
                        .is_some_and(|r| (r.partition as usize, r.unit as usize) == (p, u))
            })
            .map(|(p, u)| format!("(p{p}, {u})"))
            .collect();
        write!(line, " makes {} by #{instance}", ids.join(" ")).unwrap();
    }
    if before.registry != after.registry {
        write!(line, " | registry {}", rows(after)).unwrap();
    }
    line
}

fn rows(state: &State) -> String {
    let db = &state.registry.db;
    let mut text = format!("epoch {} floor {}:", db.epoch, db.epoch_floor);
    for (p, row) in db.rows.iter().enumerate() {
        if let Some(r) = row {
            let owner = match r.owner {
                Owner::Instance(i) => format!("#{i}"),
                Owner::Identity(id) => format!("{}/{}@{}", id.system, id.timeline, id.endpoint),
            };
            write!(
                text,
                " p{p}={owner} exp {} used {} after {} e{}",
                r.expires_at, r.used_through, r.started_after, r.epoch
            )
            .unwrap();
            if r.resume_hash != 0 {
                write!(text, " hash {}", r.resume_hash).unwrap();
            }
            text.push(';');
        }
    }
    text
}
