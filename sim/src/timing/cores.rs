//! A core's private state — its data levels and L1I, and what the exact
//! fast paths know of its last lines — and where an access was served.

use crate::cache::Cache;

/// Where an access was served.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Served {
    Private(u8),
    Llc,
    Remote, // cache-to-cache transfer
    LocalMem,
    RemoteMem,
}

/// What one access issued from outside the event loop cost.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Issued {
    pub latency_ps: u64,
    /// An L1 hit that waited for no prefetch (it never takes a miss slot).
    pub l1_hit: bool,
    /// Local or remote memory served it.
    pub from_memory: bool,
}

/// No line (line numbers are addresses shifted right, never all ones).
pub(super) const NO_LINE: u64 = u64::MAX;

#[derive(Clone, serde::Serialize, serde::Deserialize)]
pub(super) struct CoreState {
    pub node: u32,
    /// Private data levels, nearest first.
    pub levels: Vec<Cache>,
    pub level_ps: Vec<u64>,
    pub l1i: Option<Cache>,
    pub l1i_ps: u64,
    /// Something was ever filled into the L1I (a data-only trace leaves it
    /// empty, and invalidations need not search it).
    pub l1i_filled: bool,
    /// The line of this core's last data access when it is known to sit in
    /// the L1D as its set's most recent line ([`NO_LINE`] otherwise). A load
    /// to it is an L1D hit that changes no state: see [`Engine::access`].
    pub last_line: u64,
    /// `last_line` is dirty in the L1D (the core's last access to it was a
    /// write, and no other core has read it since): a store to it is an
    /// L1D hit that needs no upgrade.
    pub last_dirty: bool,
    /// The L1D's policy leaves a repeated hit on the most recent line
    /// unchanged (all but SRRIP), so the shortcut may be taken.
    pub repeat_hit_free: bool,
    /// The same for instruction fetches: the line of this core's last fetch
    /// while it is known to be its L1I set's most recent line (only this
    /// core's fetches fill its L1I; every invalidation of an L1I line
    /// clears it), or [`NO_LINE`].
    pub last_iline: u64,
    /// The L1I exists and its policy leaves a repeated hit unchanged.
    pub l1i_repeat_hit_free: bool,
    /// The data TLBs (`[core.tlb]`).
    pub tlb: Option<crate::tlb::Tlb>,
}
