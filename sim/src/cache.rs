//! General set-associative caches: replacement policies, write-back, dirty state.
//!
//! Used by the timing model and the `--replacement` replay mode (the
//! cachegrind mode has its own MRU-list store in [`crate::cachegrind`]).
//!
//! Layout: `tags` is a flat array, `assoc` ways per set, [`INVALID`] for an
//! empty way. Beside it, one 32-byte record per set (so a lookup touches the
//! tags and one more host cache line): the valid and dirty way masks (hence
//! assoc ≤ 64) and the policy word — for LRU with ≤ 16 ways the recency
//! order as 4-bit way numbers (MRU in the low nibble; a hit moves its nibble
//! to the front with a few shifts), for tree-PLRU its bits. Otherwise an LRU
//! stamp per way (more than 16 ways), an RRPV per way (SRRIP), or one
//! xorshift state (random). Empty ways are always filled first, lowest index
//! first, under every policy.

use serde::{Deserialize, Serialize};

use crate::geometry::Geometry;

/// Tag value of an empty way.
pub const INVALID: u64 = u64::MAX;

/// Replacement policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Replacement {
    /// True least-recently-used.
    Lru,
    /// Tree pseudo-LRU (associativity must be a power of two).
    Plru,
    /// Static re-reference interval prediction, 2-bit RRPV, insert at 2
    /// (Jaleel et al., ISCA 2010, SRRIP-HP).
    Srrip,
    /// Uniformly random victim from a seeded xorshift64* stream.
    Random,
}

impl Replacement {
    /// Names accepted on the command line.
    pub const NAMES: [(&'static str, Replacement); 4] = [
        ("lru", Replacement::Lru),
        ("plru", Replacement::Plru),
        ("srrip", Replacement::Srrip),
        ("random", Replacement::Random),
    ];

    pub fn from_name(s: &str) -> Option<Replacement> {
        Replacement::NAMES
            .iter()
            .find(|(n, _)| *n == s)
            .map(|(_, r)| *r)
    }
}

/// A line pushed out of the cache.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Evicted {
    /// Block number (address >> log2(line)).
    pub block: u64,
    /// The line was modified and must be written back.
    pub dirty: bool,
}

/// Result of an access.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lookup {
    Hit,
    /// Missed and was allocated; what it displaced, if anything.
    Miss(Option<Evicted>),
}

impl Lookup {
    #[inline]
    pub fn is_miss(self) -> bool {
        matches!(self, Lookup::Miss(_))
    }
}

const RRPV_MAX: u8 = 3;
const RRPV_INSERT: u8 = 2;

const NIBBLE_ONES: u64 = 0x1111_1111_1111_1111;
const NIBBLE_HIGH: u64 = 0x8888_8888_8888_8888;

/// Moves way `w` to the front (MRU, low nibble) of a packed order word.
#[inline(always)]
pub(crate) fn move_to_front(order: u64, w: u64) -> u64 {
    // Position of w: the lowest zero nibble of order ^ (w in every nibble)
    // (the lowest flagged nibble of the zero test is always exact).
    let x = order ^ (w * NIBBLE_ONES);
    let z = x.wrapping_sub(NIBBLE_ONES) & !x & NIBBLE_HIGH;
    let p = z.trailing_zeros() / 4; // 0..=15
    // No branch on the position: at 0 the masks give the word back (its
    // low nibble is already w), at 15 they clear every nibble above.
    let below = (1u64 << (4 * p)) - 1; // nibbles 0..p
    (order & !((below << 4) | 0xF)) | ((order & below) << 4) | w
}

/// One set's bookkeeping, kept in one place so that a lookup touches the
/// set's tags and one more host cache line, not three: the valid and dirty
/// way masks and the policy word (the packed LRU order, or the tree-PLRU
/// bits).
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
#[repr(C, align(32))]
struct SetMeta {
    valid: u64,
    dirty: u64,
    policy: u64,
}

/// A cache that cannot be built as asked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CacheError {
    #[error("tree-PLRU needs a power-of-two associativity, {geometry} has {assoc}")]
    PlruAssoc { geometry: String, assoc: u32 },
}

/// One set-associative cache.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Cache {
    geometry: Geometry,
    policy: Replacement,
    assoc: usize,
    set_mask: u64,
    tags: Vec<u64>,
    /// Per-set masks and policy word, side by side.
    meta: Vec<SetMeta>,
    stamps: Vec<u64>,
    rrpv: Vec<u8>,
    clock: u64,
    rng: u64,
}

impl Cache {
    /// An empty cache. `seed` only matters for [`Replacement::Random`].
    /// Panics if `policy` is PLRU and the associativity is not a power of two;
    /// check with [`Cache::check`] first.
    pub fn new(geometry: Geometry, policy: Replacement, seed: u64) -> Cache {
        let sets = geometry.sets() as usize;
        let assoc = geometry.assoc as usize;
        let ways = sets * assoc;
        Cache {
            geometry,
            policy,
            assoc,
            set_mask: sets as u64 - 1,
            tags: vec![INVALID; ways],
            meta: vec![
                SetMeta {
                    valid: 0,
                    dirty: 0,
                    policy: if policy == Replacement::Lru && assoc <= 16 {
                        // Ways 0..assoc in order; unused nibbles hold 0xF, which
                        // never matches a way number below assoc (assoc < 16).
                        let mut o = 0u64;
                        for i in (0..16).rev() {
                            o = (o << 4) | if i < assoc { i as u64 } else { 0xF };
                        }
                        o
                    } else {
                        0
                    },
                };
                sets
            ],
            stamps: if policy == Replacement::Lru && assoc > 16 {
                vec![0; ways]
            } else {
                Vec::new()
            },
            rrpv: if policy == Replacement::Srrip {
                vec![RRPV_MAX; ways]
            } else {
                Vec::new()
            },
            clock: 0,
            // xorshift state must be non-zero.
            rng: seed ^ 0x9E37_79B9_7F4A_7C15 | 1,
        }
    }

    /// A restored copy of this cache (a checkpoint's) fits it: the same
    /// geometry, policy and table sizes, and bookkeeping that names only
    /// the set's ways (valid and dirty masks, a packed LRU order that is a
    /// permutation of them, SRRIP values in range), so no operation can
    /// reach outside the tables.
    pub fn fits(&self, restored: &Cache) -> bool {
        let ways: u64 = if self.assoc >= 64 {
            u64::MAX
        } else {
            (1 << self.assoc) - 1
        };
        let packed = self.policy == Replacement::Lru && self.stamps.is_empty();
        let order_ok = |o: u64| {
            let mut seen = 0u32;
            (0..16).all(|i| {
                let w = (o >> (4 * i) & 0xF) as usize;
                if i >= self.assoc {
                    return w == 0xF;
                }
                let fresh = w < self.assoc && seen >> w & 1 == 0;
                seen |= 1 << w;
                fresh
            })
        };
        self.geometry == restored.geometry
            && self.policy == restored.policy
            && self.assoc == restored.assoc
            && self.set_mask == restored.set_mask
            && self.tags.len() == restored.tags.len()
            && self.meta.len() == restored.meta.len()
            && self.stamps.len() == restored.stamps.len()
            && self.rrpv.len() == restored.rrpv.len()
            && restored.rrpv.iter().all(|&r| r <= RRPV_MAX)
            && restored.meta.iter().all(|m| {
                m.valid & !ways == 0 && m.dirty & !ways == 0 && (!packed || order_ok(m.policy))
            })
    }

    /// Whether `policy` can run on `geometry`.
    pub fn check(geometry: &Geometry, policy: Replacement) -> Result<(), CacheError> {
        if policy == Replacement::Plru && !geometry.assoc.is_power_of_two() {
            return Err(CacheError::PlruAssoc {
                geometry: geometry.to_string(),
                assoc: geometry.assoc,
            });
        }
        Ok(())
    }

    pub fn geometry(&self) -> &Geometry {
        &self.geometry
    }

    /// Block number of an address.
    #[inline]
    pub fn block_of(&self, addr: u64) -> u64 {
        addr >> self.geometry.line_bits()
    }

    /// Set index of a block. Sets are addressed by index and their ways
    /// start at `set * assoc`: the associativity need not be a power of two,
    /// and a division by it (tens of cycles) never sits on the access path.
    #[inline(always)]
    fn set_of(&self, block: u64) -> usize {
        (block & self.set_mask) as usize
    }

    /// Way of `block` in `set`, if resident.
    #[inline(always)]
    fn find(&self, set: usize, block: u64) -> Option<usize> {
        let base = set * self.assoc;
        self.tags[base..base + self.assoc]
            .iter()
            .position(|&t| t == block)
    }

    #[inline(always)]
    fn is_dirty_way(&self, set: usize, way: usize) -> bool {
        self.meta[set].dirty >> way & 1 == 1
    }

    /// Hints the host to fetch what a lookup of `block` reads: its set's
    /// tags (first and last way) and bookkeeping. Changes nothing.
    #[inline(always)]
    pub fn prefetch(&self, block: u64) {
        let set = self.set_of(block);
        let base = set * self.assoc;
        traces::hint::prefetch(&self.tags[base]);
        traces::hint::prefetch(&self.tags[base + self.assoc - 1]);
        traces::hint::prefetch(&self.meta[set]);
    }

    /// True if the block is resident (no state change).
    #[inline]
    pub fn contains(&self, block: u64) -> bool {
        self.find(self.set_of(block), block).is_some()
    }

    /// True if the block is resident and dirty.
    pub fn is_dirty(&self, block: u64) -> bool {
        let set = self.set_of(block);
        self.find(set, block)
            .is_some_and(|w| self.is_dirty_way(set, w))
    }

    #[inline(always)]
    fn touch(&mut self, set: usize, way: usize, fill: bool) {
        match self.policy {
            Replacement::Lru if self.stamps.is_empty() => {
                self.meta[set].policy = move_to_front(self.meta[set].policy, way as u64);
            }
            Replacement::Lru => {
                self.clock += 1;
                self.stamps[set * self.assoc + way] = self.clock;
            }
            Replacement::Srrip => {
                self.rrpv[set * self.assoc + way] = if fill { RRPV_INSERT } else { 0 };
            }
            Replacement::Plru => {
                let levels = self.assoc.trailing_zeros();
                let mut node = 1usize;
                let mut bits = self.meta[set].policy;
                for level in (0..levels).rev() {
                    let dir = (way >> level) & 1;
                    // Point the node away from the way just used.
                    if dir == 1 {
                        bits &= !(1 << node);
                    } else {
                        bits |= 1 << node;
                    }
                    node = node * 2 + dir;
                }
                self.meta[set].policy = bits;
            }
            Replacement::Random => {}
        }
    }

    #[inline]
    fn victim(&mut self, set: usize) -> usize {
        let base = set * self.assoc;
        let empty = (!self.meta[set].valid).trailing_zeros() as usize;
        if empty < self.assoc {
            return empty;
        }
        match self.policy {
            Replacement::Lru if self.stamps.is_empty() => {
                (self.meta[set].policy >> (4 * (self.assoc - 1)) & 0xF) as usize
            }
            Replacement::Lru => {
                let s = &self.stamps[base..base + self.assoc];
                let mut best = 0;
                for w in 1..s.len() {
                    if s[w] < s[best] {
                        best = w;
                    }
                }
                best
            }
            Replacement::Srrip => loop {
                let r = &mut self.rrpv[base..base + self.assoc];
                if let Some(w) = r.iter().position(|&v| v == RRPV_MAX) {
                    return w;
                }
                for v in r.iter_mut() {
                    *v += 1;
                }
            },
            Replacement::Plru => {
                let bits = self.meta[set].policy;
                let mut node = 1usize;
                let mut way = 0usize;
                for _ in 0..self.assoc.trailing_zeros() {
                    let dir = (bits >> node & 1) as usize;
                    way = way * 2 + dir;
                    node = node * 2 + dir;
                }
                way
            }
            Replacement::Random => {
                // xorshift64*
                let mut x = self.rng;
                x ^= x >> 12;
                x ^= x << 25;
                x ^= x >> 27;
                self.rng = x;
                (x.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 32) as usize % self.assoc
            }
        }
    }

    /// Places `block` in `set`, returning what it displaced.
    #[inline]
    fn allocate(&mut self, set: usize, block: u64, dirty: bool) -> Option<Evicted> {
        let way = self.victim(set);
        let slot = set * self.assoc + way;
        let old = self.tags[slot];
        self.meta[set].valid |= 1 << way;
        let evicted = (old != INVALID).then(|| Evicted {
            block: old,
            dirty: self.is_dirty_way(set, way),
        });
        self.tags[slot] = block;
        if dirty {
            self.meta[set].dirty |= 1 << way;
        } else {
            self.meta[set].dirty &= !(1 << way);
        }
        self.touch(set, way, true);
        evicted
    }

    /// Looks a block up and, on a hit, updates recency (and sets dirty on a
    /// write); a miss changes nothing. One pass over the set.
    #[inline]
    pub fn probe(&mut self, block: u64, write: bool) -> bool {
        self.probe_ex(block, write).is_some()
    }

    /// As [`Cache::probe`], returning on a hit whether the line was dirty
    /// before this access.
    #[inline]
    pub fn probe_ex(&mut self, block: u64, write: bool) -> Option<bool> {
        let set = self.set_of(block);
        let way = self.find(set, block)?;
        let was = self.is_dirty_way(set, way);
        if write {
            self.meta[set].dirty |= 1 << way;
        }
        self.touch(set, way, false);
        Some(was)
    }

    /// Demand access to a block: a hit updates recency (and sets dirty on a
    /// write); a miss allocates (write-allocate) and reports the victim.
    #[inline]
    pub fn access(&mut self, block: u64, write: bool) -> Lookup {
        match self.probe_ex(block, write) {
            Some(_) => Lookup::Hit,
            None => Lookup::Miss(self.allocate(self.set_of(block), block, write)),
        }
    }

    /// Inserts a block that is not resident (a fill from below, a prefetch,
    /// a write-back from above); a resident block only gets `dirty` or-ed in.
    pub fn fill(&mut self, block: u64, dirty: bool) -> Option<Evicted> {
        let set = self.set_of(block);
        match self.find(set, block) {
            Some(way) => {
                if dirty {
                    self.meta[set].dirty |= 1 << way;
                }
                None
            }
            None => self.allocate(set, block, dirty),
        }
    }

    /// As [`Cache::fill`] for a block the caller has just probed and found
    /// absent: no search for it.
    pub fn fill_absent(&mut self, block: u64, dirty: bool) -> Option<Evicted> {
        let set = self.set_of(block);
        debug_assert!(
            self.find(set, block).is_none(),
            "block {block:#x} is resident"
        );
        self.allocate(set, block, dirty)
    }

    /// Empties the cache (a flush).
    pub fn clear(&mut self) {
        self.tags.fill(INVALID);
        for m in &mut self.meta {
            m.valid = 0;
            m.dirty = 0;
        }
        self.rrpv.fill(RRPV_MAX);
    }

    /// Removes a block (coherence invalidation); returns whether it was dirty,
    /// `None` if it was not resident.
    pub fn invalidate(&mut self, block: u64) -> Option<bool> {
        let set = self.set_of(block);
        let way = self.find(set, block)?;
        let was_dirty = self.is_dirty_way(set, way);
        self.meta[set].dirty &= !(1 << way);
        self.tags[set * self.assoc + way] = INVALID;
        self.meta[set].valid &= !(1 << way);
        if self.policy == Replacement::Srrip {
            self.rrpv[set * self.assoc + way] = RRPV_MAX;
        }
        Some(was_dirty)
    }

    /// Clears a resident block's dirty bit (after a write-back or a downgrade
    /// to shared); returns whether it was dirty.
    pub fn clean(&mut self, block: u64) -> bool {
        let set = self.set_of(block);
        match self.find(set, block) {
            Some(way) => {
                let was = self.is_dirty_way(set, way);
                self.meta[set].dirty &= !(1 << way);
                was
            }
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    /// A used cache fits a fresh one of its shape; another geometry, a
    /// missing way, a mask bit past the ways, a repeated or foreign way in
    /// the LRU order and an SRRIP value out of range do not.
    #[test]
    fn a_restored_cache_must_fit() {
        use super::*;
        let g: Geometry = "4096,8,64".parse().unwrap();
        for policy in [Replacement::Lru, Replacement::Plru, Replacement::Srrip] {
            let fresh = Cache::new(g, policy, 1);
            let mut used = fresh.clone();
            for b in 0..3000u64 {
                used.access(b * 7 % 517, b % 3 == 0);
            }
            assert!(fresh.fits(&used), "{policy:?}");
            let mut bad = used.clone();
            bad.meta[2].valid |= 1 << 8;
            assert!(!fresh.fits(&bad), "{policy:?}: a ninth way");
            let mut bad = used.clone();
            bad.tags.pop();
            assert!(!fresh.fits(&bad), "{policy:?}: a way short");
            let other = Cache::new("8192,8,64".parse().unwrap(), policy, 1);
            assert!(!fresh.fits(&other), "{policy:?}: another geometry");
        }
        let fresh = Cache::new(g, Replacement::Lru, 1);
        let mut bad = fresh.clone();
        bad.meta[0].policy &= !0xF0; // nibble 1 becomes way 0: way 0 twice
        assert!(!fresh.fits(&bad));
        let mut bad = fresh.clone();
        bad.meta[0].policy = (bad.meta[0].policy & !0xF) | 0x9; // way 9 of 8
        assert!(!fresh.fits(&bad));
        let srrip = Cache::new(g, Replacement::Srrip, 1);
        let mut bad = srrip.clone();
        bad.rrpv[5] = RRPV_MAX + 1;
        assert!(!srrip.fits(&bad));
    }

    use super::*;
    use crate::cachegrind::LruSets;

    fn one_set(assoc: u32, policy: Replacement) -> Cache {
        Cache::new(
            Geometry::new(64 * assoc as u64, assoc, 64).unwrap(),
            policy,
            7,
        )
    }

    fn misses(c: &mut Cache, seq: &[u64]) -> Vec<bool> {
        seq.iter().map(|&b| c.access(b, false).is_miss()).collect()
    }

    #[test]
    fn packed_order_moves_a_way_to_the_front() {
        // Order (MRU first) 3,1,0,2 packed low nibble first.
        let o = 0x2013u64 | 0xFFFF_FFFF_FFFF_0000;
        assert_eq!(move_to_front(o, 0) & 0xFFFF, 0x2130); // 0,3,1,2
        assert_eq!(move_to_front(o, 2) & 0xFFFF, 0x0132);
        assert_eq!(move_to_front(o, 3), o);
        // 16 ways: moving the LRU way (position 15) to the front.
        let full = 0xFEDC_BA98_7654_3210u64;
        assert_eq!(move_to_front(full, 0xF), 0xEDCB_A987_6543_210F);
    }

    #[test]
    fn lru_large_assoc_uses_stamps_and_still_matches() {
        let g = Geometry::new(32 * 64 * 4, 32, 64).unwrap();
        let mut a = Cache::new(g, Replacement::Lru, 0);
        let mut b = LruSets::new(&g);
        let mut x: u64 = 99;
        for _ in 0..100_000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let block = 1 + (x >> 33) % 300;
            assert_eq!(a.access(block, false).is_miss(), b.set_ref(block));
        }
    }

    #[test]
    fn lru_matches_cachegrind_mru_list_on_random_streams() {
        // Two independent LRU implementations (timestamps vs MRU list) must agree.
        let g = Geometry::new(8192, 4, 64).unwrap();
        let mut a = Cache::new(g, Replacement::Lru, 0);
        let mut b = LruSets::new(&g);
        let mut x: u64 = 12345;
        for _ in 0..200_000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let block = 1 + (x >> 33) % 700; // never block 0 (cachegrind's zero tags)
            assert_eq!(a.access(block, false).is_miss(), b.set_ref(block));
        }
    }

    #[test]
    fn plru_hand_sequence_differs_from_lru() {
        // A B C D fill ways 0..3; A hits; E misses. Tree-PLRU: after touching
        // way 3 the root points left and node 2 points to way 0, A's hit flips
        // the root right and node 3 points at way 2 (C), so E evicts C — where
        // LRU would evict B.
        let (a, b, c, d, e) = (1, 2, 3, 4, 5);
        let mut p = one_set(4, Replacement::Plru);
        assert_eq!(
            misses(&mut p, &[a, b, c, d, a, e]),
            [true, true, true, true, false, true]
        );
        assert!(p.contains(b) && !p.contains(c));
        let mut l = one_set(4, Replacement::Lru);
        misses(&mut l, &[a, b, c, d, a, e]);
        assert!(!l.contains(b) && l.contains(c));
    }

    #[test]
    fn srrip_hand_sequence() {
        // Fill A B C D at RRPV 2; A hits → 0. E: no RRPV 3, age all (A1 B3 C3 D3),
        // evict B (first at 3), E inserted at 2. F: evict C. A survives both.
        let (a, b, c, d, e, f) = (1, 2, 3, 4, 5, 6);
        let mut s = one_set(4, Replacement::Srrip);
        misses(&mut s, &[a, b, c, d, a, e]);
        assert!(!s.contains(b) && s.contains(c));
        misses(&mut s, &[f]);
        assert!(!s.contains(c) && s.contains(a) && s.contains(d) && s.contains(e));
    }

    #[test]
    fn srrip_resists_a_scan_that_flushes_lru() {
        // A hot block re-used between single-use scan blocks survives under
        // SRRIP (scan blocks insert at RRPV 2, the hot one sits at 0).
        let mut s = one_set(4, Replacement::Srrip);
        let mut hot_misses = 0;
        for i in 0..1000u64 {
            if s.access(1, false).is_miss() {
                hot_misses += 1;
            }
            for j in 0..3 {
                s.access(100 + 3 * i + j, false);
            }
        }
        assert_eq!(hot_misses, 1);
    }

    #[test]
    fn random_is_seeded_and_fills_empty_ways_first() {
        let seq: Vec<u64> = (0..5000).map(|i| (i * 7919) % 37 + 1).collect();
        let mut r1 = one_set(8, Replacement::Random);
        let mut r2 = one_set(8, Replacement::Random);
        assert_eq!(misses(&mut r1, &seq), misses(&mut r2, &seq));
        let mut r = one_set(8, Replacement::Random);
        assert!(
            misses(&mut r, &[1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4, 5, 6, 7, 8])
                .iter()
                .skip(8)
                .all(|m| !m)
        );
    }

    #[test]
    fn write_back_reports_dirty_victims() {
        let mut c = one_set(2, Replacement::Lru);
        assert_eq!(c.access(1, true), Lookup::Miss(None));
        assert_eq!(c.access(2, false), Lookup::Miss(None));
        assert_eq!(
            c.access(3, false),
            Lookup::Miss(Some(Evicted {
                block: 1,
                dirty: true
            }))
        );
        assert_eq!(
            c.access(4, false),
            Lookup::Miss(Some(Evicted {
                block: 2,
                dirty: false
            }))
        );
        assert_eq!(c.access(4, true), Lookup::Hit);
        assert!(c.is_dirty(4));
        assert_eq!(c.invalidate(4), Some(true));
        assert_eq!(c.invalidate(4), None);
        assert_eq!(c.fill(9, true), None, "the invalidated way is reused");
        assert!(c.clean(9) && !c.is_dirty(9));
    }

    #[test]
    fn plru_rejects_non_power_of_two_ways() {
        let g = Geometry::new(12 * 64 * 4, 12, 64).unwrap();
        assert!(Cache::check(&g, Replacement::Plru).is_err());
        assert!(Cache::check(&g, Replacement::Lru).is_ok());
    }
}
