//! Each node's feature cache: a 16-way set-associative LRU over item
//! blocks, as [`crate::cache::Cache`] with [`crate::cache::Replacement::Lru`]
//! would keep it (same sets, same victims), in the layout a request's 32
//! lookups want: a set's 16 tags are compared at once into a bit mask (no
//! per-way branch to mispredict), and its recency order is one packed
//! word. When every tag fits 16 bits (the seed's 100 000 items on 8
//! shards do) a set's tags and order share one aligned host line, so a
//! lookup misses the host's cache once, not twice; else the tags are
//! 32-bit words filling a line and the orders lie apart. Fewer bytes than
//! the general cache's is what made it faster (`docs/performance.md`).
//! Only what the request model asks is here: look up and fill in one
//! pass, test, fill, flush.

use crate::cache::move_to_front;

/// Ways per set.
const WAYS: usize = 16;

/// An empty way's tag; a block's tag is `(block >> set bits) + 1`.
const EMPTY: u32 = 0;

/// The packed order of a fresh set: way 0 most recent, way 15 least.
const FRESH_ORDER: u64 = 0xFEDC_BA98_7654_3210;

/// One set's 16-bit tags and its order, on one host line.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(64))]
struct Narrow {
    tags: [u16; WAYS],
    order: u64,
}

/// One set's 32-bit tags, on one host line.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(64))]
struct Wide([u32; WAYS]);

/// The sets, in the narrowest layout their tags fit.
#[derive(Clone, Debug)]
enum Sets {
    Narrow(Vec<Narrow>),
    /// Per set, the tags; and the ways' recency packed four bits each,
    /// most recent in the low nibble (as the general cache packs it).
    Wide {
        tags: Vec<Wide>,
        order: Vec<u64>,
    },
}

/// A node's feature cache.
#[derive(Clone, Debug)]
pub(super) struct FeatureCache {
    sets: Sets,
    set_mask: u64,
    set_bits: u32,
    /// The largest block the tags were sized for.
    max_block: u64,
}

/// The way a lookup takes — a hit's, else the lowest empty, else the
/// least recent — and the set's order with it made most recent; by
/// conditional moves, no branch on the outcome.
#[inline(always)]
fn pick(hit: u32, empty: u32, order: u64) -> (usize, u64) {
    let pick = if hit != 0 { hit } else { empty };
    let way = if pick != 0 {
        pick.trailing_zeros() as u64
    } else {
        order >> (4 * (WAYS - 1))
    };
    (way as usize, move_to_front(order, way))
}

/// The ways of `tags` holding `tag`, one bit each, way by way (where
/// there is no SSE2).
#[cfg(not(target_arch = "x86_64"))]
fn ways_holding<T: PartialEq>(tags: &[T; WAYS], tag: T) -> u32 {
    tags.iter()
        .enumerate()
        .fold(0, |m, (w, t)| m | ((*t == tag) as u32) << w)
}

/// The ways of a narrow set holding `tag`, one bit each.
#[inline(always)]
fn matches_narrow(tags: &[u16; WAYS], tag: u16) -> u32 {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: SSE2 is part of the x86-64 baseline; the two aligned loads
    // read the 32 bytes of `tags`, which start a 64-byte-aligned `Narrow`.
    unsafe {
        use std::arch::x86_64::*;
        let key = _mm_set1_epi16(tag as i16);
        let p = tags.as_ptr() as *const __m128i;
        let e0 = _mm_cmpeq_epi16(_mm_load_si128(p), key);
        let e1 = _mm_cmpeq_epi16(_mm_load_si128(p.add(1)), key);
        // A saturating pack keeps each lane's all-ones or zero: one byte a
        // way, in way order, whose top bits make the mask.
        _mm_movemask_epi8(_mm_packs_epi16(e0, e1)) as u32
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        ways_holding(tags, tag)
    }
}

/// The ways of a wide set holding `tag`, one bit each.
#[inline(always)]
fn matches_wide(tags: &Wide, tag: u32) -> u32 {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: SSE2 is part of the x86-64 baseline; the four aligned
    // loads read the 64 bytes of `tags`, a 64-byte-aligned array.
    unsafe {
        use std::arch::x86_64::*;
        let key = _mm_set1_epi32(tag as i32);
        let p = tags.0.as_ptr() as *const __m128i;
        let e0 = _mm_cmpeq_epi32(_mm_load_si128(p), key);
        let e1 = _mm_cmpeq_epi32(_mm_load_si128(p.add(1)), key);
        let e2 = _mm_cmpeq_epi32(_mm_load_si128(p.add(2)), key);
        let e3 = _mm_cmpeq_epi32(_mm_load_si128(p.add(3)), key);
        // Saturating packs keep each lane's all-ones or zero: one byte a
        // way, in way order, whose top bits make the mask.
        let lo = _mm_packs_epi32(e0, e1);
        let hi = _mm_packs_epi32(e2, e3);
        _mm_movemask_epi8(_mm_packs_epi16(lo, hi)) as u32
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        ways_holding(&tags.0, tag)
    }
}

impl FeatureCache {
    /// A cache of `sets` sets (a power of two) of 16 ways for blocks up to
    /// `max_block`; `None` if those blocks' tags do not fit 32 bits (more
    /// than 2^32 − 1 blocks a set: with the workload's limits of 2^24 items
    /// and 100 000 shards, only a cache of 4 111 items or fewer a node).
    pub fn new(sets: u64, max_block: u64) -> Option<FeatureCache> {
        debug_assert!(sets.is_power_of_two());
        let set_bits = sets.trailing_zeros();
        let top_tag = max_block >> set_bits;
        let n = sets as usize;
        let sets = if top_tag < u16::MAX as u64 {
            Sets::Narrow(vec![
                Narrow {
                    tags: [EMPTY as u16; WAYS],
                    order: FRESH_ORDER,
                };
                n
            ])
        } else if top_tag < u32::MAX as u64 {
            Sets::Wide {
                tags: vec![Wide([EMPTY; WAYS]); n],
                order: vec![FRESH_ORDER; n],
            }
        } else {
            return None;
        };
        Some(FeatureCache {
            sets,
            set_mask: n as u64 - 1,
            set_bits,
            max_block,
        })
    }

    /// `block`'s set and its tag there.
    #[inline(always)]
    fn place(&self, block: u64) -> (usize, u32) {
        debug_assert!(
            block <= self.max_block,
            "block {block} past the tags' width"
        );
        (
            (block & self.set_mask) as usize,
            (block >> self.set_bits) as u32 + 1,
        )
    }

    /// Hints the host to fetch `block`'s set. Changes nothing.
    #[inline(always)]
    pub fn prefetch(&self, block: u64) {
        let (i, _) = self.place(block);
        match &self.sets {
            Sets::Narrow(v) => traces::hint::prefetch(&v[i]),
            Sets::Wide { tags, order } => {
                traces::hint::prefetch(&tags[i]);
                traces::hint::prefetch(&order[i]);
            }
        }
    }

    /// True if `block` is resident (no state change).
    #[inline]
    pub fn contains(&self, block: u64) -> bool {
        let (i, tag) = self.place(block);
        match &self.sets {
            Sets::Narrow(v) => matches_narrow(&v[i].tags, tag as u16) != 0,
            Sets::Wide { tags, .. } => matches_wide(&tags[i], tag) != 0,
        }
    }

    /// Looks `block` up: a hit makes it most recent and returns true; a
    /// miss places it (in the lowest empty way, else over the least recent)
    /// and returns false. Without a branch on the outcome: the way is
    /// picked by conditional moves and the tag stored either way (a hit
    /// rewrites its own tag), so a request's mix of hits and misses costs
    /// no mispredictions.
    #[inline]
    pub fn access(&mut self, block: u64) -> bool {
        let (i, tag) = self.place(block);
        match &mut self.sets {
            Sets::Narrow(v) => {
                let set = &mut v[i];
                let hit = matches_narrow(&set.tags, tag as u16);
                let (way, order) = pick(hit, matches_narrow(&set.tags, EMPTY as u16), set.order);
                set.tags[way] = tag as u16;
                set.order = order;
                hit != 0
            }
            Sets::Wide { tags, order } => {
                let set = &mut tags[i];
                let hit = matches_wide(set, tag);
                let (way, o) = pick(hit, matches_wide(set, EMPTY), order[i]);
                set.0[way] = tag;
                order[i] = o;
                hit != 0
            }
        }
    }

    /// Places `block` if absent (a preload's fill); a resident block is
    /// left as it is, its recency too.
    #[inline]
    pub fn fill(&mut self, block: u64) {
        if !self.contains(block) {
            self.access(block);
        }
    }

    /// Empties the cache (a background job's flush).
    pub fn clear(&mut self) {
        match &mut self.sets {
            Sets::Narrow(v) => v.iter_mut().for_each(|s| s.tags = [EMPTY as u16; WAYS]),
            Sets::Wide { tags, .. } => tags.fill(Wide([EMPTY; WAYS])),
        }
    }

    /// True if the sets are the one-line layout of 16-bit tags.
    #[cfg(test)]
    fn narrow(&self) -> bool {
        matches!(self.sets, Sets::Narrow(_))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::{Cache, Replacement};
    use crate::geometry::Geometry;

    /// The oracle is the general cache the engine used before: the same
    /// hits, and the same contents after every step, on a stream that
    /// overflows sets, refills after flushes and preloads; with small
    /// block numbers, with blocks over all 8 sets whose tags reach
    /// `u16::MAX` (the largest of the one-line layout) and with blocks
    /// whose tags reach `u32::MAX` (the largest this cache takes).
    #[test]
    fn keeps_what_the_general_lru_cache_keeps() {
        let sets = 8u64;
        let spread = |top: u64, step: u64| -> Vec<u64> {
            (0..400u64)
                .map(|k| ((top - k * step) << 3) | (k % 8))
                .collect()
        };
        let small: Vec<u64> = (1..=400).collect();
        let narrow = spread(u16::MAX as u64 - 1, 131);
        let wide = spread(u32::MAX as u64 - 1, 7_000_001);
        for (blocks, one_line) in [(small, true), (narrow, true), (wide, false)] {
            let g = Geometry::new(sets * WAYS as u64 * 64, WAYS as u32, 64).unwrap();
            let mut general = Cache::new(g, Replacement::Lru, 0);
            let max = *blocks.iter().max().unwrap();
            let mut ours = FeatureCache::new(sets, max).unwrap();
            assert_eq!(ours.narrow(), one_line, "max block {max}");
            let mut x = 12345u64;
            for step in 0..200_000u64 {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                // 400 blocks over 8 sets of 16: a skewed reuse that overflows.
                let block = blocks[((x >> 33) % 400).min((x >> 20) % 400) as usize];
                match step % 97 {
                    0 => {
                        general.clear();
                        ours.clear();
                    }
                    1..=9 => {
                        general.fill(block, false);
                        ours.fill(block);
                    }
                    _ => {
                        let was = general.probe(block, false);
                        if !was {
                            general.fill_absent(block, false);
                        }
                        assert_eq!(ours.access(block), was, "step {step} block {block}");
                    }
                }
                if step % 1000 == 0 {
                    for &b in &blocks {
                        assert_eq!(ours.contains(b), general.contains(b), "step {step}");
                    }
                }
            }
        }
    }

    /// Blocks whose tags would not fit 32 bits are refused, not aliased;
    /// tags up to 16 bits take the one-line layout.
    #[test]
    fn refuses_blocks_beyond_32_bit_tags() {
        let narrow = ((u16::MAX as u64 - 1) << 3) | 7;
        assert!(FeatureCache::new(8, narrow).unwrap().narrow());
        assert!(!FeatureCache::new(8, narrow + 1).unwrap().narrow());
        let fits = ((u32::MAX as u64 - 1) << 3) | 7;
        assert!(FeatureCache::new(8, fits).is_some());
        assert!(FeatureCache::new(8, fits + 1).is_none());
        assert!(FeatureCache::new(1, u32::MAX as u64).is_none());
    }
}
