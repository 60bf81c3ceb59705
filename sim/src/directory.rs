//! The coherence directory: for each line held by some cache, which caching
//! agents hold it and whether one of them owns it modified (MESI).
//!
//! Agents are numbered: cores `0..C`, then one per node LLC `C..C+N`; a
//! 256-bit set holds them. Entries exist only for lines some agent holds
//! (plus the last writer, for false-sharing detection), in a [`Directory`]:
//! an open-addressing table keyed by line number whose slots are one host
//! cache line each, placed so that neighbouring lines sit in neighbouring
//! slots (a stream's misses and its evictions touch few host lines) —
//! lookups happen on private-cache misses and evictions and on writes.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Fast hasher for u64 keys (line and page numbers): multiply-xorshift.
#[derive(Default, Clone, Copy)]
pub struct U64Hasher(u64);

impl Hasher for U64Hasher {
    #[inline]
    fn finish(&self) -> u64 {
        let x = self.0.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        x ^ (x >> 29)
    }
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8 | b as u64).wrapping_mul(31);
        }
    }
    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.0 = i;
    }
}

/// A `HashMap` keyed by u64 with [`U64Hasher`]. Never iterated into output.
pub type U64Map<V> = HashMap<u64, V, BuildHasherDefault<U64Hasher>>;

/// A `HashMap` whose iteration order depends only on the operations done on
/// it (a fixed hasher, not a random one): what a policy's checkpointed
/// state keeps, so that a checkpoint's bytes repeat.
pub type DetMap<K, V> = HashMap<K, V, BuildHasherDefault<U64Hasher>>;

/// A set of up to 256 agents.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Agents([u64; 4]);

impl Agents {
    #[inline]
    pub fn one(a: usize) -> Agents {
        let mut s = Agents::default();
        s.insert(a);
        s
    }
    #[inline]
    pub fn insert(&mut self, a: usize) {
        self.0[a >> 6] |= 1 << (a & 63);
    }
    #[inline]
    pub fn remove(&mut self, a: usize) {
        self.0[a >> 6] &= !(1 << (a & 63));
    }
    #[inline]
    pub fn contains(&self, a: usize) -> bool {
        self.0[a >> 6] >> (a & 63) & 1 == 1
    }
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.0 == [0; 4]
    }
    /// The members, in increasing order.
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.0.iter().enumerate().flat_map(|(w, &bits)| {
            let mut b = bits;
            std::iter::from_fn(move || {
                if b == 0 {
                    return None;
                }
                let i = b.trailing_zeros() as usize;
                b &= b - 1;
                Some(w * 64 + i)
            })
        })
    }
}

/// No owner.
pub const NO_AGENT: u16 = u16::MAX;

/// Directory state of one line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Entry {
    /// Agents holding a copy.
    pub sharers: Agents,
    /// The core holding it modified/exclusive, or [`NO_AGENT`].
    pub owner: u16,
    /// Last core that wrote the line, and the bytes it wrote since it took
    /// ownership (one bit per line/64 bytes).
    pub last_writer: u16,
    pub write_mask: u64,
}

impl Entry {
    /// No sharers, no owner, no writer.
    pub const EMPTY: Entry = Entry {
        sharers: Agents([0; 4]),
        owner: NO_AGENT,
        last_writer: NO_AGENT,
        write_mask: 0,
    };
}

impl Default for Entry {
    fn default() -> Self {
        Entry::EMPTY
    }
}

/// Key of an empty slot (line numbers are addresses shifted right, never all ones).
const EMPTY: u64 = u64::MAX;

/// Lines that share a group of neighbouring slots (see [`Directory`]).
const GROUP_BITS: u32 = 3;

/// One slot: a line and its entry, one host cache line.
#[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize)]
#[repr(C, align(64))]
struct Slot {
    line: u64,
    e: Entry,
}

const EMPTY_SLOT: Slot = Slot {
    line: EMPTY,
    e: Entry::EMPTY,
};

/// The directory's entries: a linear-probing hash table from line number
/// to [`Entry`], at most half full, with backward-shift deletion (no
/// tombstones). A line's first probe is `group(line >> 3) * 8 + line % 8`
/// (Fibonacci hash of the group), so eight neighbouring lines occupy
/// neighbouring slots. Deterministic: the layout depends only on the
/// sequence of operations; never iterated into output.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Directory {
    slots: Vec<Slot>,
    mask: usize,
    /// log2 of the number of slots.
    bits: u32,
    len: usize,
}

impl Default for Directory {
    fn default() -> Self {
        Directory::with_bits(10)
    }
}

impl Directory {
    fn with_bits(bits: u32) -> Directory {
        Directory {
            slots: vec![EMPTY_SLOT; 1 << bits],
            mask: (1 << bits) - 1,
            bits,
            len: 0,
        }
    }

    /// A restored directory (a checkpoint's) is a well-formed table: a
    /// power-of-two size with its mask, at most half full (so every search
    /// meets an empty slot), its count right, and every sharer, owner and
    /// writer one of `agents`.
    pub fn well_formed(&self, agents: usize) -> bool {
        let n = self.slots.len();
        let agent = |a: u16| a == NO_AGENT || (a as usize) < agents;
        let used = self.slots.iter().filter(|s| s.line != EMPTY).count();
        (GROUP_BITS + 1..48).contains(&self.bits)
            && n == 1 << self.bits
            && self.mask == n - 1
            && used == self.len
            && 2 * used <= n
            && self.slots.iter().all(|s| {
                s.line == EMPTY
                    || s.e.sharers.iter().all(|a| a < agents)
                        && agent(s.e.owner)
                        && agent(s.e.last_writer)
            })
    }

    /// Lines with an entry.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The slot where the search for `line` starts.
    #[inline(always)]
    fn home(&self, line: u64) -> usize {
        let group = (line >> GROUP_BITS).wrapping_mul(0x9E37_79B9_7F4A_7C15)
            >> (64 - (self.bits - GROUP_BITS));
        ((group << GROUP_BITS) | (line & ((1 << GROUP_BITS) - 1))) as usize
    }

    /// Hints the host to fetch the slot where the search for `line` starts.
    #[inline(always)]
    pub fn prefetch(&self, line: u64) {
        traces::hint::prefetch(&self.slots[self.home(line)]);
    }

    /// The slot holding `line`.
    #[inline(always)]
    fn find(&self, line: u64) -> Option<usize> {
        let mut i = self.home(line);
        loop {
            let k = self.slots[i].line;
            if k == line {
                return Some(i);
            }
            if k == EMPTY {
                return None;
            }
            i = (i + 1) & self.mask;
        }
    }

    #[inline]
    pub fn get(&self, line: u64) -> Option<&Entry> {
        self.find(line).map(|i| &self.slots[i].e)
    }

    #[inline]
    pub fn get_mut(&mut self, line: u64) -> Option<&mut Entry> {
        self.find(line).map(|i| &mut self.slots[i].e)
    }

    /// The entry of `line`, or the default (no sharers, no owner, no writer).
    #[inline]
    pub fn copied(&self, line: u64) -> Entry {
        self.get(line).copied().unwrap_or_default()
    }

    /// The entry of `line`, inserted empty if absent.
    #[inline]
    pub fn entry(&mut self, line: u64) -> &mut Entry {
        if (self.len + 1) * 2 > self.slots.len() {
            self.grow();
        }
        let mut i = self.home(line);
        loop {
            let k = self.slots[i].line;
            if k == line {
                return &mut self.slots[i].e;
            }
            if k == EMPTY {
                self.len += 1;
                self.slots[i] = Slot {
                    line,
                    e: Entry::default(),
                };
                return &mut self.slots[i].e;
            }
            i = (i + 1) & self.mask;
        }
    }

    /// Removes `line`'s entry, if any.
    pub fn remove(&mut self, line: u64) {
        if let Some(i) = self.find(line) {
            self.remove_at(i);
        }
    }

    /// `agent` no longer holds `line`: it leaves the sharers (and the
    /// ownership); the entry goes when no agent holds the line, unless
    /// `keep(line)` (history worth keeping). One search.
    #[inline]
    pub fn release(&mut self, line: u64, agent: usize, keep: impl FnOnce(u64) -> bool) {
        let Some(i) = self.find(line) else {
            return;
        };
        let e = &mut self.slots[i].e;
        e.sharers.remove(agent);
        if e.owner as usize == agent {
            e.owner = NO_AGENT;
        }
        if e.sharers.is_empty() && e.owner == NO_AGENT && !keep(line) {
            self.remove_at(i);
        }
    }

    /// Empties slot `hole`; later entries of its probe run move back into it.
    fn remove_at(&mut self, mut hole: usize) {
        let mut j = hole;
        loop {
            j = (j + 1) & self.mask;
            let k = self.slots[j].line;
            if k == EMPTY {
                break;
            }
            // The entry at j may fill the hole if the hole lies on its probe
            // path: no further from j than its home is.
            let from_home = j.wrapping_sub(self.home(k)) & self.mask;
            let from_hole = j.wrapping_sub(hole) & self.mask;
            if from_home >= from_hole {
                self.slots[hole] = self.slots[j];
                hole = j;
            }
        }
        self.slots[hole] = EMPTY_SLOT;
        self.len -= 1;
    }

    #[cold]
    fn grow(&mut self) {
        let old = std::mem::replace(self, Directory::with_bits(self.bits + 1));
        for s in old.slots.iter().filter(|s| s.line != EMPTY) {
            *self.entry(s.line) = s.e;
        }
    }
}

#[cfg(test)]
mod tests {
    /// A grown directory is well formed for its agents and not for fewer;
    /// a wrong size, mask, count or a table with no empty slot is not.
    #[test]
    fn a_restored_directory_must_be_well_formed() {
        use super::*;
        let mut d = Directory::default();
        for line in 0..5000u64 {
            let e = d.entry(line * 3);
            e.sharers.insert((line % 4) as usize);
            e.owner = (line % 4) as u16;
        }
        assert!(d.well_formed(4));
        assert!(!d.well_formed(3), "a sharer past the agents");
        let mut bad = d.clone();
        bad.bits = 3;
        assert!(!bad.well_formed(4));
        let mut bad = d.clone();
        bad.mask = 7;
        assert!(!bad.well_formed(4));
        let mut bad = d.clone();
        bad.len += 1;
        assert!(!bad.well_formed(4));
        let mut full = Directory::with_bits(4);
        for (i, s) in full.slots.iter_mut().enumerate() {
            s.line = i as u64;
        }
        full.len = 16;
        assert!(
            !full.well_formed(4),
            "no empty slot: a search would not end"
        );
    }

    use super::*;
    use std::collections::BTreeMap;

    /// Random inserts, updates and removals against a BTreeMap, on keys
    /// chosen to collide (runs of neighbouring lines, strides that share a
    /// group hash) so that probe runs wrap, grow and shift back.
    #[test]
    fn directory_agrees_with_a_map() {
        let mut d = Directory::default();
        let mut m: BTreeMap<u64, Entry> = BTreeMap::new();
        let mut x = 0x1234_5678_9abc_def1u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut max_len = 0;
        for step in 0..400_000u64 {
            let r = next();
            // Few distinct keys early (dense runs), more later (growth).
            let span = if step < 200_000 { 3000 } else { 40_000 };
            let base = match r % 3 {
                0 => r >> 8 & 63,            // one dense run
                1 => (r >> 8) % span * 1024, // a large stride
                _ => (r >> 8) % span,
            };
            let line = base + 0x40_0000;
            match r >> 60 {
                0..=6 => {
                    let e = d.entry(line);
                    e.write_mask = e.write_mask.wrapping_add(step);
                    e.sharers.insert((step % 4) as usize);
                    let o = m.entry(line).or_default();
                    o.write_mask = o.write_mask.wrapping_add(step);
                    o.sharers.insert((step % 4) as usize);
                }
                7..=12 => {
                    d.remove(line);
                    m.remove(&line);
                }
                13 => {
                    let agent = (r >> 20 & 3) as usize;
                    let keep = |l: u64| l.is_multiple_of(5);
                    d.release(line, agent, keep);
                    if let Some(o) = m.get_mut(&line) {
                        o.sharers.remove(agent);
                        if o.owner as usize == agent {
                            o.owner = NO_AGENT;
                        }
                        if o.sharers.is_empty() && o.owner == NO_AGENT && !keep(line) {
                            m.remove(&line);
                        }
                    }
                }
                _ => {
                    if let Some(e) = d.get_mut(line) {
                        e.owner = (step % 4) as u16;
                    }
                    if let Some(o) = m.get_mut(&line) {
                        o.owner = (step % 4) as u16;
                    }
                }
            }
            assert_eq!(d.get(line), m.get(&line), "step {step}, line {line:#x}");
            assert_eq!(d.len(), m.len());
            max_len = max_len.max(d.len());
            if step % 50_000 == 0 {
                for (k, v) in &m {
                    assert_eq!(d.get(*k), Some(v), "step {step}, line {k:#x}");
                }
            }
        }
        for (k, v) in &m {
            assert_eq!(d.get(*k), Some(v));
        }
        assert!(max_len > 10_000, "the table grew several times ({max_len})");
        // Every entry reachable from its home: removals left no gap in a run.
        for (k, _) in m.clone() {
            d.remove(k);
        }
        assert!(d.is_empty() && d.slots.iter().all(|s| s.line == EMPTY));
    }

    #[test]
    fn agent_sets() {
        let mut s = Agents::default();
        for a in [0, 63, 64, 130, 255] {
            s.insert(a);
        }
        assert_eq!(s.iter().collect::<Vec<_>>(), vec![0, 63, 64, 130, 255]);
        s.remove(64);
        assert!(!s.contains(64) && s.contains(130));
        assert!(!s.is_empty());
        assert_eq!(Agents::one(7).iter().collect::<Vec<_>>(), vec![7]);
    }
}
