//! A core's data TLBs (`[core.tlb]`): what a load pays to translate its
//! address before any cache sees it.
//!
//! Why: a dependent walk whose data sits in L1 or L2 still pays for
//! translation once its pages outnumber the first-level TLB's entries,
//! and on a virtual machine whose hypervisor backs the guest's huge pages
//! with 4 KiB pages it pays that in huge pages too (`docs/live.md`,
//! "Address translation in this VM"). Each level is a set-associative
//! LRU [`Cache`] whose blocks are pages. A lookup walks the levels
//! nearest first; every level that misses takes the page, so after the
//! lookup the page is the most recent entry of each. The cost is the
//! nearest holding level's latency (the first level's is 0: its hit is
//! part of the L1D's latency), or the walk's when none holds it. The last
//! page looked up is remembered: looking it up again changes no state (it
//! is every level's most recent entry) and costs nothing, which is what
//! keeps the timing engine's same-line shortcuts exact (a line never
//! spans two pages: the machine refuses a page smaller than a line).
//!
//! In the engine the translation delays the access: a prefetched line
//! still in flight is waited for from when the translation ends, while the
//! queues are charged at the issue time, as for every level's latency; a
//! load that waited for its translation holds a miss slot. A prefetch
//! into another page than its trigger's arrives later by the cost of its
//! page where a lookup would find it ([`Tlb::peek`]), charged to the queues
//! at its issue time like a demand, and changes no level: without that, a
//! prefetch across a page hid the demand's walk behind its own flight.

use serde::{Deserialize, Serialize};

use crate::cache::{Cache, Lookup, Replacement};
use crate::geometry::{Geometry, GeometryError};
use crate::spec::{TlbLevelSpec, TlbSpec};

/// A level's geometry: `entries` pages, `assoc` ways.
pub fn geometry(l: &TlbLevelSpec, page_size: u64) -> Result<Geometry, GeometryError> {
    Geometry::new(l.entries as u64 * page_size, l.assoc, page_size)
}

/// No page (page numbers are addresses shifted right, never all ones).
const NO_PAGE: u64 = u64::MAX;

/// One core's TLB state.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Tlb {
    levels: Vec<Cache>,
    page_bits: u32,
    last_page: u64,
}

/// A lookup's outcome: the nearest level holding the page (the level
/// count for a walk).
pub type Found = usize;

impl Tlb {
    /// An empty TLB for a checked machine's `[core.tlb]`.
    pub fn new(spec: &TlbSpec) -> Tlb {
        let levels = spec
            .levels
            .iter()
            .map(|l| {
                let g = geometry(l, spec.page_size).expect("checked machine");
                Cache::new(g, Replacement::Lru, 0)
            })
            .collect();
        Tlb {
            levels,
            page_bits: spec.page_size.trailing_zeros(),
            last_page: NO_PAGE,
        }
    }

    /// Translates `addr`: which level held its page (`levels` for none).
    #[inline]
    pub fn lookup(&mut self, addr: u64) -> Found {
        let page = addr >> self.page_bits;
        if page == self.last_page {
            return 0;
        }
        self.last_page = page;
        for (i, l) in self.levels.iter_mut().enumerate() {
            if let Lookup::Hit = l.access(page, false) {
                return i;
            }
        }
        self.levels.len()
    }

    /// Where `addr`'s page would be found, changing no state: a
    /// prefetch's translation (`timing::prefetch`).
    pub fn peek(&self, addr: u64) -> Found {
        let page = addr >> self.page_bits;
        if page == self.last_page {
            return 0;
        }
        self.levels
            .iter()
            .position(|l| l.contains(page))
            .unwrap_or(self.levels.len())
    }

    /// Whether `a` and `b` lie in one page (one translation).
    pub fn same_page(&self, a: u64, b: u64) -> bool {
        a >> self.page_bits == b >> self.page_bits
    }

    /// The same shape (levels and their geometries) as `other`: a restored
    /// state fits this machine.
    pub fn fits(&self, other: &Tlb) -> bool {
        self.page_bits == other.page_bits
            && self.levels.len() == other.levels.len()
            && self
                .levels
                .iter()
                .zip(&other.levels)
                .all(|(a, b)| a.fits(b))
    }
}

/// Each outcome's added latency (ns): index i for level i, the last for a
/// walk.
pub fn costs_ns(spec: &TlbSpec) -> Vec<f64> {
    let mut c: Vec<f64> = spec.levels.iter().map(|l| l.latency_ns).collect();
    c.push(spec.walk_ns);
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(levels: &[(u32, u32, f64)], walk: f64) -> TlbSpec {
        TlbSpec {
            page_size: 4096,
            levels: levels
                .iter()
                .map(|&(entries, assoc, latency_ns)| TlbLevelSpec {
                    name: "T".into(),
                    entries,
                    assoc,
                    latency_ns,
                })
                .collect(),
            walk_ns: walk,
        }
    }

    /// A cyclic walk over P pages in a fully associative LRU level of E
    /// entries hits every time when P ≤ E and never when P > E (LRU
    /// evicts the page needed next): the textbook case, by hand.
    #[test]
    fn a_cyclic_walk_hits_within_reach_and_misses_past_it() {
        for (pages, expect_hits) in [(8u64, true), (9, false)] {
            let mut t = Tlb::new(&spec(&[(8, 8, 0.0), (64, 4, 2.0)], 10.0));
            let mut found = Vec::new();
            for round in 0..3 {
                for p in 0..pages {
                    let f = t.lookup(p << 12 | 0x40);
                    if round > 0 {
                        found.push(f);
                    }
                }
            }
            if expect_hits {
                assert!(found.iter().all(|&f| f == 0), "{pages} pages: {found:?}");
            } else {
                // Past the first level: every lookup is a second-level hit.
                assert!(found.iter().all(|&f| f == 1), "{pages} pages: {found:?}");
            }
        }
    }

    #[test]
    fn first_touches_walk_and_fill_every_level() {
        let mut t = Tlb::new(&spec(&[(4, 4, 0.0), (16, 4, 2.0)], 10.0));
        assert_eq!(t.lookup(0x1000), 2, "a cold page walks");
        assert_eq!(t.lookup(0x1fff), 0, "the same page again");
        for p in 2..7u64 {
            assert_eq!(t.lookup(p << 12), 2);
        }
        // Page 1 left the 4-entry first level (5 pages since), not the second.
        assert_eq!(t.lookup(0x1000), 1);
        assert_eq!(t.lookup(0x1000), 0);
        assert_eq!(
            costs_ns(&spec(&[(4, 4, 0.0), (16, 4, 2.0)], 10.0)),
            [0.0, 2.0, 10.0]
        );
    }

    /// Sets index by the page's low bits: 2 sets of 2 ways hold pages
    /// 0, 2 in set 0 — a third even page evicts the least recent.
    #[test]
    fn sets_are_indexed_by_page_number() {
        let mut t = Tlb::new(&spec(&[(4, 2, 0.0)], 10.0));
        for p in [0u64, 2, 1, 3] {
            assert_eq!(t.lookup(p << 12), 1);
        }
        assert_eq!(
            t.lookup(4 << 12),
            1,
            "page 4 goes to set 0, evicting page 0"
        );
        assert_eq!(t.lookup(2 << 12), 0, "page 2 stays");
        assert_eq!(t.lookup(1 << 12), 0, "set 1 untouched");
        assert_eq!(t.lookup(0), 1, "page 0 was evicted");
    }
}
