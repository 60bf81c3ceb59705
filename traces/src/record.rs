//! The one record model every format reads into and writes from.
//!
//! Two views of one access:
//! - [`Access`], 16 bytes (`addr`, `thread`, `size`, `kind`, `flags`): the
//!   hot core the simulator walks, and byte-for-byte the native format's
//!   on-disk record, so decoding is "validate, then copy";
//! - [`Record`], the full logical record: an access plus its optional PC and
//!   timing (valid when the `FLAG_*` bits say so).
//!
//! A [`Batch`] stores records column-wise: a `Vec<Access>` plus PC and time
//! columns that exist only when the stream carries them. The simulator's hot
//! loops read `&[Access]` (16 B per record, four per cache line) — or, for a
//! consumer that asks ([`Batch::in_place`]), the checked record cores where
//! they lie in a mapped native file, as `&[`[`RawCore`]`]`, read through the
//! same [`Core`] trait, so that nothing is copied.

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
/// All flag bits a valid access record may carry.
pub const FLAG_MASK: u8 = FLAG_PC | FLAG_GAP | FLAG_TIME;
/// Record flag: a task marker, not an access (native format version 2, in
/// files whose header says they hold tasks; see [`crate::task_native`]).
/// No plain reader ever yields one.
pub const FLAG_TASK: u8 = 8;

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

/// The 16-byte core of a record: what the cache and memory model need.
///
/// `#[repr(C)]` with no padding (8 + 4 + 2 + 1 + 1 bytes); on a
/// little-endian machine its bytes are exactly the native format's record.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[repr(C)]
pub struct Access {
    /// Virtual address of the first byte.
    pub addr: u64,
    /// Trace thread id.
    pub thread: u32,
    /// Bytes accessed, at least 1.
    pub size: u16,
    /// Access kind.
    pub kind: Kind,
    /// `FLAG_*` bits: which of the record's optional columns are valid.
    pub flags: u8,
}

impl Access {
    /// A plain access with no PC and no timing.
    #[inline]
    pub fn new(thread: u32, kind: Kind, addr: u64, size: u16) -> Access {
        Access {
            addr,
            thread,
            size,
            kind,
            flags: 0,
        }
    }
}

/// A record's 16 bytes as the native format stores them (little-endian
/// `addr`, `thread`, `size`, then the kind's code and the flags), read in
/// place from a mapped file. Any bytes make a valid value: its kind is the
/// code's low two bits, so a file changed under the mapping after its
/// records were checked gives wrong records, never undefined behaviour.
pub type RawCore = [u8; 16];

/// What a simulator reads of a record core, from an [`Access`] or a
/// [`RawCore`]: hot loops are generic over it.
pub trait Core: Copy {
    /// The core as an [`Access`].
    fn access(&self) -> Access;
}

impl Core for Access {
    #[inline(always)]
    fn access(&self) -> Access {
        *self
    }
}

impl Core for RawCore {
    #[inline(always)]
    fn access(&self) -> Access {
        let b = self;
        Access {
            addr: u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]),
            thread: u32::from_le_bytes([b[8], b[9], b[10], b[11]]),
            size: u16::from_le_bytes([b[12], b[13]]),
            kind: Kind::ALL[(b[14] & 3) as usize],
            flags: b[15],
        }
    }
}

/// Checked record cores lying in a mapped file: bytes `start..start + 16 ×
/// len` of `owner`, which it keeps alive.
#[derive(Clone)]
pub struct InPlace {
    owner: std::sync::Arc<dyn crate::held::Whole>,
    start: usize,
    len: usize,
}

impl InPlace {
    /// `len` cores from byte `start` of `owner`; `None` if they do not lie
    /// inside it.
    pub fn new(
        owner: std::sync::Arc<dyn crate::held::Whole>,
        start: usize,
        len: usize,
    ) -> Option<InPlace> {
        let end = len.checked_mul(16)?.checked_add(start)?;
        (end <= owner.bytes().len()).then_some(InPlace { owner, start, len })
    }

    /// The cores.
    #[inline]
    pub fn cores(&self) -> &[RawCore] {
        let bytes = &self.owner.bytes()[self.start..self.start + 16 * self.len];
        // SAFETY: `bytes` holds exactly `len` × 16 bytes (checked in `new`;
        // the owner's bytes do not change length); `[u8; 16]` has alignment
        // 1 and every bit pattern is valid, and the slice borrows `self`.
        unsafe { std::slice::from_raw_parts(bytes.as_ptr() as *const RawCore, self.len) }
    }
}

impl std::fmt::Debug for InPlace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "InPlace {{ start: {}, len: {} }}", self.start, self.len)
    }
}

impl PartialEq for InPlace {
    fn eq(&self, other: &InPlace) -> bool {
        self.cores() == other.cores()
    }
}

impl Eq for InPlace {}

/// One memory access with its optional PC and timing.
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

    /// The 16-byte core.
    #[inline]
    pub fn core(&self) -> Access {
        Access {
            addr: self.addr,
            thread: self.thread,
            size: self.size,
            kind: self.kind,
            flags: self.flags,
        }
    }

    /// Rebuilds a record from its core and column values.
    #[inline]
    pub fn from_parts(a: Access, pc: u64, time: u64) -> Record {
        Record {
            addr: a.addr,
            pc: if a.flags & FLAG_PC != 0 { pc } else { 0 },
            time: if a.flags & (FLAG_GAP | FLAG_TIME) != 0 {
                time
            } else {
                0
            },
            thread: a.thread,
            size: a.size,
            kind: a.kind,
            flags: a.flags,
        }
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

/// Records per batch a reader appends in one [`RecordSource::fill`](crate::RecordSource::fill) call.
///
/// 4096 records × 16 B = 64 KiB of hot columns: a batch stays in L2 between
/// the decoder and the simulator.
pub const BATCH: usize = 4096;

/// Which optional columns a stream carries (known before the first record).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Fields {
    /// Records may carry a PC.
    pub pc: bool,
    /// Records may carry a gap or an absolute time.
    pub time: bool,
}

/// Records stored column-wise; see the module docs.
///
/// Invariant: `pc` is empty unless the batch was made with a PC column, in
/// which case `pc.len() == acc.len()`; the same for `time`. A batch whose
/// records lie in place ([`Batch::in_place`]) has none in `acc` and no PC
/// or time column.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Batch {
    /// The hot columns (empty when the records lie in place).
    pub acc: Vec<Access>,
    /// PC per record (0 where the record has none), if the column exists.
    pub pc: Vec<u64>,
    /// Gap or time per record (0 where the record has none), if the column exists.
    pub time: Vec<u64>,
    has_pc: bool,
    has_time: bool,
    /// The records, when a reader left them in place.
    placed: Option<InPlace>,
    /// Whether a reader may leave the records in place.
    takes_in_place: bool,
}

impl Batch {
    /// An empty batch with the columns `fields` asks for.
    pub fn new(fields: Fields) -> Batch {
        Batch {
            acc: Vec::with_capacity(BATCH),
            pc: Vec::new(),
            time: Vec::new(),
            has_pc: fields.pc,
            has_time: fields.time,
            placed: None,
            takes_in_place: false,
        }
    }

    /// The records' cores where a reader left them in place, if it did.
    /// Only a batch that allowed it ([`Batch::allow_in_place`]) is given
    /// records in place; a consumer that reads `acc` directly must not.
    #[inline]
    pub fn in_place(&self) -> Option<&[RawCore]> {
        self.placed.as_ref().map(InPlace::cores)
    }

    /// Lets (or stops) readers leave this batch's records in place.
    pub fn allow_in_place(&mut self, yes: bool) {
        self.takes_in_place = yes;
    }

    /// Whether a reader may leave the records in place: the batch allows
    /// it, holds nothing yet, and has no PC or time column.
    pub fn takes_in_place(&self) -> bool {
        self.takes_in_place && !self.has_pc && !self.has_time && self.is_empty()
    }

    /// Holds `cores` (in place) as its records if it takes them
    /// ([`Batch::takes_in_place`]); else appends copies of them.
    pub fn set_in_place(&mut self, cores: InPlace) {
        if self.takes_in_place() {
            self.placed = Some(cores);
        } else {
            for c in cores.cores() {
                self.push(Record::from_parts(c.access(), 0, 0));
            }
        }
    }

    /// Copies records in place into `acc` (such a batch has no PC or time
    /// column), so that more can be added.
    #[cold]
    fn unplace(&mut self) {
        if let Some(p) = self.placed.take() {
            self.acc.extend(p.cores().iter().map(Core::access));
        }
    }

    /// Record `i`'s core.
    #[inline]
    fn core(&self, i: usize) -> Access {
        match &self.placed {
            Some(p) => p.cores()[i].access(),
            None => self.acc[i],
        }
    }

    /// Which optional columns this batch keeps.
    pub fn fields(&self) -> Fields {
        Fields {
            pc: self.has_pc,
            time: self.has_time,
        }
    }

    /// Empties the batch, keeping its columns and capacity.
    #[inline]
    pub fn clear(&mut self) {
        self.placed = None;
        self.acc.clear();
        self.pc.clear();
        self.time.clear();
    }

    /// Records held.
    #[inline]
    pub fn len(&self) -> usize {
        self.acc.len() + self.placed.as_ref().map_or(0, |p| p.len)
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Appends a record. A PC or timing the batch has no column for is
    /// dropped from the record (its flag cleared).
    #[inline]
    pub fn push(&mut self, r: Record) {
        if self.placed.is_some() {
            self.unplace();
        }
        let mut a = r.core();
        if self.has_pc {
            self.pc.push(r.pc);
        } else {
            a.flags &= !FLAG_PC;
        }
        if self.has_time {
            self.time.push(r.time);
        } else {
            a.flags &= !(FLAG_GAP | FLAG_TIME);
        }
        self.acc.push(a);
    }

    /// Appends every record of `other` (columns `self` lacks are dropped,
    /// as in [`Batch::push`]).
    pub fn append(&mut self, other: &Batch) {
        if self.placed.is_some() {
            self.unplace();
        }
        if self.fields() == other.fields() && other.placed.is_none() {
            self.acc.extend_from_slice(&other.acc);
            self.pc.extend_from_slice(&other.pc);
            self.time.extend_from_slice(&other.time);
        } else {
            for r in other.iter() {
                self.push(r);
            }
        }
    }

    /// Record `i` in full.
    #[inline]
    pub fn get(&self, i: usize) -> Record {
        let pc = if self.has_pc { self.pc[i] } else { 0 };
        let time = if self.has_time { self.time[i] } else { 0 };
        Record::from_parts(self.core(i), pc, time)
    }

    /// All records in full.
    pub fn iter(&self) -> impl Iterator<Item = Record> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }

    /// The PC of record `i`, if it has one.
    #[inline]
    pub fn pc_of(&self, i: usize) -> Option<u64> {
        (self.core(i).flags & FLAG_PC != 0).then(|| self.pc[i])
    }

    /// The timing of record `i`.
    #[inline]
    pub fn timing_of(&self, i: usize) -> Timing {
        let f = self.core(i).flags;
        if f & FLAG_GAP != 0 {
            Timing::Gap(self.time[i])
        } else if f & FLAG_TIME != 0 {
            Timing::At(self.time[i])
        } else {
            Timing::None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn access_is_16_bytes_without_padding() {
        assert_eq!(std::mem::size_of::<Access>(), 16);
        assert_eq!(std::mem::align_of::<Access>(), 8);
    }

    #[test]
    fn batch_columns_round_trip_and_drop_missing_columns() {
        let r = Record::access(1, Kind::Store, 64, 8)
            .with_pc(0x400)
            .with_gap(9);
        let mut full = Batch::new(Fields {
            pc: true,
            time: true,
        });
        full.push(r);
        full.push(Record::access(2, Kind::Load, 128, 4));
        assert_eq!(full.get(0), r);
        assert_eq!(full.pc_of(1), None);
        assert_eq!(full.timing_of(0), Timing::Gap(9));
        let mut bare = Batch::new(Fields::default());
        bare.push(r);
        assert_eq!(bare.get(0), Record::access(1, Kind::Store, 64, 8));
        assert!(bare.pc.is_empty() && bare.time.is_empty());
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
