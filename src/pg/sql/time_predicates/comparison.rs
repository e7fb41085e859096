//! The comparisons of a time with a time, as timestamptz's operators and as the bounds of `id`
//! they become.

use super::bounds::Bound;
use pgrx::pg_sys::Oid;

/// A comparison of `sno_time(id)` with a time, `sno_time(id)` on the left.
#[derive(Clone, Copy, PartialEq)]
pub(super) enum Comparison {
    Less,
    LessEqual,
    Equal,
    GreaterEqual,
    Greater,
}

/// timestamptz's comparison operators: pinned OIDs of pg_operator.dat, the same on every major
/// and kept by pg_upgrade.
const TIMESTAMPTZ_OPERATORS: [(u32, Comparison); 5] = [
    (1320, Comparison::Equal),
    (1322, Comparison::Less),
    (1323, Comparison::LessEqual),
    (1324, Comparison::Greater),
    (1325, Comparison::GreaterEqual),
];

impl Comparison {
    pub(super) fn of_timestamptz_operator(opno: Oid) -> Option<Comparison> {
        Self::of_operator(opno, TIMESTAMPTZ_OPERATORS)
    }

    /// The comparison of one of a type's five operators (its `=`, `<`, `<=`, `>`, `>=`).
    pub(super) fn of_operator(opno: Oid, operators: [(u32, Comparison); 5]) -> Option<Comparison> {
        let opno = opno.to_u32();
        operators
            .iter()
            .find(|(oid, _)| *oid == opno)
            .map(|(_, comparison)| *comparison)
    }

    /// timestamptz's operator of this comparison.
    pub(super) fn timestamptz_operator(self) -> Oid {
        let (oid, _) = TIMESTAMPTZ_OPERATORS
            .iter()
            .find(|(_, c)| *c == self)
            .expect("all five");
        Oid::from(*oid)
    }

    /// `t < sno_time(id)` is `sno_time(id) > t`.
    pub(super) fn commuted(self) -> Comparison {
        match self {
            Comparison::Less => Comparison::Greater,
            Comparison::LessEqual => Comparison::GreaterEqual,
            Comparison::Equal => Comparison::Equal,
            Comparison::GreaterEqual => Comparison::LessEqual,
            Comparison::Greater => Comparison::Less,
        }
    }

    /// The bounds whose ranges of `id` together are the comparison's rows.
    pub(super) fn bounds(self) -> &'static [Bound] {
        match self {
            Comparison::GreaterEqual => &[Bound::MinAtOrAfter],
            Comparison::Greater => &[Bound::MinAfter],
            Comparison::LessEqual => &[Bound::MaxAtOrBefore],
            Comparison::Less => &[Bound::MaxBefore],
            Comparison::Equal => &[Bound::MinAtOrAfter, Bound::MaxAtOrBefore],
        }
    }
}
