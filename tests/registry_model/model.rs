//! The transitions of the model, and the canonical forms of its states.

use super::rules::{Renewal, Request, Rules};
use super::state::*;

/// One transition. Servers are named by their slot.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Action {
    /// Real time moves on by one tick.
    Tick,
    /// A postmaster starts from its server's data directory: a new instance.
    Start(u8),
    Claim(u8),
    /// The registry grants, the holder never hears of it.
    ClaimReplyLost(u8),
    Renew(u8),
    RenewReplyLost(u8),
    /// A clean shutdown: the holder writes a new resume secret and releases.
    StopCleanly(u8),
    /// An immediate stop: nothing released.
    Crash(u8),
    /// The server makes IDs at its clock's unit in its leased partition, if its fence admits.
    Generate(u8),
    /// The server makes IDs of its backfill partition at every unit from its cursor (the
    /// high-water) to its clock's. A backfill may choose any past units in order; this one
    /// makes them all, which finds every repeat that some choice makes: a repeat is between
    /// two makers, and each may leave out the backfills that do not take part in it.
    Backfill(u8),
    StepClock(u8, i8),
    /// A copy of a running server's data directory starts behind the same address and port.
    Clone(u8),
    /// A copy of a running server's data directory is promoted to the next timeline.
    Promote(u8),
    /// The address the registry sees a server's connections come from changes.
    ChangeAddress(u8),
    /// A backup is taken, or the asynchronous standby has received this much and no more.
    SaveRegistry,
    RestartRegistry,
    RestoreRegistry,
    FailOverRegistry,
    /// A person reserves a backfill partition.
    Reserve(u8),
}

/// An action, after the servers in `generate` (a bit per slot) made IDs.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Move {
    pub generate: u8,
    pub action: Action,
}

/// Adversarial events and people's actions, enabled per model.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Kind {
    Crash = 1,
    LostReply = 2,
    ClockStep = 4,
    Clone = 8,
    Promote = 16,
    RegistryRestart = 32,
    Restore = 64,
    Failover = 128,
    AddressChange = 256,
    Backfill = 512,
    Reserve = 1024,
}

pub const EVERYTHING: u16 = 2047;

pub fn kinds(kinds: &[Kind]) -> u16 {
    kinds.iter().fold(0, |set, &kind| set | kind as u16)
}

/// A server as the model starts it.
#[derive(Clone, Copy, Debug, Default)]
pub struct Setup {
    pub wanted: Option<u8>,
    pub backfill: Option<u8>,
    /// Running (and not yet claimed) at the start.
    pub running: bool,
    /// The clock's offset at the start.
    pub clock: i8,
}

/// What is modelled, and how far.
#[derive(Clone, Debug)]
pub struct Model {
    pub partitions: u8,
    pub lease: u8,
    /// The last tick.
    pub end: u8,
    /// The clock offsets that clocks start at and clock steps may reach.
    pub clock_range: (i8, i8),
    /// Adversarial events per run.
    pub adversity: u8,
    /// Postmaster starts per run, beyond those running at the start.
    pub starts: u8,
    /// Registry backups (or standby positions) per run.
    pub saves: u8,
    pub servers: Vec<Setup>,
    /// A partition set by hand on a server not yet on the registry.
    pub hand_set: Option<u8>,
    /// Slots in all: those beyond `servers` are for copies.
    pub slots: u8,
    pub enabled: u16,
}

impl Model {
    fn enables(&self, kind: Kind) -> bool {
        self.enabled & kind as u16 != 0
    }

    pub fn initial(&self, rules: &dyn Rules, canonical: bool) -> State {
        assert!(self.partitions as usize <= PARTITIONS && self.slots as usize <= SLOTS);
        let mut state = State {
            now: START,
            left: Budget {
                adversity: self.adversity,
                starts: self.starts,
                saves: self.saves,
            },
            next_instance: 1,
            next_endpoint: 1,
            registry: Registry {
                partitions: self.partitions,
                incarnation: 0,
                db: Database {
                    epoch: 1,
                    longest_lease: self.lease,
                    ..Database::default()
                },
                saved: None,
            },
            servers: [Server::ABSENT; SLOTS],
            made: [[0; UNITS]; PARTITIONS],
            hand_set: self.hand_set,
            repeat: None,
        };
        rules.install(&mut state.registry);
        for (slot, setup) in self.servers.iter().enumerate() {
            let system = slot as u8 + 1;
            let server = &mut state.servers[slot];
            *server = Server {
                role: Role::Managed,
                endpoint: system,
                clock_offset: setup.clock,
                backfill: setup.backfill,
                dir: DataDir {
                    wanted: setup.wanted,
                    system,
                    timeline: 1,
                    ..DataDir::default()
                },
                ..Server::ABSENT
            };
            state.next_endpoint = system + 1;
            if setup.running {
                server.process = Some(Process {
                    instance: state.next_instance,
                    fence: None,
                    backfill_until: 0,
                });
                state.next_instance += 1;
            }
        }
        if let Some(partition) = self.hand_set {
            // People reserve the partitions they set by hand before the registry leases any.
            state.registry.db.reserved |= 1 << partition;
        }
        if canonical {
            self.forget_the_unreachable_past(rules, &mut state);
            rename_in_order_of_appearance(&mut state);
        }
        state
    }

    /// Every action worth trying in `state`; `step` turns down those that do not apply.
    fn actions(&self, state: &State) -> Vec<Action> {
        use Action::*;
        let mut actions = vec![Tick, SaveRegistry, RestartRegistry, RestoreRegistry];
        actions.push(FailOverRegistry);
        for slot in 0..self.slots {
            let server = &state.servers[slot as usize];
            if server.role != Role::Managed {
                continue;
            }
            actions.extend([Start(slot), Claim(slot), ClaimReplyLost(slot), Renew(slot)]);
            actions.extend([RenewReplyLost(slot), StopCleanly(slot), Crash(slot)]);
            actions.extend([StepClock(slot, 1), StepClock(slot, -1)]);
            actions.extend([Clone(slot), Promote(slot), ChangeAddress(slot)]);
            if let Some(backfill) = server.backfill {
                actions.extend([Reserve(backfill), Backfill(slot)]);
            }
        }
        actions
    }

    fn request(&self, server: &Server, now: u8) -> Request {
        let process = server.process.expect("a running server");
        let fence = process.fence;
        let may_use_until = server.wall(now) + self.lease;
        Request {
            identity: server.identity(),
            instance: process.instance,
            resume_secret: server.dir.resume_secret,
            wanted: server.dir.wanted,
            lease: self.lease,
            may_use_until: fence.map_or(may_use_until, |f| f.sent.max(may_use_until)),
            started_after: fence.map_or(0, |f| f.floor),
            backfill: server.backfill,
        }
    }

    /// Runs `actions` from the initial state (a Generate by itself), as they come; panics
    /// where one does not apply.
    pub fn run(&self, rules: &dyn Rules, actions: &[Action]) -> State {
        let mut state = self.initial(rules, false);
        for &action in actions {
            let applied = match action {
                Action::Generate(slot) => self.generate(rules, &mut state, slot),
                _ => self.apply(rules, &mut state, action),
            };
            assert!(
                applied.is_some(),
                "{action:?} does not apply at t={}",
                state.now
            );
        }
        state
    }

    /// Every move worth trying in `state`; `step` turns down those that do not apply.
    ///
    /// Making IDs touches only the server's own high-water and the record of IDs, so it
    /// commutes with every action but those that read or change its fence, its clock, its
    /// data directory or its process, and the tick that moves its clock's unit on: any run
    /// can be reordered so that each Generate comes right before one of those, with the
    /// same states after. So IDs are made only there (as part of the move), and by itself
    /// only when the last tick has come; this removes the many states in between.
    pub fn moves(&self, state: &State) -> Vec<Move> {
        use Action::*;
        let can_generate: Vec<u8> = (0..self.slots)
            .filter(|&slot| {
                state.servers[slot as usize]
                    .process
                    .is_some_and(|p| p.fence.is_some())
            })
            .collect();
        let mut moves = vec![];
        for action in self.actions(state) {
            moves.push(Move {
                generate: 0,
                action,
            });
            let own = match action {
                Tick => {
                    // Any of the servers that may make IDs, at the end of the tick.
                    for subset in 1..1u8 << can_generate.len() {
                        let generate = (0..can_generate.len())
                            .filter(|&i| subset & 1 << i != 0)
                            .fold(0, |mask, i| mask | 1 << can_generate[i]);
                        moves.push(Move { generate, action });
                    }
                    continue;
                }
                Renew(s)
                | RenewReplyLost(s)
                | StopCleanly(s)
                | Crash(s)
                | Backfill(s)
                | StepClock(s, _)
                | Clone(s)
                | Promote(s) => s,
                _ => continue,
            };
            if can_generate.contains(&own) {
                moves.push(Move {
                    generate: 1 << own,
                    action,
                });
            }
        }
        if state.now == self.end {
            moves.extend(can_generate.iter().map(|&slot| Move {
                generate: 1 << slot,
                action: Generate(slot),
            }));
        }
        moves
    }

    /// The state after `mv`, or None where it does not apply: in its canonical form, or as
    /// it is (for traces, which name instances and endpoints as they came).
    pub fn step(
        &self,
        rules: &dyn Rules,
        state: &State,
        mv: Move,
        canonical: bool,
    ) -> Option<State> {
        let mut next = *state;
        for slot in 0..SLOTS as u8 {
            if mv.generate & 1 << slot != 0 {
                self.generate(rules, &mut next, slot)?;
            }
        }
        if !matches!(mv.action, Action::Generate(_)) {
            self.apply(rules, &mut next, mv.action)?;
        }
        if !canonical {
            return Some(next);
        }
        self.forget_the_unreachable_past(rules, &mut next);
        rename_in_order_of_appearance(&mut next);
        // A move that changes nothing but what is left to spend is not worth taking.
        let unchanged = State {
            left: state.left,
            ..next
        };
        (unchanged != *state).then_some(next)
    }

    /// The server in `slot` makes IDs at its clock's unit in its leased partition, if its fence
    /// admits them and its data directory's high-water is below.
    pub fn generate(&self, rules: &dyn Rules, next: &mut State, slot: u8) -> Option<()> {
        let now = next.now;
        let server = &mut next.servers[slot as usize];
        let process = server.process?;
        let partition = process.fence?.partition;
        let unit = server.wall(now);
        let above = server.dir.high_water[partition as usize];
        (unit >= 1 && unit > above && rules.admits(&process, now, partition, unit)).then_some(())?;
        server.dir.high_water[partition as usize] = unit;
        next.record(partition, unit, process.instance);
        Some(())
    }

    /// Applies `action` to `next`; None where it does not apply.
    pub fn apply(&self, rules: &dyn Rules, next: &mut State, action: Action) -> Option<()> {
        use Action::*;
        let now = next.now;
        let lease = self.lease;
        let spend = |next: &mut State, kind: Kind| {
            let allowed = self.enables(kind) && next.left.adversity > 0;
            next.left.adversity = next.left.adversity.saturating_sub(1);
            allowed.then_some(())
        };
        match action {
            Tick => {
                (now < self.end).then_some(())?;
                next.now += 1;
            }
            Start(slot) => {
                let server = &mut next.servers[slot as usize];
                (server.process.is_none() && next.left.starts > 0).then_some(())?;
                server.process = Some(Process {
                    instance: next.next_instance,
                    fence: None,
                    backfill_until: 0,
                });
                next.next_instance += 1;
                next.left.starts -= 1;
            }
            Claim(slot) | ClaimReplyLost(slot) => {
                let server = next.servers[slot as usize];
                (server.process?.fence.is_none()).then_some(())?;
                if action == ClaimReplyLost(slot) {
                    spend(next, Kind::LostReply)?;
                }
                let request = self.request(&server, now);
                let cap = server.wall(now) + lease - MARGIN;
                let grant = rules.claim(&mut next.registry, now, &request);
                if let (Some(grant), Claim(_)) = (grant, action) {
                    let server = &mut next.servers[slot as usize];
                    server.dir.wanted = Some(grant.partition);
                    let process = server.process.as_mut().unwrap();
                    process.fence = Some(Fence {
                        partition: grant.partition,
                        cap,
                        deadline: now + lease - MARGIN,
                        floor: grant.start_after,
                        sent: request.may_use_until,
                    });
                    process.backfill_until = if grant.backfill_reserved {
                        now + lease
                    } else {
                        0
                    };
                }
            }
            Renew(slot) | RenewReplyLost(slot) => {
                let server = next.servers[slot as usize];
                let fence = server.process?.fence?;
                if action == RenewReplyLost(slot) {
                    spend(next, Kind::LostReply)?;
                }
                let request = self.request(&server, now);
                let cap = server.wall(now) + lease - MARGIN;
                let renewal = rules.renew(&mut next.registry, now, fence.partition, &request);
                let server = &mut next.servers[slot as usize];
                let process = server.process.as_mut().unwrap();
                match (renewal, action) {
                    (_, RenewReplyLost(_)) | (Renewal::Refused, _) => {}
                    (Renewal::Taken, _) => {
                        process.fence = None;
                        process.backfill_until = 0;
                    }
                    (
                        Renewal::Renewed {
                            floor,
                            backfill_reserved,
                        },
                        _,
                    ) => {
                        process.fence = Some(Fence {
                            cap,
                            deadline: now + lease - MARGIN,
                            floor: fence.floor.max(floor),
                            sent: request.may_use_until,
                            ..fence
                        });
                        process.backfill_until = if backfill_reserved { now + lease } else { 0 };
                    }
                }
            }
            StopCleanly(slot) => {
                let server = next.servers[slot as usize];
                let process = server.process?;
                // The new secret: the process's own number, unique to it.
                let secret = process.instance;
                if let Some(fence) = process.fence {
                    let request = Request {
                        resume_secret: secret,
                        ..self.request(&server, now)
                    };
                    rules.release(&mut next.registry, now, fence.partition, &request);
                }
                let server = &mut next.servers[slot as usize];
                server.dir.resume_secret = secret;
                server.process = None;
            }
            Crash(slot) => {
                next.servers[slot as usize].process?;
                spend(next, Kind::Crash)?;
                next.servers[slot as usize].process = None;
            }
            // Only as part of a move (see `moves`).
            Generate(_) => return None,
            Backfill(slot) => {
                self.enables(Kind::Backfill).then_some(())?;
                let server = &mut next.servers[slot as usize];
                let process = server.process?;
                let partition = server.backfill?;
                let (cursor, wall) = (server.dir.high_water[partition as usize], server.wall(now));
                (cursor < wall && rules.admits_backfill(&process, now)).then_some(())?;
                server.dir.high_water[partition as usize] = wall;
                (cursor + 1..=wall).for_each(|unit| next.record(partition, unit, process.instance));
            }
            StepClock(slot, delta) => {
                let offset = next.servers[slot as usize].clock_offset + delta;
                (self.clock_range.0..=self.clock_range.1)
                    .contains(&offset)
                    .then_some(())?;
                spend(next, Kind::ClockStep)?;
                next.servers[slot as usize].clock_offset = offset;
            }
            Clone(from) | Promote(from) => {
                let source = next.servers[from as usize];
                source.process?;
                let to = next.servers[..self.slots as usize]
                    .iter()
                    .position(|server| server.role == Role::Absent)?;
                let promoted = action == Promote(from);
                if promoted {
                    spend(next, Kind::Promote)?;
                } else {
                    spend(next, Kind::Clone)?;
                }
                let mut copy = Server {
                    origin: if promoted {
                        Origin::Promoted
                    } else {
                        Origin::Clone
                    },
                    process: None,
                    ..source
                };
                if promoted {
                    copy.dir.timeline += 1;
                    copy.endpoint = next.next_endpoint;
                    next.next_endpoint += 1;
                }
                next.servers[to] = copy;
            }
            ChangeAddress(slot) => {
                next.servers[slot as usize].process?;
                spend(next, Kind::AddressChange)?;
                next.servers[slot as usize].endpoint = next.next_endpoint;
                next.next_endpoint += 1;
            }
            SaveRegistry => {
                let restorable = self.enables(Kind::Restore) || self.enables(Kind::Failover);
                (restorable && next.left.saves > 0).then_some(())?;
                next.left.saves -= 1;
                next.registry.saved = Some(next.registry.db);
            }
            RestartRegistry => {
                spend(next, Kind::RegistryRestart)?;
                next.registry.incarnation += 1;
            }
            RestoreRegistry | FailOverRegistry => {
                let saved = next.registry.saved.take()?;
                if action == RestoreRegistry {
                    spend(next, Kind::Restore)?;
                } else {
                    spend(next, Kind::Failover)?;
                }
                next.registry.db = saved;
                next.registry.incarnation += 1;
            }
            Reserve(partition) => {
                (self.enables(Kind::Reserve) && !next.registry.db.is_reserved(partition))
                    .then_some(())?;
                rules
                    .reserve(&mut next.registry, now, partition)
                    .then_some(())?;
            }
        }
        Some(())
    }

    /// The lowest unit any clock can read from now on.
    fn lowest_unit_to_come(&self, now: u8) -> u8 {
        (now as i8 + self.clock_range.0).max(0) as u8
    }

    /// Makes states that no future can tell apart one state: below the lowest unit any clock
    /// can still read, only a backfill makes IDs, so what was made there, and a high-water or
    /// a floor below it, matter no more outside backfill partitions; nor does a fence that
    /// can admit nothing before its next renewal.
    fn forget_the_unreachable_past(&self, rules: &dyn Rules, state: &mut State) {
        let low = self.lowest_unit_to_come(state.now);
        for p in 0..PARTITIONS {
            let backfillers = state.servers.iter().filter(|s| s.backfill == Some(p as u8));
            match backfillers.map(|s| s.dir.high_water[p]).min() {
                // Backfills (the servers' and their copies') go on from their cursors.
                Some(cursor) => {
                    state.made[p][..=cursor.min(low.saturating_sub(1)) as usize].fill(0)
                }
                None => {
                    state.made[p][..low as usize].fill(0);
                    for server in &mut state.servers {
                        server.dir.high_water[p] =
                            server.dir.high_water[p].max(low.saturating_sub(1));
                    }
                }
            }
        }
        rules.forget(&mut state.registry, state.now);
        // Below `low`, what was used through and the epoch floor serve only as floors, and in
        // their order (rule 5 takes the least): only their order is kept.
        let registry = &mut state.registry;
        let mut past_times = vec![];
        for db in [Some(&mut registry.db), registry.saved.as_mut()]
            .into_iter()
            .flatten()
        {
            if db.epoch_floor > 0 {
                past_times.push(&mut db.epoch_floor);
            }
            for row in db.rows.iter_mut().flatten() {
                row.started_after = row.started_after.max(low.saturating_sub(1));
                past_times.push(&mut row.used_through);
            }
        }
        keep_only_the_order_below(low, past_times);
        for server in &mut state.servers {
            let Some(process) = &mut server.process else {
                continue;
            };
            if process.backfill_until <= state.now {
                process.backfill_until = 0;
            }
            if let Some(fence) = &mut process.fence {
                fence.floor = fence.floor.max(low.saturating_sub(1));
                // The next request sends at least low + L.
                if fence.sent < low + self.lease {
                    fence.sent = 0;
                }
                if fence.deadline <= state.now || fence.cap < low {
                    (fence.cap, fence.deadline) = (0, 0);
                }
            }
        }
    }
}

/// Maps the values below `limit` onto the ones just below it, keeping their order (and those
/// at or above `limit` as they are): for values that matter below `limit` only in their
/// order and as being below it.
pub fn keep_only_the_order_below(limit: u8, values: Vec<&mut u8>) {
    let mut below: Vec<u8> = values.iter().map(|v| **v).filter(|&v| v < limit).collect();
    below.sort_unstable();
    below.dedup();
    if below.len() > limit as usize {
        return;
    }
    let lowest = limit - below.len() as u8;
    for value in values.into_iter().filter(|v| **v < limit) {
        *value = lowest + below.binary_search(value).unwrap() as u8;
    }
}

/// Instances (and resume secrets, which are named after them) and endpoints are compared
/// only for equality: states that differ in their names alone are one state, named in the
/// order in which a fixed scan meets them.
fn rename_in_order_of_appearance(state: &mut State) {
    let mut instances = Renaming::default();
    let mut endpoints = Renaming::default();
    for server in &mut state.servers {
        if let Some(process) = &mut server.process {
            process.instance = instances.name(process.instance);
        }
        server.endpoint = endpoints.name(server.endpoint);
    }
    for server in &mut state.servers {
        server.dir.resume_secret = instances.name(server.dir.resume_secret);
    }
    let registry = &mut state.registry;
    for db in [Some(&mut registry.db), registry.saved.as_mut()]
        .into_iter()
        .flatten()
    {
        for backfiller in &mut db.backfillers {
            *backfiller = instances.name(*backfiller);
        }
        for row in db.rows.iter_mut().flatten() {
            match &mut row.owner {
                Owner::Instance(instance) => *instance = instances.name(*instance),
                Owner::Identity(identity) => identity.endpoint = endpoints.name(identity.endpoint),
            }
            row.resume_hash = instances.name(row.resume_hash);
            if let Some(seen) = &mut row.seen {
                seen.endpoint = endpoints.name(seen.endpoint);
            }
        }
    }
    for maker in state.made.iter_mut().flatten() {
        *maker = instances.name(*maker);
    }
    if let Some(repeat) = &mut state.repeat {
        (repeat.first, repeat.second) =
            (instances.name(repeat.first), instances.name(repeat.second));
    }
    state.next_instance = instances.next;
    state.next_endpoint = endpoints.next;
}

/// Names 1, 2, ... in order of first appearance; 0 (none) and `BY_HAND` keep theirs.
struct Renaming {
    names: [u8; 64],
    next: u8,
}

impl Default for Renaming {
    fn default() -> Renaming {
        Renaming {
            names: [0; 64],
            next: 1,
        }
    }
}

impl Renaming {
    fn name(&mut self, old: u8) -> u8 {
        if old == BY_HAND {
            return old;
        }
        if old != 0 && self.names[old as usize] == 0 {
            self.names[old as usize] = self.next;
            self.next += 1;
        }
        self.names[old as usize]
    }
}
