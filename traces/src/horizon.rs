//! The time horizon: the latest nanosecond a trace, task trace or request
//! workload may name.
//!
//! Why: the engines keep time in picoseconds in `u64`, which holds about
//! 1.8 × 10¹⁹ ps (≈ 1.8 × 10¹⁶ ns, 213 days). A nanosecond value past that
//! used to wrap (release) or panic (debug) and give a run of "0.08 µs
//! simulated" with exit 0. Every reader checks each time, gap and arrival
//! against [`HORIZON_NS`] where it reads it, and names the file, line or
//! offset, record, field, value and the horizon when it refuses one.
//!
//! The horizon is 2⁵³ ns (about 104 days): every time below it is exact as
//! an `f64` (JSON, CSV, plots) and, in picoseconds, leaves room in a `u64`
//! to add a second horizon-bounded value (a gap to an issue time, a latency
//! to a completion) without wrapping. The engines check every clock value
//! they compute against the same horizon in picoseconds and stop with an
//! error past it (a long run of gaps, a queue that never drains), so no
//! input gives a wrapped time. A new reader of times (recorded request
//! logs, issue 28) checks them here too.

use crate::record::{Access, FLAG_GAP, FLAG_TASK, FLAG_TIME};

/// The latest time (ns) any input may name: 2⁵³ ns ≈ 104.2 days.
pub const HORIZON_NS: u64 = 1 << 53;

/// [`HORIZON_NS`] in picoseconds, the engines' unit (fits `u64` twice over).
pub const HORIZON_PS: u64 = HORIZON_NS * 1000;

/// [`HORIZON_NS`] in seconds, for request workloads written in seconds.
pub const HORIZON_S: f64 = HORIZON_NS as f64 / 1e9;

/// The horizon as words for an error message.
pub fn describe() -> String {
    format!("the time horizon of {HORIZON_NS} ns (2^53 ns, about 104 days)")
}

/// A time past the horizon, read from `field` (this module imports no
/// error type, so `crate::error` can name the horizon in its messages).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field} {ns} ns is past {}", describe())]
pub struct PastHorizon {
    pub field: String,
    pub ns: u64,
}

/// `ns`, read from field `field`, if it is within the horizon.
#[inline]
pub fn check(field: &str, ns: u64) -> Result<u64, PastHorizon> {
    if ns <= HORIZON_NS {
        Ok(ns)
    } else {
        Err(past(field, ns))
    }
}

/// The problem of a value past the horizon.
#[cold]
pub fn past(field: &str, ns: u64) -> PastHorizon {
    PastHorizon {
        field: field.to_string(),
        ns,
    }
}

/// The first of `acc`'s records whose time column value (`times`) is past
/// the horizon, and the problem naming its field (`arrival_ns` for a task
/// marker, `gap_ns`, `time_ns`). One branch-free pass (an OR of every
/// value's bits from 2^53 up) finds whether any value could be; the exact
/// search runs only then. A value of a record with no timing flag is not
/// a time and is not checked.
#[inline]
pub(crate) fn first_past(acc: &[Access], times: &[u64]) -> Option<(usize, PastHorizon)> {
    if times.iter().fold(0, |x, &t| x | (t >> 53)) == 0 {
        return None;
    }
    let i = (0..times.len())
        .find(|&i| acc[i].flags & (FLAG_GAP | FLAG_TIME) != 0 && times[i] > HORIZON_NS)?;
    let field = match acc[i].flags {
        f if f & FLAG_TASK != 0 => "arrival_ns",
        f if f & FLAG_GAP != 0 => "gap_ns",
        _ => "time_ns",
    };
    Some((i, past(field, times[i])))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_horizon_leaves_room_for_one_more_horizon_in_picoseconds() {
        assert!(HORIZON_PS.checked_add(HORIZON_PS).is_some());
        assert_eq!(HORIZON_NS as f64 as u64, HORIZON_NS, "exact in f64");
        assert!(check("time_ns", HORIZON_NS).is_ok());
        let e = check("time_ns", HORIZON_NS + 1).unwrap_err().to_string();
        assert_eq!(
            e,
            "time_ns 9007199254740993 ns is past the time horizon of 9007199254740992 ns (2^53 ns, about 104 days)"
        );
    }
}
