//! The registry's two rule sets, OLD (today, commit a81a9fb) and NEW (the design), as the
//! design doc states them: the registry's side of a claim, a renewal and a release, and the
//! server's fence.

use super::model::keep_only_the_order_below;
use super::state::{Database, Identity, Owner, Process, Registry, Row};

/// What a lease holder sends with a claim, a renewal or a release.
#[derive(Clone, Copy, Debug)]
pub struct Request {
    pub identity: Identity,
    pub instance: u8,
    /// R from the data directory's file (0: none); the registry compares its hash.
    pub resume_secret: u8,
    pub wanted: Option<u8>,
    pub lease: u8,
    /// Wall clock at sending + L; in a renewal, the greatest the holder has sent.
    pub may_use_until: u8,
    /// The holder's floor.
    pub started_after: u8,
    pub backfill: Option<u8>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Grant {
    pub partition: u8,
    pub start_after: u8,
    pub backfill_reserved: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Renewal {
    /// Extended; the holder's floor rises to `floor` (0: stays).
    Renewed { floor: u8, backfill_reserved: bool },
    /// Another server's row: the fence closes at once and the holder claims again.
    Taken,
    /// Refused without a verdict on the row (NEW's clock allowance): the fence runs out.
    Refused,
}

/// A rule set: the registry's answers, and the fence that a server applies to them.
pub trait Rules {
    fn name(&self) -> String;
    /// Makes registries that no rule of the set can tell apart from now on one registry.
    fn forget(&self, _registry: &mut Registry, _now: u8) {}
    /// What the registry's installation writes.
    fn install(&self, _registry: &mut Registry) {}
    fn claim(&self, registry: &mut Registry, now: u8, request: &Request) -> Option<Grant>;
    fn renew(&self, registry: &mut Registry, now: u8, partition: u8, request: &Request) -> Renewal;
    fn release(&self, registry: &mut Registry, now: u8, partition: u8, request: &Request);
    /// A person reserves `partition` for a backfill; false where refused or not a thing.
    fn reserve(&self, registry: &mut Registry, now: u8, partition: u8) -> bool;
    /// Whether the fence lets `process` make an ID of `partition` at `unit` now.
    fn admits(&self, process: &Process, now: u8, partition: u8, unit: u8) -> bool;
    /// Whether `process` may make IDs of its backfill partition now.
    fn admits_backfill(&self, process: &Process, now: u8) -> bool;
}

fn lowest_without_row(db: &Database, partitions: u8, usable: impl Fn(u8) -> bool) -> Option<u8> {
    (0..partitions).find(|&p| db.rows[p as usize].is_none() && usable(p))
}

fn write_row(db: &mut Database, partition: u8, owner: Owner, now: u8, request: &Request) -> Row {
    let old_used_through = db.rows[partition as usize].map_or(0, |row| row.used_through);
    Row {
        owner,
        expires_at: now + request.lease,
        used_through: old_used_through.max(request.may_use_until),
        started_after: 0,
        epoch: db.epoch,
        resume_hash: 0,
        seen: None,
    }
}

/// The time fence of both rule sets: the monotonic deadline, and floor < unit <= cap.
fn time_fence_admits(process: &Process, now: u8, unit: u8) -> Option<u8> {
    let fence = process.fence?;
    (now < fence.deadline && fence.floor < unit && unit <= fence.cap).then_some(fence.partition)
}

/// Today's rules: a server is its (system identifier, timeline, address, port).
pub struct Old;

impl Rules for Old {
    fn name(&self) -> String {
        "OLD".into()
    }

    /// OLD has no epochs: which incarnation the registry is does not matter. The ends of
    /// ended leases matter only in their order (rule 4 takes the earliest).
    fn forget(&self, registry: &mut Registry, now: u8) {
        registry.incarnation = 0;
        let mut ended = vec![];
        for db in [Some(&mut registry.db), registry.saved.as_mut()]
            .into_iter()
            .flatten()
        {
            let rows = db.rows.iter_mut().flatten();
            ended.extend(
                rows.map(|row| &mut row.expires_at)
                    .filter(|end| **end <= now),
            );
        }
        keep_only_the_order_below(now + 1, ended);
    }

    fn claim(&self, registry: &mut Registry, now: u8, request: &Request) -> Option<Grant> {
        let db = &mut registry.db;
        let me = Owner::Identity(request.identity);
        let row = |p: u8| db.rows[p as usize];
        let all = 0..registry.partitions;
        let mine = all.clone().find(|&p| row(p).is_some_and(|r| r.owner == me));
        let (partition, start_after) = mine
            .map(|p| (p, row(p).unwrap().started_after))
            .or_else(|| {
                let w = request.wanted?;
                match row(w) {
                    None => Some((w, 0)),
                    // A later timeline of the same system takes the partition, live or not.
                    Some(Row {
                        owner: Owner::Identity(held),
                        ..
                    }) if held.system == request.identity.system
                        && held.timeline < request.identity.timeline =>
                    {
                        Some((w, 0))
                    }
                    Some(r) if r.expires_at <= now && r.used_through <= now => {
                        Some((w, r.used_through))
                    }
                    Some(_) => None,
                }
            })
            .or_else(|| lowest_without_row(db, registry.partitions, |_| true).map(|p| (p, 0)))
            .or_else(|| {
                all.filter_map(|p| row(p).map(|r| (p, r)))
                    .filter(|(_, r)| r.expires_at <= now)
                    .min_by_key(|(_, r)| r.expires_at)
                    .map(|(p, r)| (p, r.used_through))
            })?;
        let row = Row {
            started_after: start_after,
            ..write_row(db, partition, me, now, request)
        };
        db.rows[partition as usize] = Some(row);
        Some(Grant {
            partition,
            start_after,
            backfill_reserved: false,
        })
    }

    fn renew(&self, registry: &mut Registry, now: u8, partition: u8, request: &Request) -> Renewal {
        match &mut registry.db.rows[partition as usize] {
            Some(row) if row.owner == Owner::Identity(request.identity) => {
                row.expires_at = now + request.lease;
                row.used_through = row.used_through.max(request.may_use_until);
                Renewal::Renewed {
                    floor: 0,
                    backfill_reserved: false,
                }
            }
            _ => Renewal::Taken,
        }
    }

    fn release(&self, registry: &mut Registry, now: u8, partition: u8, request: &Request) {
        if let Some(row) = &mut registry.db.rows[partition as usize] {
            if row.owner == Owner::Identity(request.identity) {
                row.expires_at = now;
            }
        }
    }

    fn reserve(&self, _: &mut Registry, _: u8, _: u8) -> bool {
        false
    }

    /// The partition is not compared: the fence is time alone.
    fn admits(&self, process: &Process, now: u8, _partition: u8, unit: u8) -> bool {
        time_fence_admits(process, now, unit).is_some()
    }

    /// A backfill partition is a person's business; the registry knows nothing of it.
    fn admits_backfill(&self, _: &Process, _: u8) -> bool {
        true
    }
}

/// Deliberate breakages of NEW, each of which the exploration must catch.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Breakage {
    /// A new epoch leaves the floor where it was.
    NoEpochFloor,
    /// A renewal matches its row on the address the registry sees, as OLD's does.
    RenewalMatchesAddress,
    /// Rule 3 lets a later timeline of the same system take a live lease, as OLD's rule 2.
    TakeoverByLaterTimeline,
    /// No clock allowance: a holder's clock may run any distance ahead.
    NoClockAllowance,
    /// A claim by another instance leaves the row's resume hash in place.
    ResumeHashOutlivesItsRow,
    /// The registry leases reserved partitions like any other.
    ReservationsIgnored,
}

/// Changes to NEW's text that the model showed to be needed (the module comment of the tests
/// gives the runs that need them).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Fix {
    /// The epoch record is written when the registry is installed, so that every backup and
    /// every standby has one, and a missing record always begins an epoch.
    RecordFromInstall = 1,
    /// A renewal that re-establishes a lost row, or renews a row that is unconfirmed and has
    /// ended, raises the holder's floor to the epoch floor.
    FloorForRenewalsOfLostRows = 2,
    /// A reservation is refused once an epoch after the first has begun: rows may have been
    /// lost, and with them the knowledge that the partition was leased.
    NoReservationsAfterLostRows = 4,
    /// The registry's word that a backfill partition is reserved goes to one instance, and
    /// on to the instance that resumes its lease with its resume secret: never to a copy.
    OneBackfillerPerReservation = 8,
}

pub const FIXES: [Fix; 4] = [
    Fix::RecordFromInstall,
    Fix::FloorForRenewalsOfLostRows,
    Fix::NoReservationsAfterLostRows,
    Fix::OneBackfillerPerReservation,
];

/// The new rules, with the fixes in `fixes` (a bit each) and perhaps a deliberate breakage.
pub struct New {
    pub fixes: u8,
    pub breakage: Option<Breakage>,
}

impl New {
    pub const FIXED: New = New {
        fixes: 15,
        breakage: None,
    };
    pub const AS_WRITTEN: New = New {
        fixes: 0,
        breakage: None,
    };

    pub fn without(fix: Fix) -> New {
        New {
            fixes: New::FIXED.fixes & !(fix as u8),
            breakage: None,
        }
    }

    pub fn broken(breakage: Breakage) -> New {
        New {
            breakage: Some(breakage),
            ..New::FIXED
        }
    }

    fn has(&self, fix: Fix) -> bool {
        self.fixes & fix as u8 != 0
    }

    fn broken_by(&self, breakage: Breakage) -> bool {
        self.breakage == Some(breakage)
    }

    fn new_epoch(&self, db: &mut Database, now: u8) {
        db.epoch += 1;
        if !self.broken_by(Breakage::NoEpochFloor) {
            db.epoch_floor = db.epoch_floor.max(now + 2 * db.longest_lease);
        }
    }

    /// What every call does first: compare the epoch record with the registry as it runs.
    fn begin_call(&self, registry: &mut Registry, now: u8) {
        let db = &mut registry.db;
        if db.epoch_record != Some(registry.incarnation) {
            let rows_exist = db.rows.iter().any(Option::is_some);
            if db.epoch_record.is_some() || rows_exist || self.has(Fix::RecordFromInstall) {
                self.new_epoch(db, now);
            }
            db.epoch_record = Some(registry.incarnation);
        }
    }

    /// The clock allowance: nothing may be used beyond registry now + 2L.
    fn too_far_ahead(&self, now: u8, request: &Request) -> bool {
        !self.broken_by(Breakage::NoClockAllowance)
            && request.may_use_until > now + 2 * request.lease
    }

    /// What a row records "for people": the model keeps it only where a breakage compares
    /// it, so that NEW's states differ only in what its rules read.
    fn seen(&self, request: &Request) -> Option<Identity> {
        let compared = [
            Breakage::RenewalMatchesAddress,
            Breakage::TakeoverByLaterTimeline,
        ];
        compared
            .iter()
            .any(|&b| self.broken_by(b))
            .then_some(request.identity)
    }

    fn is_mine(&self, row: &Row, request: &Request) -> bool {
        row.owner == Owner::Instance(request.instance)
    }

    /// Renewals match on the instance (on the address too, where so broken).
    fn renews(&self, row: &Row, request: &Request) -> bool {
        self.is_mine(row, request)
            || self.broken_by(Breakage::RenewalMatchesAddress)
                && row
                    .seen
                    .is_some_and(|seen| seen.endpoint == request.identity.endpoint)
    }

    fn taken_over(&self, row: &Row, request: &Request) -> bool {
        self.broken_by(Breakage::TakeoverByLaterTimeline)
            && row.seen.is_some_and(|seen| {
                seen.system == request.identity.system && seen.timeline < request.identity.timeline
            })
    }

    fn backfill_reserved(&self, db: &mut Database, request: &Request) -> bool {
        let Some(b) = request.backfill else {
            return false;
        };
        if !db.is_reserved(b) || db.rows[b as usize].is_some() {
            return false;
        }
        if !self.has(Fix::OneBackfillerPerReservation) {
            return true;
        }
        let backfiller = &mut db.backfillers[b as usize];
        if *backfiller == 0 {
            *backfiller = request.instance;
        }
        *backfiller == request.instance
    }
}

impl Rules for New {
    fn name(&self) -> String {
        let missing: Vec<_> = FIXES.iter().filter(|&&fix| !self.has(fix)).collect();
        match (self.breakage, missing.len()) {
            (Some(breakage), _) => format!("NEW broken by {breakage:?}"),
            (None, 0) => "NEW".into(),
            (None, n) if n == FIXES.len() => "NEW as written".into(),
            (None, _) => format!("NEW without {missing:?}"),
        }
    }

    /// NEW compares a lease's end only with the present, epochs and incarnations only for
    /// equality: an ended lease ends at 0, a confirmed row is of epoch 1 and an unconfirmed
    /// one of 0, and the running registry is incarnation 1.
    fn forget(&self, registry: &mut Registry, now: u8) {
        let running = registry.incarnation;
        registry.incarnation = 1;
        let saved = registry.saved.as_mut();
        for (db, live) in [(Some(&mut registry.db), true), (saved, false)] {
            let Some(db) = db else { continue };
            for row in db.rows.iter_mut().flatten() {
                if row.expires_at <= now {
                    row.expires_at = 0;
                }
                row.epoch = u8::from(row.epoch == db.epoch);
            }
            db.epoch = 1;
            // A saved record can only meet a later incarnation.
            db.epoch_record = db
                .epoch_record
                .map(|record| u8::from(live && record == running));
        }
    }

    fn install(&self, registry: &mut Registry) {
        if self.has(Fix::RecordFromInstall) {
            registry.db.epoch_record = Some(registry.incarnation);
        }
    }

    fn claim(&self, registry: &mut Registry, now: u8, request: &Request) -> Option<Grant> {
        self.begin_call(registry, now);
        if self.too_far_ahead(now, request) {
            return None;
        }
        let db = &mut registry.db;
        let (epoch, floor, rows) = (db.epoch, db.epoch_floor, db.rows);
        let ignores_reservations = self.broken_by(Breakage::ReservationsIgnored);
        let usable = |p: u8| ignores_reservations || !db.is_reserved(p);
        // The epoch floor, for a row not confirmed in this epoch: it may have lost commits.
        let unconfirmed_floor = |r: &Row| if r.epoch == epoch { 0 } else { floor };
        let ended = |r: &Row| r.expires_at <= now;
        let with_rows = || (0..registry.partitions).filter_map(|p| Some((p, rows[p as usize]?)));
        // 1. My own row.
        let choice = with_rows()
            .find(|(_, r)| self.is_mine(r, request))
            .map(|(p, r)| (p, r.started_after.max(unconfirmed_floor(&r))))
            // 2. The row my resume secret released, at once.
            .or_else(|| {
                let secret = request.resume_secret;
                let (p, r) = with_rows()
                    .find(|(_, r)| secret != 0 && r.resume_hash == secret && ended(r))?;
                let confirmed = r.epoch == epoch;
                let lost = r.started_after.max(r.used_through).max(floor);
                Some((p, if confirmed { r.started_after } else { lost }))
            })
            // 3. The wanted partition, if free, or ended and used through.
            .or_else(|| {
                let w = request.wanted.filter(|&w| usable(w))?;
                match rows[w as usize] {
                    None => Some((w, floor)),
                    Some(r) if self.taken_over(&r, request) => Some((w, 0)),
                    Some(r) if ended(&r) && r.used_through <= now => {
                        Some((w, r.used_through.max(unconfirmed_floor(&r))))
                    }
                    Some(_) => None,
                }
            })
            // 4. The lowest partition never leased.
            .or_else(|| lowest_without_row(db, registry.partitions, usable).map(|p| (p, floor)))
            // 5. The ended lease whose successor may start soonest.
            .or_else(|| {
                with_rows()
                    .filter(|&(p, r)| usable(p) && ended(&r))
                    .map(|(p, r)| (p, r.used_through.max(unconfirmed_floor(&r))))
                    .min_by_key(|&(_, start_after)| start_after)
            });
        let (partition, start_after) = choice?;
        let old = rows[partition as usize];
        if let Some(Row {
            owner: Owner::Instance(released_by),
            resume_hash,
            expires_at,
            ..
        }) = old
        {
            let secret = request.resume_secret;
            let resumed = secret != 0 && resume_hash == secret && expires_at <= now;
            // The backfill goes on with the lease, from the same data directory.
            for backfiller in db
                .backfillers
                .iter_mut()
                .filter(|b| resumed && **b == released_by)
            {
                *backfiller = request.instance;
            }
        }
        let keeps_hash = self.broken_by(Breakage::ResumeHashOutlivesItsRow)
            && old.is_some_and(|r| !self.is_mine(&r, request));
        let row = Row {
            started_after: start_after,
            seen: self.seen(request),
            resume_hash: if keeps_hash {
                old.unwrap().resume_hash
            } else {
                0
            },
            ..write_row(
                db,
                partition,
                Owner::Instance(request.instance),
                now,
                request,
            )
        };
        db.rows[partition as usize] = Some(row);
        db.longest_lease = db.longest_lease.max(request.lease);
        Some(Grant {
            partition,
            start_after,
            backfill_reserved: self.backfill_reserved(db, request),
        })
    }

    fn renew(&self, registry: &mut Registry, now: u8, partition: u8, request: &Request) -> Renewal {
        self.begin_call(registry, now);
        if self.too_far_ahead(now, request) {
            return Renewal::Refused;
        }
        let db = &mut registry.db;
        let epoch = db.epoch;
        let floor = match db.rows[partition as usize] {
            Some(row) if self.renews(&row, request) => {
                // A row not confirmed in this epoch that has ended may have gone to another
                // server in the commits the registry lost, and come back.
                let lost = row.epoch != epoch && row.expires_at <= now;
                let fixed = self.has(Fix::FloorForRenewalsOfLostRows);
                if lost && fixed {
                    db.epoch_floor
                } else {
                    0
                }
            }
            Some(_) => return Renewal::Taken,
            None => {
                // Lost with the commits since: re-established, and a new epoch begins.
                self.new_epoch(db, now);
                if self.has(Fix::FloorForRenewalsOfLostRows) {
                    db.epoch_floor
                } else {
                    0
                }
            }
        };
        let old = db.rows[partition as usize];
        db.rows[partition as usize] = Some(Row {
            owner: Owner::Instance(request.instance),
            expires_at: now + request.lease,
            used_through: old.map_or(0, |r| r.used_through).max(request.may_use_until),
            started_after: old
                .map_or(0, |r| r.started_after)
                .max(request.started_after),
            epoch: db.epoch,
            resume_hash: old.map_or(0, |r| r.resume_hash),
            seen: old.map_or(self.seen(request), |r| r.seen),
        });
        db.longest_lease = db.longest_lease.max(request.lease);
        Renewal::Renewed {
            floor,
            backfill_reserved: self.backfill_reserved(db, request),
        }
    }

    fn release(&self, registry: &mut Registry, now: u8, partition: u8, request: &Request) {
        self.begin_call(registry, now);
        if let Some(row) = &mut registry.db.rows[partition as usize] {
            if self.renews(row, request) {
                row.expires_at = now;
                row.resume_hash = request.resume_secret;
            }
        }
    }

    /// Only a partition never leased can be reserved.
    fn reserve(&self, registry: &mut Registry, now: u8, partition: u8) -> bool {
        self.begin_call(registry, now);
        let db = &mut registry.db;
        let rows_may_be_lost = db.epoch_floor > 0 && self.has(Fix::NoReservationsAfterLostRows);
        if db.rows[partition as usize].is_some() || rows_may_be_lost {
            return false;
        }
        db.reserved |= 1 << partition;
        true
    }

    fn admits(&self, process: &Process, now: u8, partition: u8, unit: u8) -> bool {
        time_fence_admits(process, now, unit) == Some(partition)
    }

    fn admits_backfill(&self, process: &Process, now: u8) -> bool {
        now < process.backfill_until
    }
}
