//! The coherence directory: for each line held by some cache, which caching
//! agents hold it and whether one of them owns it modified (MESI).
//!
//! Agents are numbered: cores `0..C`, then one per node LLC `C..C+N`; a
//! 256-bit set holds them. Entries exist only for lines some agent holds
//! (plus the last writer, for false-sharing detection), in a hash map keyed
//! by line number with a multiplicative hash — lookups happen only on
//! private-cache misses and on writes to clean lines.

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

/// A set of up to 256 agents.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
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
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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

impl Default for Entry {
    fn default() -> Self {
        Entry {
            sharers: Agents::default(),
            owner: NO_AGENT,
            last_writer: NO_AGENT,
            write_mask: 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
