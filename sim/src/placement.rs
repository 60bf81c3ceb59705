//! The page-placement policy interface.
//!
//! A policy decides where a page lives when it is first touched, and may ask
//! to migrate a page as accesses are observed. Implementations live in the
//! `policies` crate, one file each, registered by name. ⚑ A policy sees only
//! what a real system could observe at that moment: the page, the node of
//! the accessing core, the page's current home and the time — never future
//! accesses.

use crate::machine::Machine;

/// What a policy sees of a memory access.
#[derive(Clone, Copy, Debug)]
pub struct PageView {
    /// Page number (address / page size).
    pub page: u64,
    /// Node of the core that accessed it.
    pub from: u32,
    /// Node whose memory holds the page now.
    pub home: u32,
    /// Simulated time (ps).
    pub now_ps: u64,
}

/// A page-placement policy.
pub trait Placement: Send {
    /// Name as it appears in results (`first-touch`, `bind:1`, ...).
    fn name(&self) -> String;

    /// Home node of `page`, first touched by a core on node `from`.
    fn place(&mut self, page: u64, from: u32, machine: &Machine) -> u32;

    /// Called for every access served by memory. Returning `Some(node)`
    /// migrates the page there now (the copy is charged to channels and links).
    fn on_memory_access(&mut self, _seen: PageView, _machine: &Machine) -> Option<u32> {
        None
    }
}
