//! Physical frames: which physical page holds each virtual page.
//!
//! A real machine's L2 and LLC are indexed by physical address, and the
//! operating system (in a VM, the hypervisor too) hands out frames in an
//! order the program does not see. The model used to index every cache by
//! the trace's virtual address, which spreads any contiguous footprint
//! perfectly over the sets: no conflict misses before a level is full,
//! and total conflicts when regions sit a power of two apart. With
//! `frames = "random"` each `page_size` page of virtual address space gets
//! a pseudo-random frame instead, as ChampSim's virtual memory does: a
//! footprint then fills the sets unevenly, as on the host (`docs/machine.md`).
//!
//! The mapping is a fixed bijection on page numbers (xor-shifts and odd
//! multiplies modulo 2^w, each invertible), so it needs no table, no
//! memory and no state to save: two virtual pages never share a frame,
//! the offset within a page is kept, and the same trace always gets the
//! same frames.

use serde::{Deserialize, Serialize};

/// How virtual pages map to physical frames.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FrameMapping {
    /// Physical = virtual (every cache indexed by the trace's address).
    #[default]
    Identity,
    /// A pseudo-random frame for each page (a fixed bijection).
    Random,
}

/// The mapping for one machine, ready to apply to addresses and lines.
#[derive(Clone, Copy, Debug)]
pub struct Frames {
    random: bool,
    page_bits: u32,
    /// Bits of a page number (64 − `page_bits`).
    width: u32,
    /// The multipliers' inverses (mod 2^64, so mod 2^`width` too).
    inv1: u64,
    inv2: u64,
}

/// The inverse of odd `m` modulo 2^64 (Newton's iteration doubles the
/// correct low bits each step: 3, 6, ..., 96).
fn inverse(m: u64) -> u64 {
    let mut x = m;
    for _ in 0..5 {
        x = x.wrapping_mul(2u64.wrapping_sub(m.wrapping_mul(x)));
    }
    x
}

/// The inverse of `x ^= x >> s` on `w`-bit values.
fn unshift(y: u64, s: u32, w: u32) -> u64 {
    let mut x = y;
    for _ in 0..w.div_ceil(s) {
        x = y ^ (x >> s);
    }
    x
}

const KEY: u64 = 0x5851_f42d_4c95_7f2d;
const MUL1: u64 = 0xbf58_476d_1ce4_e5b9;
const MUL2: u64 = 0x94d0_49bb_1331_11eb;

impl Frames {
    /// `page_size` must be a power of two (checked with the machine).
    pub fn new(mapping: FrameMapping, page_size: u64) -> Frames {
        let page_bits = page_size.max(1).trailing_zeros().min(63);
        Frames {
            random: mapping == FrameMapping::Random,
            page_bits,
            width: 64 - page_bits,
            inv1: inverse(MUL1),
            inv2: inverse(MUL2),
        }
    }

    fn mask(&self) -> u64 {
        if self.width >= 64 {
            u64::MAX
        } else {
            (1u64 << self.width) - 1
        }
    }

    fn shifts(&self) -> (u32, u32) {
        (self.width.div_ceil(2).max(1), (self.width / 3).max(1))
    }

    /// Whether addresses change at all.
    #[inline(always)]
    pub fn is_identity(&self) -> bool {
        !self.random
    }

    /// The frame of virtual page number `vpn` (a bijection on `width` bits).
    #[inline(always)]
    fn frame(&self, vpn: u64) -> u64 {
        let mask = self.mask();
        let (s1, s2) = self.shifts();
        let mut x = (vpn ^ KEY) & mask;
        x ^= x >> s1;
        x = x.wrapping_mul(MUL1) & mask;
        x ^= x >> s2;
        x = x.wrapping_mul(MUL2) & mask;
        x ^ (x >> s1)
    }

    /// The virtual page whose frame is `frame` (the inverse of
    /// [`Frames::addr`] on page numbers): page placement is decided per
    /// virtual page, as the kernel places a program's pages.
    #[inline]
    pub fn page_of_frame(&self, frame: u64) -> u64 {
        if !self.random {
            return frame;
        }
        let (mask, w) = (self.mask(), self.width);
        let (s1, s2) = self.shifts();
        let mut x = unshift(frame & mask, s1, w);
        x = x.wrapping_mul(self.inv2) & mask;
        x = unshift(x, s2, w);
        x = x.wrapping_mul(self.inv1) & mask;
        (unshift(x, s1, w) ^ KEY) & mask
    }

    /// The physical address of virtual address `addr`.
    #[inline(always)]
    pub fn addr(&self, addr: u64) -> u64 {
        if !self.random {
            return addr;
        }
        let off = addr & ((1u64 << self.page_bits) - 1);
        (self.frame(addr >> self.page_bits) << self.page_bits) | off
    }

    /// The physical line of virtual line `line` (lines of `line_bits`,
    /// never larger than a page). A number past the address space (a
    /// prefetcher's target that wrapped) stays as it is, out of range, as
    /// it does without frames.
    #[inline(always)]
    pub fn line(&self, line: u64, line_bits: u32) -> u64 {
        if !self.random || line >> (64 - line_bits) != 0 {
            return line;
        }
        self.addr(line << line_bits) >> line_bits
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    /// A line number past the address space (a prefetch target that
    /// wrapped below 0) is not folded onto a real frame.
    #[test]
    fn lines_past_the_address_space_stay_there() {
        let f = Frames::new(FrameMapping::Random, 4096);
        assert_eq!(f.line(u64::MAX, 6), u64::MAX);
        assert_eq!(f.line(1 << 58, 6), 1 << 58);
        assert_ne!(f.line((1 << 58) - 1, 6), (1 << 58) - 1);
    }

    #[test]
    fn identity_changes_nothing() {
        let f = Frames::new(FrameMapping::Identity, 4096);
        for a in [0u64, 1, 4095, 4096, 0xdead_beef, u64::MAX] {
            assert_eq!(f.addr(a), a);
        }
        assert_eq!(f.line(12345, 6), 12345);
    }

    #[test]
    fn random_keeps_offsets_and_never_shares_a_frame() {
        for page in [64u64, 4096, 2 << 20] {
            let f = Frames::new(FrameMapping::Random, page);
            let mut seen = HashSet::new();
            // Contiguous pages, pages a power of two apart, and pages at
            // the top of the address space.
            let pages = (0..20_000u64)
                .chain((0..40).map(|k| 1u64 << k))
                .chain((1..2000).map(|k| (u64::MAX / page) - k));
            for p in pages {
                let v = p * page + page / 2 + 3;
                let ph = f.addr(v);
                assert_eq!(ph % page, v % page, "offset kept");
                assert_eq!(f.addr(p * page), ph - ph % page, "one frame a page");
                seen.insert(p);
            }
            let frames: HashSet<u64> = seen.iter().map(|&p| f.addr(p * page) / page).collect();
            assert_eq!(
                frames.len(),
                seen.len(),
                "page {page}: two pages share a frame"
            );
            for &p in &seen {
                assert_eq!(f.page_of_frame(f.addr(p * page) / page), p, "page {page}");
            }
        }
    }

    /// 512 contiguous pages over the 32 page colours of a 2 MiB, 16-way
    /// L2 of 64-byte lines (2 048 sets): the identity puts exactly 16 in
    /// each colour; random frames spread them binomially (mean 16, sd
    /// about 3.9), so some colours get more than 16 pages.
    #[test]
    fn random_frames_fill_colours_unevenly() {
        let f = Frames::new(FrameMapping::Random, 4096);
        let mut colours = [0u32; 32];
        for p in 0..512u64 {
            colours[((f.addr(p * 4096) >> 12) % 32) as usize] += 1;
        }
        let over = colours.iter().filter(|&&c| c > 16).count();
        let max = *colours.iter().max().unwrap();
        assert!(over >= 5 && max >= 20, "colours {colours:?}");
        assert_eq!(colours.iter().sum::<u32>(), 512);
    }
}
