//! The one record model every format reads into and writes from.
//!
//! A [`Record`] is a plain 32-byte value (no heap, `Copy`) so readers can fill
//! flat `Vec<Record>` batches and the simulator can walk them without pointer
//! chasing. Optional fields (PC, timing) live in the record behind `flags`
//! bits rather than in `Option`s, which keeps the layout fixed.

use serde::{Deserialize, Serialize};

/// What a memory-access record does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[repr(u8)]
pub enum Kind {
    /// Data read.
    Load = 0,
    /// Data write.
    Store = 1,
    /// Read-modify-write by one instruction (lackey `M`): a load and a store
    /// to the same address and size.
    Modify = 2,
    /// Instruction fetch.
    IFetch = 3,
}

impl Kind {
    /// All kinds, in code order.
    pub const ALL: [Kind; 4] = [Kind::Load, Kind::Store, Kind::Modify, Kind::IFetch];

    /// Decodes the on-disk code, `None` for an unknown code.
    #[inline]
    pub fn from_code(code: u8) -> Option<Kind> {
        match code {
            0 => Some(Kind::Load),
            1 => Some(Kind::Store),
            2 => Some(Kind::Modify),
            3 => Some(Kind::IFetch),
            _ => None,
        }
    }

    /// Short name used in CSV output and reports (`load`, `store`, `modify`, `ifetch`).
    pub fn name(self) -> &'static str {
        match self {
            Kind::Load => "load",
            Kind::Store => "store",
            Kind::Modify => "modify",
            Kind::IFetch => "ifetch",
        }
    }

    /// True for data accesses (everything but instruction fetch).
    #[inline]
    pub fn is_data(self) -> bool {
        self != Kind::IFetch
    }
}

/// Record flag: the `pc` field is meaningful.
pub const FLAG_PC: u8 = 1;
/// Record flag: `time` is the compute gap (ns) before this access on its thread.
pub const FLAG_GAP: u8 = 2;
/// Record flag: `time` is the absolute issue time (ns) of this access (open loop).
pub const FLAG_TIME: u8 = 4;
/// All flag bits a valid record may carry.
pub const FLAG_MASK: u8 = FLAG_PC | FLAG_GAP | FLAG_TIME;

/// When an access is issued, if the trace says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Timing {
    /// No timing: the access follows the previous one on its thread at once.
    None,
    /// Compute time (ns) between the previous access of the thread and this one (closed loop).
    Gap(u64),
    /// Absolute issue time (ns) from trace start (open loop).
    At(u64),
}

/// One memory access.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Record {
    /// Virtual address of the first byte.
    pub addr: u64,
    /// Program counter of the instruction, valid when `flags & FLAG_PC`.
    pub pc: u64,
    /// Gap or absolute time in ns, meaning given by `FLAG_GAP` / `FLAG_TIME`.
    pub time: u64,
    /// Trace thread id.
    pub thread: u32,
    /// Bytes accessed, at least 1.
    pub size: u16,
    /// Access kind.
    pub kind: Kind,
    /// `FLAG_*` bits.
    pub flags: u8,
}

impl Default for Record {
    fn default() -> Self {
        Record::access(0, Kind::Load, 0, 1)
    }
}

impl Record {
    /// A plain access with no PC and no timing.
    #[inline]
    pub fn access(thread: u32, kind: Kind, addr: u64, size: u16) -> Record {
        Record {
            addr,
            pc: 0,
            time: 0,
            thread,
            size,
            kind,
            flags: 0,
        }
    }

    /// Sets the PC.
    #[inline]
    pub fn with_pc(mut self, pc: u64) -> Record {
        self.pc = pc;
        self.flags |= FLAG_PC;
        self
    }

    /// Sets a compute gap (closed-loop timing), replacing any earlier timing.
    #[inline]
    pub fn with_gap(mut self, ns: u64) -> Record {
        self.time = ns;
        self.flags = (self.flags & !FLAG_TIME) | FLAG_GAP;
        self
    }

    /// Sets an absolute issue time (open-loop timing), replacing any earlier timing.
    #[inline]
    pub fn with_time(mut self, ns: u64) -> Record {
        self.time = ns;
        self.flags = (self.flags & !FLAG_GAP) | FLAG_TIME;
        self
    }

    /// The PC, if the trace carries one.
    #[inline]
    pub fn pc(&self) -> Option<u64> {
        (self.flags & FLAG_PC != 0).then_some(self.pc)
    }

    /// The record's timing.
    #[inline]
    pub fn timing(&self) -> Timing {
        if self.flags & FLAG_GAP != 0 {
            Timing::Gap(self.time)
        } else if self.flags & FLAG_TIME != 0 {
            Timing::At(self.time)
        } else {
            Timing::None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_is_32_bytes() {
        assert_eq!(std::mem::size_of::<Record>(), 32);
    }

    #[test]
    fn timing_variants_replace_each_other() {
        let r = Record::access(1, Kind::Load, 64, 8).with_gap(5);
        assert_eq!(r.timing(), Timing::Gap(5));
        let r = r.with_time(7);
        assert_eq!(r.timing(), Timing::At(7));
        assert_eq!(r.pc(), None);
        assert_eq!(r.with_pc(3).pc(), Some(3));
    }

    #[test]
    fn kind_codes_round_trip() {
        for k in Kind::ALL {
            assert_eq!(Kind::from_code(k as u8), Some(k));
        }
        assert_eq!(Kind::from_code(4), None);
    }
}
