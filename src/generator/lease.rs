//! A caller's own run of sequences, so that most IDs need no atomic read-modify-write.
//!
//! Claiming one sequence per ID makes every ID a compare-and-swap on the shared word, and when
//! several processes generate at once, the word's cache line moves between their cores on every
//! ID. A lease claims a short run of the current unit's sequences in one swap and hands them out
//! itself, for as long as the clock stays in that unit and the settings and timeline stay the
//! same. Then it claims again, through the generator, which applies every rule of SPEC §3.
//!
//! What it costs: sequences of a run still unused when the unit ends are never issued. Runs start
//! at one sequence in every unit and double while the caller keeps using them up, up to
//! [`MAX_RUN`] (and a sixteenth of the pool), so a caller that makes one ID per unit gives up
//! nothing, and a busy one at most `MAX_RUN - 1` sequences per unit.
//!
//! While a run lasts, the lease does not read the clock for every ID either: after claiming a
//! run of more than one sequence it arms a [`Deadline`] at the end of the run's unit, and serves
//! the run while the clock's cheaper timer says the deadline is ahead. Past it, or where the
//! clock has no such timer, it reads the clock as before. A clock stepped back or forward while
//! a deadline is ahead goes unnoticed by this lease until the deadline (at most one unit), as if
//! its calls had come just before the step; other callers' handling of a step back still ends
//! the run at once, through the regression count.
//!
//! IDs from one lease rise like those from [`Generator::generate`]; between callers, IDs of the
//! same 4 ms unit no longer follow the order of the calls (the format promises order only
//! across units).

use super::claim::Claim;
use super::{read_units, GenerateError, Generator};
use crate::clock::{Clock, Deadline};
use crate::id::Sno;
use crate::time::Units;

/// The longest run a lease claims at once.
pub const MAX_RUN: u32 = 32;

/// One caller's run of sequences. Keep one per thread or process, never shared, and always use
/// it with the same clock (its deadline is only meaningful to the clock that armed it); it may
/// be dropped at any time (its unused sequences are simply not issued).
#[derive(Copy, Clone, Debug)]
pub struct Lease {
    claim: Claim,
    /// The address of the generator the run came from: a run is only unique within it, so a
    /// lease handed another generator claims afresh there.
    source: usize,
    /// The regression count when the run was claimed: a regression handled since then starts
    /// another timeline, and the run must not outlive its own.
    drifts: u64,
    /// How many sequences the last claim asked for.
    run: u32,
    /// The end of the run's unit, by the clock's timer.
    unit_ends: Deadline,
}

impl Lease {
    /// A lease that holds nothing yet.
    pub const fn new() -> Lease {
        Lease {
            claim: Claim::none(),
            source: 0,
            drifts: 0,
            run: 0,
            unit_ends: Deadline::PASSED,
        }
    }

    /// A new ID from `generator`, like [`Generator::generate`] (same waits, same errors), taken
    /// from this lease's run while it is still good for the clock's current unit.
    pub fn generate(
        &mut self,
        generator: &Generator,
        meta: u8,
        clock: &impl Clock,
    ) -> Result<Sno, GenerateError> {
        if !(self.holds_run_of(generator) && clock.is_before(self.unit_ends)) {
            self.check_clock(generator, clock)?;
        }
        Ok(self.claim.take(meta))
    }

    /// Whether a sequence is left that `generator`, with its current settings and timeline,
    /// still stands behind. Says nothing about the clock.
    #[inline(always)]
    fn holds_run_of(&self, generator: &Generator) -> bool {
        self.claim.len() > 0
            && self.source == address(generator)
            && generator.unchanged_since(self.claim.epoch, self.drifts)
    }

    /// Reads the clock: keeps serving the run if the clock is still in its unit (arming the
    /// deadline again, as the timer's margin ended it early), otherwise claims the next one.
    fn check_clock(
        &mut self,
        generator: &Generator,
        clock: &impl Clock,
    ) -> Result<(), GenerateError> {
        let now = read_units(clock)?;
        if now != self.claim.unit || !self.holds_run_of(generator) {
            self.renew(generator, now, clock)?;
        } else {
            self.arm_deadline(clock);
        }
        Ok(())
    }

    /// Claims the next run: twice the last one if the caller used that one up within the unit
    /// the clock is still in, otherwise a single sequence.
    #[cold]
    fn renew(
        &mut self,
        generator: &Generator,
        now: Units,
        clock: &impl Clock,
    ) -> Result<(), GenerateError> {
        let longest = (generator.config().pool() / 16).clamp(1, MAX_RUN);
        let same_source = self.source == address(generator);
        let wanted = if same_source && now == self.claim.unit && self.claim.len() == 0 {
            (self.run * 2).clamp(1, longest)
        } else {
            1
        };
        // Read before claiming: if a regression is handled in between, the run counts as
        // belonging to the older timeline and is dropped at its next use.
        let drifts = generator.clock_regressions();
        self.claim = generator.claim(wanted, clock)?;
        self.source = address(generator);
        self.drifts = drifts;
        self.run = wanted;
        self.arm_deadline(clock);
        Ok(())
    }

    /// Arms the deadline at the end of the run's unit, unless this call uses up the run: then
    /// it needs no deadline, nor the clock reading arming one takes.
    fn arm_deadline(&mut self, clock: &impl Clock) {
        self.unit_ends = match Units::new(self.claim.unit.get() + 1) {
            Some(next) if self.claim.len() > 1 => clock.deadline(next.to_unix_millis()),
            _ => Deadline::PASSED,
        };
    }
}

fn address(generator: &Generator) -> usize {
    std::ptr::from_ref(generator) as usize
}

impl Default for Lease {
    fn default() -> Lease {
        Lease::new()
    }
}
