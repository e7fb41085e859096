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
//! run of more than one sequence it arms a [`Deadline`] at the end of the run's unit, but at most
//! [`FRESH_RUN_NS`] ahead, and serves the run while the clock's cheaper timer says the deadline
//! is ahead. Past it, or where the clock has no such timer, it reads the clock and claims again.
//!
//! Why a run goes stale after 200 µs: IDs reach an index in about the order their callers insert
//! them, and a B-tree stays compact only while inserts land at its right edge (the rightmost
//! leaf page splits 90:10; any other splits 50:50 and stays half empty once time has moved on).
//! A caller descheduled in the middle of a run (for a time slice, milliseconds) would come back
//! to sequences behind everything other sessions inserted meanwhile. So a run not used up within
//! the window is given up, and the next one is as long as the part the caller did use: a busy
//! caller (an ID every few microseconds) never notices, and a slow or interrupted one claims at
//! the unit's current end. Measured on 2 cores (benches/sql/many_writers.sh): 16 concurrent bulk
//! writers made a sno index 11% larger than one writer's before, 1% smaller after. A clock stepped back or forward while
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

/// How long a run stays good after it is claimed (see the module documentation): far longer than
/// a busy caller takes for a run of [`MAX_RUN`] (a bulk `INSERT` spends about 2 µs per row), far
/// shorter than a time slice of a descheduled process.
pub const FRESH_RUN_NS: i64 = 200_000;

/// One caller's run of sequences. Keep one per thread or process, never shared, and always use
/// it with the same clock (its deadline is only meaningful to the clock that armed it); it may
/// be dropped at any time (its unused sequences are simply not issued).
///
/// ```
/// use sno::{Config, Generator, Lease, RealtimeClock};
///
/// let generator = Generator::new(Config::new(1));
/// let mut lease = Lease::new();
/// let ids = (0..100)
///     .map(|_| lease.generate(&generator, 0, &RealtimeClock))
///     .collect::<Result<Vec<_>, _>>()?;
/// // Runs of sequences, claimed from the generator in far fewer than 100 steps.
/// assert!(ids.windows(2).all(|pair| pair[0] != pair[1]));
/// assert!(generator.stats().claimed >= 100);
/// # Ok::<(), sno::GenerateError>(())
/// ```
#[derive(Copy, Clone, Debug)]
pub struct Lease {
    claim: Claim,
    /// The address of the generator the run came from: a run is only unique within it, so a
    /// lease handed another generator claims afresh there.
    source: usize,
    /// The regression count when the run was claimed: a regression handled since then starts
    /// another timeline, and the run must not outlive its own.
    clock_regressions: u64,
    /// How many sequences the last claim asked for.
    run: u32,
    /// Until when the run may be served without reading the clock: the end of its unit or
    /// [`FRESH_RUN_NS`] after the claim, by the clock's timer.
    run_ends: Deadline,
}

impl Lease {
    /// A lease that holds nothing yet: its first call claims from the generator. See [`Lease`]
    /// for an example.
    pub const fn new() -> Lease {
        Lease {
            claim: Claim::none(),
            source: 0,
            clock_regressions: 0,
            run: 0,
            run_ends: Deadline::PASSED,
        }
    }

    /// A new ID from `generator`, like [`Generator::generate`] (same waits, same errors), taken
    /// from this lease's run while it is still good for the clock's current unit.
    ///
    /// ```
    /// use sno::{Config, Generator, Lease, RealtimeClock};
    ///
    /// let generator = Generator::new(Config::new(4));
    /// let mut lease = Lease::default();
    /// let id = lease.generate(&generator, 9, &RealtimeClock)?;
    /// assert_eq!((id.meta(), id.partition()), (9, 4));
    /// # Ok::<(), sno::GenerateError>(())
    /// ```
    pub fn generate(
        &mut self,
        generator: &Generator,
        meta: u8,
        clock: &impl Clock,
    ) -> Result<Sno, GenerateError> {
        if !(self.holds_run_of(generator) && clock.is_before(self.run_ends)) {
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
            && generator.unchanged_since(self.claim.epoch, self.clock_regressions)
    }

    /// The run is used up, its deadline passed or the generator changed: reads the clock and
    /// claims the next run. Where the clock has no timer (no deadline was armed), the reading
    /// itself says whether the unit lasts, and the run goes on while it does.
    fn check_clock(
        &mut self,
        generator: &Generator,
        clock: &impl Clock,
    ) -> Result<(), GenerateError> {
        let now = read_units(clock)?;
        if now == self.claim.unit && self.holds_run_of(generator) && !self.run_ends.is_armed() {
            return Ok(());
        }
        self.renew(generator, now, clock)
    }

    /// Claims the next run. In the unit the clock is still in: twice the last one if the caller
    /// used that one up before its deadline, else as many as it used (the rest is given up, as
    /// it went stale). In a new unit, or from another generator: a single sequence.
    #[cold]
    fn renew(
        &mut self,
        generator: &Generator,
        now: Units,
        clock: &impl Clock,
    ) -> Result<(), GenerateError> {
        let longest = (generator.config().pool() / 16).clamp(1, MAX_RUN);
        let same_source = self.source == address(generator);
        let wanted = if !same_source || now != self.claim.unit {
            1
        } else if self.claim.len() == 0 {
            self.run * 2
        } else {
            self.run - self.claim.len()
        }
        .clamp(1, longest);
        // Read before claiming: if a regression is handled in between, the run counts as
        // belonging to the older timeline and is dropped at its next use.
        let clock_regressions = generator.clock_regressions();
        self.claim = generator.claim(wanted, clock)?;
        self.source = address(generator);
        self.clock_regressions = clock_regressions;
        self.run = wanted;
        self.arm_deadline(clock);
        Ok(())
    }

    /// Arms the deadline at the end of the run's unit or [`FRESH_RUN_NS`] ahead, whichever
    /// comes first, unless this call uses up the run: then it needs no deadline, nor the clock
    /// reading arming one takes.
    fn arm_deadline(&mut self, clock: &impl Clock) {
        self.run_ends = match Units::new(self.claim.unit.get() + 1) {
            Some(next) if self.claim.len() > 1 => {
                clock.deadline_within(next.to_unix_millis(), FRESH_RUN_NS)
            }
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
