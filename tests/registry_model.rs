//! A model checker of the partition registry (issue 44): explicit states, explored breadth
//! first to a bound, under today's rules (OLD, commit a81a9fb) and the new ones (NEW), as the
//! design doc of the registry states them. The invariant: no two processes make the same ID.
//!
//! Run it with `scripts/cargo.sh test --no-default-features --features serde,diesel --test
//! registry_model` (add `-- --nocapture` for the state counts and the shortest runs found).
//! It uses nothing from the crate.
//!
//! # What is modelled
//!
//! A state ([`state::State`]) holds real time in ticks; the registry's database (lease rows
//! with instance or identity, lease end, used-through, started-after, epoch, resume hash; the
//! epoch record, epoch, epoch floor, longest lease, reservations), one saved copy of it (a
//! backup, or what an asynchronous standby has received), and which incarnation of the
//! registry runs; the servers (data directory with its high-water per partition, wanted
//! partition, resume secret file, system identifier and timeline; address; clock offset;
//! backfill partition; the running process, if any, with its instance and its fence:
//! partition, floor, cap, deadline); and which process made IDs at each (partition, unit).
//! The actions ([`model::Action`]): ticks; a postmaster starting from its own data directory;
//! claims, renewals (or not: a holder that pauses is a run in which it does nothing),
//! releases at clean stops, crashes; a claim or renewal whose reply is lost; making IDs at
//! the clock's unit if the fence admits; clock steps; a copy of a running server's data
//! directory started behind the same address and port (a clone) or promoted to the next
//! timeline; a registry restart, a restore of the saved copy, a failover to it; an address
//! that changes; a person reserving a backfill partition, and a backfill at past units; and a
//! server not on the registry, set by hand to a partition, which makes IDs at every unit.
//! The two rule sets implement one trait ([`rules::Rules`]): claim, renew, release, fence.
//!
//! A process that started from a data directory whose high-water for p is H makes IDs of p
//! only above H, and its data directory records all it made (a copy, what it had when
//! copied). So a process never repeats what its data directory's history made, and any two
//! processes that make an ID of the same partition and unit are a repeat.
//!
//! # What is abstracted away, and why that is sound
//!
//! - Sequences and tick-tock: a (partition, unit) made by two processes counts as a repeat,
//!   which is what two generators with their own sequences risk.
//! - The holder's margin is 0: the widest fence any margin gives.
//! - Requests and replies are atomic. A late reply shortens the holder's fence (deadline and
//!   cap count from the sending), so it is a prompt reply to a holder whose clock read the
//!   sending time, with less fence: covered as far as clock steps reach. A lost reply is an
//!   action. The registry's clock is real time, a standby's too; every lease is L, so G = L.
//! - Instances, resume secrets and addresses are only ever compared: states that differ in
//!   their names are one state. Below the lowest unit any clock can still read, what was made
//!   (outside backfill partitions), high-waters and floors no longer matter, and times in the
//!   registry matter only in their order; NEW compares lease ends only with the present and
//!   epochs only for equality. A state seen with more budget left covers the same state with
//!   less. Making IDs commutes with every action but those of its own server that read or
//!   change its fence, clock, data directory or process, so IDs are made right before those
//!   and before ticks, which any run can be reordered to. A backfill makes every unit from
//!   its cursor to its clock at once: a repeat is between two makers, and each may leave out
//!   the backfills that take no part in it.
//!
//! # The bound
//!
//! Each family has its own ([`clones`] and the functions after it): one or two servers and a
//! slot for a copy, two to four partitions, leases of 2 ticks, 2 to 7 ticks from tick 2,
//! clock offsets within -1..=1 (one breakage check has a clock 3 ahead and leases of 1), one
//! or two adversarial events per run, up to two restarts, one saved registry. Every NEW
//! exploration covers at least the number of states its test asserts (from 1,000 to 100,000;
//! they see 1,500 to 220,000) and makes IDs by clones, by promoted copies, after restores, in
//! later epochs, off the clock and by backfills where its family has them. The file runs in
//! about half a minute on 2 cores.
//!
//! # What the model found
//!
//! OLD repeats an ID in every family, in runs of 3 to 6 actions within one tick (the tests
//! print them): a clone behind the same address gets its original's partition by rule 1; a
//! promoted copy takes its primary's live partition by rule 2; a registry that lost a claim
//! gives the partition again; a backfill partition and a partition set by hand are handed
//! out. An address that changes costs the lease at the next renewal, leaving it dangling
//! until it expires; with two servers one change starves a server, with no repeat.
//!
//! NEW as the design doc writes it repeats IDs too, and needs four fixes ([`rules::Fix`]):
//!
//! 1. `RecordFromInstall`: a backup or a standby from before the first call has no epoch
//!    record and no rows, which the text takes for a fresh registry: no new epoch, no floor,
//!    and the partition of a live lease is given again at once. Fix: write the record at
//!    installation, and begin an epoch whenever the record is missing.
//! 2. `FloorForRenewalsOfLostRows`: a holder that missed renewals while its lease went to
//!    another server, whose row a restore then brings back (or loses, so that the renewal
//!    re-establishes it), renews with its old floor while the other still makes IDs in the
//!    partition. Fix: a renewal of an unconfirmed row that has ended, or of a missing one,
//!    raises the holder's floor to the epoch floor (an unconfirmed row still live is safe:
//!    nobody took it before it ends, so registry restarts cost holders nothing).
//! 3. `NoReservationsAfterLostRows`: after lost rows the registry can no longer tell that a
//!    partition was never leased, and reserves one whose lessee made IDs, or still makes
//!    them. Fix: refuse reservations once an epoch after the first has begun (or let a person
//!    override after checking the data).
//! 4. `OneBackfillerPerReservation`: a clone of a backfilling server has the same cursor and
//!    the same `sno.backfill_partition`, and the registry tells both that it is reserved and
//!    not leased. Fix: the word goes to one instance, and on to the instance that resumes its
//!    lease with its resume secret, never to a copy.
//!
//! The model also reads two points the text leaves open: a claim by another instance clears
//! the resume hash (breakage `ResumeHashOutlivesItsRow` shows it must), and the registry's
//! word that a backfill partition is reserved holds, like the fence, until the holder's
//! deadline and is renewed with the lease (a restore may drop the reservation).
//!
//! The checks can fail: each of these deliberate breakages of NEW ([`rules::Breakage`]) was
//! tried, and each repeats an ID (the last test keeps them caught): no epoch floor, renewals
//! that match on the address, takeover by a later timeline, no clock allowance, a resume hash
//! that outlives its row, reservations ignored; so does NEW without any one of the fixes.

#[path = "registry_model/model.rs"]
mod model;
#[path = "registry_model/rules.rs"]
mod rules;
#[path = "registry_model/search.rs"]
mod search;
#[path = "registry_model/state.rs"]
mod state;

use model::{kinds, Action, Kind, Model, Setup, EVERYTHING};
use rules::{Breakage, Fix, New, Old, Rules, FIXES};
use search::{explore, Outcome};
use state::{Owner, State, START};

// ---- The models: who runs, what may happen, and how far. ----

/// A server running from the start, asking for `wanted`.
fn server(wanted: u8) -> Setup {
    Setup {
        wanted: Some(wanted),
        running: true,
        ..Setup::default()
    }
}

/// One server, nothing adversarial, four ticks: what the families below add to.
fn quiet() -> Model {
    Model {
        partitions: 2,
        lease: 2,
        end: START + 4,
        clock_range: (0, 0),
        adversity: 0,
        starts: 0,
        saves: 0,
        servers: vec![server(0)],
        hand_set: None,
        slots: 1,
        enabled: 0,
    }
}

/// (a) A server and a slot for a copy of its data directory started behind the same
/// address and port; crashes, restarts and lost replies besides.
fn clones() -> Model {
    Model {
        slots: 2,
        end: START + 7,
        adversity: 2,
        starts: 2,
        enabled: kinds(&[Kind::Clone, Kind::Crash, Kind::LostReply]),
        ..quiet()
    }
}

/// (b) The same with a copy promoted to the next timeline.
fn promotions() -> Model {
    Model {
        enabled: kinds(&[Kind::Promote, Kind::Crash, Kind::LostReply]),
        ..clones()
    }
}

/// (c) Two servers that want the same partition, and a registry that may go back to a
/// backup or to a standby that lags, at any point.
fn lost_commits() -> Model {
    Model {
        servers: vec![server(0), server(0)],
        slots: 2,
        adversity: 1,
        saves: 1,
        enabled: kinds(&[Kind::Restore, Kind::Failover]),
        ..quiet()
    }
}

/// (c) Two servers, a registry that restarts, servers that crash, restart and miss replies.
fn registry_restarts() -> Model {
    Model {
        servers: vec![server(0), server(0)],
        slots: 2,
        end: START + 4,
        adversity: 1,
        starts: 1,
        enabled: kinds(&[Kind::RegistryRestart, Kind::Crash, Kind::LostReply]),
        ..quiet()
    }
}

/// (d) A server with a backfill partition (2), one that wants that partition for a lease,
/// a partition set by hand (3) on a server not on the registry, and a registry that may go
/// back to a backup, over two ticks.
fn backfills() -> Model {
    let backfiller = Setup {
        backfill: Some(2),
        ..server(0)
    };
    Model {
        partitions: 4,
        servers: vec![backfiller, server(2)],
        hand_set: Some(3),
        slots: 2,
        end: START + 2,
        adversity: 1,
        saves: 1,
        enabled: kinds(&[Kind::Backfill, Kind::Reserve, Kind::Restore]),
        ..quiet()
    }
}

/// (e) Two servers whose address, as the registry sees it, may change twice.
fn address_changes() -> Model {
    Model {
        servers: vec![server(0), server(0)],
        slots: 2,
        end: START + 5,
        adversity: 2,
        enabled: kinds(&[Kind::AddressChange]),
        ..quiet()
    }
}

/// Clocks one unit ahead and one behind, that may step once more; holders that pause (any
/// run where they do nothing for a while); leases of 2.
fn clock_steps() -> Model {
    Model {
        servers: vec![
            Setup {
                clock: 1,
                ..server(0)
            },
            Setup {
                clock: -1,
                ..server(0)
            },
        ],
        slots: 2,
        end: START + 5,
        clock_range: (-1, 1),
        adversity: 1,
        enabled: kinds(&[Kind::ClockStep]),
        ..quiet()
    }
}

/// Everything at once, at a smaller bound: the backfilling server, a slot for a copy, a
/// partition set by hand, one adversarial event of any kind, one restart, two ticks.
fn everything() -> Model {
    Model {
        servers: vec![Setup {
            backfill: Some(2),
            ..server(0)
        }],
        slots: 2,
        end: START + 2,
        clock_range: (0, 1),
        adversity: 1,
        starts: 1,
        saves: 1,
        enabled: EVERYTHING,
        ..backfills()
    }
}

// ---- Checks. ----

/// Explores `model` under `rules` to its bound, and asserts that no ID repeats and that the
/// exploration saw at least `at_least` states.
fn assert_no_repeat(model: &Model, rules: &dyn Rules, at_least: usize) -> Outcome {
    let outcome = explore(model, rules, |_| false);
    println!("{}", outcome.report());
    assert!(outcome.found.is_none(), "{}", outcome.report());
    assert!(outcome.states >= at_least, "{}", outcome.report());
    assert!(outcome.ids > 0, "{}", outcome.report());
    outcome
}

/// Asserts that `rules` repeat an ID in `model`, and prints the shortest run that does.
fn assert_repeats(model: &Model, rules: &dyn Rules) -> Outcome {
    let outcome = explore(model, rules, |_| false);
    println!("{}", outcome.report());
    assert!(outcome.repeat().is_some(), "{}", outcome.report());
    outcome
}

/// A live lease of a running server's own (its instance's, or under OLD its system's and
/// timeline's at another address) that its fence does not hold: a lease left dangling.
fn dangling_lease(state: &State) -> Option<usize> {
    let db = &state.registry.db;
    state.servers.iter().position(|server| {
        let Some(process) = server.process else {
            return false;
        };
        (0..db.rows.len()).any(|p| {
            db.rows[p].is_some_and(|row| {
                let own = match row.owner {
                    Owner::Instance(instance) => instance == process.instance,
                    Owner::Identity(identity) => {
                        (identity.system, identity.timeline)
                            == (server.dir.system, server.dir.timeline)
                    }
                };
                let held = process
                    .fence
                    .is_some_and(|fence| fence.partition as usize == p);
                own && !held && row.expires_at > state.now
            })
        })
    })
}

/// A server left without a partition by its own dangling leases: every partition is leased
/// and alive, one of them to itself at an address it no longer has.
fn starved_by_its_own_leases(state: &State) -> bool {
    let db = &state.registry.db;
    let all_live = (0..state.registry.partitions as usize)
        .all(|p| db.rows[p].is_some_and(|row| row.expires_at > state.now));
    dangling_lease(state).is_some_and(|s| state.servers[s].process.unwrap().fence.is_none())
        && all_live
}

// ---- (a) Two clones behind one address and port. ----

#[test]
fn old_rules_give_a_clone_behind_the_same_address_its_originals_partition() {
    assert_repeats(&clones(), &Old);
}

#[test]
fn new_rules_keep_a_clone_behind_the_same_address_apart() {
    let outcome = assert_no_repeat(&clones(), &New::FIXED, 50_000);
    assert!(outcome.ids_by_clones > 0);
}

// ---- (b) A copy promoted while its primary generates. ----

#[test]
fn old_rules_let_a_promoted_copy_take_its_primarys_live_partition() {
    assert_repeats(&promotions(), &Old);
}

#[test]
fn new_rules_keep_a_promoted_copy_apart() {
    let outcome = assert_no_repeat(&promotions(), &New::FIXED, 50_000);
    assert!(outcome.ids_by_promoted_copies > 0);
}

/// A failover of a server: its promoted copy makes IDs at once, in a partition of its own.
#[test]
fn new_rules_let_a_promoted_copy_make_ids_at_once_in_another_partition() {
    use Action::*;
    let promoted = [
        Claim(0),
        Generate(0),
        Promote(0),
        Start(1),
        Claim(1),
        Generate(1),
    ];
    let state = promotions().run(&New::FIXED, &promoted);
    let fence = |slot: usize| state.servers[slot].process.unwrap().fence.unwrap();
    assert_eq!((fence(0).partition, fence(1).partition), (0, 1));
    assert_eq!(state.now, START);
    // Under OLD it takes its primary's partition instead, live as it is.
    let state = promotions().run(&Old, &promoted[..5]);
    assert_eq!(
        state.servers[1].process.unwrap().fence.unwrap().partition,
        0
    );
}

// ---- (c) A registry restored from a backup, or failed over to a lagging standby. ----

#[test]
fn old_rules_hand_out_again_what_a_restored_or_failed_over_registry_lost() {
    for lost in [Kind::Restore, Kind::Failover] {
        assert_repeats(
            &Model {
                enabled: lost as u16,
                ..lost_commits()
            },
            &Old,
        );
    }
}

#[test]
fn new_rules_survive_restores_and_failovers_to_lagging_standbys() {
    let outcome = assert_no_repeat(&lost_commits(), &New::FIXED, 50_000);
    assert!(outcome.ids_after_lost_commits > 0 && outcome.ids_in_later_epochs > 0);
}

#[test]
fn new_rules_survive_registry_restarts_crashes_and_lost_replies() {
    let outcome = assert_no_repeat(&registry_restarts(), &New::FIXED, 20_000);
    assert!(outcome.ids_in_later_epochs > 0);
}

// ---- (d) Backfill partitions and partitions set by hand. ----

#[test]
fn old_rules_hand_out_backfill_and_hand_set_partitions() {
    let backfill = Model {
        hand_set: None,
        enabled: kinds(&[Kind::Backfill]),
        ..backfills()
    };
    assert_repeats(&backfill, &Old);
    // A new server that wants no partition in particular gets the lowest one free.
    let new_server = Setup {
        running: true,
        ..Setup::default()
    };
    let hand_set = Model {
        hand_set: Some(0),
        servers: vec![new_server],
        ..quiet()
    };
    assert_repeats(&hand_set, &Old);
}

#[test]
fn new_rules_never_lease_backfill_and_hand_set_partitions() {
    let outcome = assert_no_repeat(&backfills(), &New::FIXED, 50_000);
    assert!(outcome.backfill_ids > 0);
}

// ---- (e) A source address that changes. ----

#[test]
fn old_rules_leave_leases_dangling_when_the_address_changes() {
    let outcome = explore(&address_changes(), &Old, starved_by_its_own_leases);
    println!("{}", outcome.report());
    assert!(outcome.found.is_some_and(|s| s.repeat.is_none()));
    // A liveness failure, not a repeat.
    assert_no_repeat(&address_changes(), &Old, 1_000);
}

#[test]
fn new_rules_keep_the_lease_when_the_address_changes() {
    let outcome = explore(&address_changes(), &New::FIXED, |s| {
        dangling_lease(s).is_some()
    });
    println!("{}", outcome.report());
    assert!(outcome.found.is_none(), "{}", outcome.report());
    assert!(outcome.states >= 1_000 && outcome.ids > 0);
}

// ---- Clock steps and pauses, restarts. ----

#[test]
fn new_rules_survive_clock_steps_and_pauses() {
    let outcome = assert_no_repeat(&clock_steps(), &New::FIXED, 20_000);
    assert!(outcome.ids_off_the_clock > 0);
}

/// A clean restart takes its partition back at once, with its resume secret: at the next
/// unit, before the lease it released would have ended.
#[test]
fn new_rules_let_a_clean_restart_take_its_partition_back_at_once() {
    use Action::*;
    let restart = [
        Claim(0),
        Tick,
        Renew(0),
        Generate(0),
        StopCleanly(0),
        Start(0),
        Claim(0),
    ];
    let model = Model {
        starts: 1,
        ..quiet()
    };
    let state = model.run(&New::FIXED, &[&restart[..], &[Tick, Generate(0)]].concat());
    let fence = state.servers[0].process.unwrap().fence.unwrap();
    let released_lease_end = START + 1 + model.lease;
    assert_eq!((fence.partition, state.made[0][state.now as usize]), (0, 2));
    assert!(state.now < released_lease_end);
}

// ---- Everything at once. ----

#[test]
fn new_rules_with_every_action_never_repeat_an_id() {
    let outcome = assert_no_repeat(&everything(), &New::FIXED, 100_000);
    assert!(outcome.ids_by_clones > 0 && outcome.ids_by_promoted_copies > 0);
    assert!(outcome.ids_after_lost_commits > 0 && outcome.backfill_ids > 0);
    assert!(outcome.ids_off_the_clock > 0 && outcome.ids_in_later_epochs > 0);
}

// ---- The design doc's text, and deliberate breakages. ----

/// Each fix the model adds to the design doc's text is needed: without it, an ID repeats.
#[test]
fn the_new_rules_as_written_repeat_ids_without_each_fix() {
    assert_repeats(&lost_commits(), &New::AS_WRITTEN);
    for fix in FIXES {
        let model = match fix {
            Fix::RecordFromInstall => lost_commits(),
            Fix::FloorForRenewalsOfLostRows => Model {
                end: START + 3,
                ..lost_commits()
            },
            Fix::NoReservationsAfterLostRows => backfills(),
            Fix::OneBackfillerPerReservation => Model {
                slots: 3,
                starts: 1,
                enabled: kinds(&[Kind::Backfill, Kind::Reserve, Kind::Clone]),
                ..backfills()
            },
        };
        assert_repeats(&model, &New::without(fix));
    }
}

/// The checks can fail: each deliberate breakage of the new rules repeats an ID.
#[test]
fn every_deliberate_breakage_of_the_new_rules_is_caught() {
    let breakages = [
        (Breakage::NoEpochFloor, lost_commits()),
        (Breakage::RenewalMatchesAddress, clones()),
        (Breakage::TakeoverByLaterTimeline, promotions()),
        (
            Breakage::ResumeHashOutlivesItsRow,
            Model {
                starts: 1,
                slots: 2,
                clock_range: (0, 1),
                servers: vec![
                    server(0),
                    Setup {
                        clock: 1,
                        ..server(0)
                    },
                ],
                ..quiet()
            },
        ),
        (Breakage::ReservationsIgnored, backfills()),
        (
            Breakage::NoClockAllowance,
            Model {
                lease: 1,
                clock_range: (0, 3),
                end: START + 3,
                enabled: Kind::Restore as u16,
                servers: vec![
                    Setup {
                        clock: 3,
                        ..server(0)
                    },
                    server(0),
                ],
                ..lost_commits()
            },
        ),
    ];
    for (breakage, model) in breakages {
        assert_repeats(&model, &New::broken(breakage));
    }
}
