//! The state of the model: real time, the registry's database (live and saved), the servers
//! with their data directories and processes, and every ID made so far.

/// Partitions, server slots and time units the fixed-size arrays have room for; a model uses
/// as many as its bounds say.
pub const PARTITIONS: usize = 4;
pub const SLOTS: usize = 3;
pub const UNITS: usize = 16;

/// The maker of every ID of a partition set by hand on a server not yet on the registry: it
/// makes IDs at every unit of its clock as long as it runs, so any other maker repeats one.
pub const BY_HAND: u8 = 255;

/// Real time at the start. Server clocks are real time plus an offset of -2..=2, so every
/// wall clock reads at least 0; IDs are made at units of 1 and later.
pub const START: u8 = 2;

/// The holder's safety margin. 0 is the worst case: every fence is the widest any margin
/// gives, so what holds here holds for every margin.
pub const MARGIN: u8 = 0;

/// OLD's server identity, as the registry sees it.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Identity {
    pub system: u8,
    pub timeline: u8,
    /// The address and port the registry sees the server's connections come from.
    pub endpoint: u8,
}

/// Whom a lease row belongs to: OLD compares identities, NEW postmaster instances. A row keeps
/// only what its rules compare, so that states differing in what no rule reads are one state.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Owner {
    Identity(Identity),
    Instance(u8),
}

/// A lease row of the registry. Times are ticks and units (the registry's clock is real time);
/// 0 stands for NULL in `started_after` and `resume_hash`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Row {
    pub owner: Owner,
    pub expires_at: u8,
    pub used_through: u8,
    pub started_after: u8,
    pub epoch: u8,
    /// The hash of a resume secret; a secret is the number of the process that wrote it, so
    /// its "hash" is that number too.
    pub resume_hash: u8,
    /// What NEW records "for people" (address, system, timeline): kept only where a
    /// deliberate breakage compares it.
    pub seen: Option<Identity>,
}

/// What the registry keeps in its database: what a restore or a lagging standby brings back.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct Database {
    pub rows: [Option<Row>; PARTITIONS],
    /// NEW's epoch record: the registry incarnation (system identifier, timeline, postmaster
    /// start, table oid) it was written under.
    pub epoch_record: Option<u8>,
    pub epoch: u8,
    /// 0 while no rows were ever lost.
    pub epoch_floor: u8,
    /// G, the longest lease granted.
    pub longest_lease: u8,
    /// A bit per partition in `sno_partition_reservations`.
    pub reserved: u8,
    /// Per reserved partition, the instance the registry told it may backfill (0: none yet).
    pub backfillers: [u8; PARTITIONS],
}

impl Database {
    pub fn is_reserved(&self, partition: u8) -> bool {
        self.reserved & (1 << partition) != 0
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Registry {
    pub partitions: u8,
    /// Bumped by every restart, restore and failover: each is a postmaster start of the
    /// registry, which its epoch record tells from the one before.
    pub incarnation: u8,
    pub db: Database,
    /// A backup, or what an asynchronous standby has received: an earlier `db`.
    pub saved: Option<Database>,
}

/// How a server came to be.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Origin {
    Original,
    /// A copy of a running server's data directory behind the same address and port.
    Clone,
    /// A copy promoted to the next timeline (a failover, a PITR copy).
    Promoted,
}

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Role {
    /// A free slot, for a copy to come.
    Absent,
    /// A server whose lease holder talks to the registry.
    Managed,
}

/// What a data directory records: everything its processes made, and what lease they held.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct DataDir {
    /// The generator's high-water per partition: a process starting from here makes IDs of
    /// partition p only at later units.
    pub high_water: [u8; PARTITIONS],
    /// The partition the holder asks for: the last one it held, or the configured one.
    pub wanted: Option<u8>,
    /// The resume secret file (0: none).
    pub resume_secret: u8,
    pub system: u8,
    pub timeline: u8,
}

/// The fence in a server's shared memory, set from the holder's last claim or renewal.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Fence {
    pub partition: u8,
    pub cap: u8,
    /// Monotonic time; the monotonic clock runs with real time whatever the wall clock does.
    pub deadline: u8,
    pub floor: u8,
    /// The greatest `may_use_until` the holder sent for this partition.
    pub sent: u8,
}

/// A postmaster run, with its lease holder.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Process {
    pub instance: u8,
    pub fence: Option<Fence>,
    /// Until when (monotonic) the registry's word that the backfill partition is reserved and
    /// not leased holds.
    pub backfill_until: u8,
}

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Server {
    pub role: Role,
    pub origin: Origin,
    pub dir: DataDir,
    pub endpoint: u8,
    pub clock_offset: i8,
    /// `sno.backfill_partition`, set by a person.
    pub backfill: Option<u8>,
    pub process: Option<Process>,
}

impl Server {
    pub const ABSENT: Server = Server {
        role: Role::Absent,
        origin: Origin::Original,
        dir: DataDir {
            high_water: [0; PARTITIONS],
            wanted: None,
            resume_secret: 0,
            system: 0,
            timeline: 0,
        },
        endpoint: 0,
        clock_offset: 0,
        backfill: None,
        process: None,
    };

    pub fn wall(&self, now: u8) -> u8 {
        (now as i8 + self.clock_offset).max(0) as u8
    }

    pub fn identity(&self) -> Identity {
        Identity {
            system: self.dir.system,
            timeline: self.dir.timeline,
            endpoint: self.endpoint,
        }
    }
}

/// Two processes made the same ID.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Repeat {
    pub partition: u8,
    pub unit: u8,
    pub first: u8,
    pub second: u8,
}

/// What a run may still spend. A state with more of each left can do all that one with less
/// can, so the search keeps only states that no state seen with the same rest dominates.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct Budget {
    /// Adversarial events: crashes, clock steps, copies, lost replies, address changes,
    /// registry restarts, restores and failovers.
    pub adversity: u8,
    pub starts: u8,
    /// Registry backups (or standby positions).
    pub saves: u8,
}

impl Budget {
    pub fn covers(&self, other: &Budget) -> bool {
        self.adversity >= other.adversity
            && self.starts >= other.starts
            && self.saves >= other.saves
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct State {
    pub now: u8,
    pub left: Budget,
    pub next_instance: u8,
    pub next_endpoint: u8,
    pub registry: Registry,
    pub servers: [Server; SLOTS],
    /// Which process made IDs of (partition, unit): its instance, 0 for none. A process never
    /// makes an ID at or below its data directory's high-water, so a second maker is a repeat.
    pub made: [[u8; UNITS]; PARTITIONS],
    /// The partition set by hand (`sno.partition`) on a server not yet on the registry.
    pub hand_set: Option<u8>,
    pub repeat: Option<Repeat>,
}

impl State {
    /// Records that `instance` made IDs of `partition` at `unit`.
    pub fn record(&mut self, partition: u8, unit: u8, instance: u8) {
        assert!(
            unit >= 1 && (unit as usize) < UNITS,
            "unit {unit} out of range"
        );
        let maker = &mut self.made[partition as usize][unit as usize];
        if self.hand_set == Some(partition) {
            *maker = BY_HAND;
        }
        if *maker == 0 {
            *maker = instance;
        } else if *maker != instance && self.repeat.is_none() {
            self.repeat = Some(Repeat {
                partition,
                unit,
                first: *maker,
                second: instance,
            });
        }
    }
}
