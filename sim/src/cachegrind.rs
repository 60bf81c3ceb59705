//! A cache model that follows Valgrind cachegrind's counting rules exactly.
//!
//! Rules (valgrind 3.19 `cg_sim.c` / `cg_main.c`, checked against
//! cachegrind by `tests/cachegrind_exact.rs`):
//! - I1 and D1 split; LL unified and looked up only on an L1 miss; no
//!   inclusion enforcement; no write-back traffic; write-allocate.
//! - True LRU: each set is an MRU-first list of block numbers; the tag is the
//!   whole block number (`addr >> log2(line)`); tags start as 0, so block 0
//!   looks resident at first, as in cachegrind.
//! - An access straddling two lines is one access that misses if either line
//!   misses; both lines are always looked up (state changes), in L1 and, on
//!   an L1 miss, in LL.
//! - `Modify` counts once, as a data read.
//! - Access sizes above the smallest line size are clamped to it
//!   (cachegrind does this for large dirty-helper accesses such as `xsave`).
//!
//! Layout: one flat `Vec<u64>` of tags per cache, `assoc` consecutive entries
//! per set, MRU first; a hit on the MRU way touches one word. Nothing is
//! allocated per access.

use serde::{Deserialize, Serialize};
use traces::record::Core;
use traces::{Access, Kind};

use crate::geometry::Geometry;

/// Cachegrind's nine cache events, with its names.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Events {
    /// Instruction fetches.
    #[serde(rename = "Ir")]
    pub ir: u64,
    /// I1 misses.
    #[serde(rename = "I1mr")]
    pub i1mr: u64,
    /// LL misses on instruction fetches.
    #[serde(rename = "ILmr")]
    pub ilmr: u64,
    /// Data reads (loads and modifies).
    #[serde(rename = "Dr")]
    pub dr: u64,
    /// Data writes.
    #[serde(rename = "Dw")]
    pub dw: u64,
    /// D1 read misses.
    #[serde(rename = "D1mr")]
    pub d1mr: u64,
    /// D1 write misses.
    #[serde(rename = "D1mw")]
    pub d1mw: u64,
    /// LL misses on data reads.
    #[serde(rename = "DLmr")]
    pub dlmr: u64,
    /// LL misses on data writes.
    #[serde(rename = "DLmw")]
    pub dlmw: u64,
}

impl Events {
    /// Total accesses counted.
    pub fn accesses(&self) -> u64 {
        self.ir + self.dr + self.dw
    }
}

/// True-LRU set-associative tag store, MRU first.
#[derive(Clone, Debug)]
pub struct LruSets {
    tags: Vec<u64>,
    assoc: usize,
    set_mask: u64,
    line_bits: u32,
}

impl LruSets {
    /// Empty cache (all tags 0, as cachegrind starts).
    pub fn new(g: &Geometry) -> LruSets {
        LruSets {
            tags: vec![0; (g.sets() * g.assoc as u64) as usize],
            assoc: g.assoc as usize,
            set_mask: g.sets() - 1,
            line_bits: g.line_bits(),
        }
    }

    /// Looks up one block, updating LRU order; true on a miss.
    #[inline(always)]
    pub fn set_ref(&mut self, block: u64) -> bool {
        let base = (block & self.set_mask) as usize * self.assoc;
        let set = &mut self.tags[base..base + self.assoc];
        if set[0] == block {
            return false;
        }
        for i in 1..set.len() {
            if set[i] == block {
                set.copy_within(0..i, 1);
                set[0] = block;
                return false;
            }
        }
        set.copy_within(0..set.len() - 1, 1);
        set[0] = block;
        true
    }

    /// Looks up an access of `size` bytes at `addr`; true on a miss.
    /// `size` must not exceed the line size.
    #[inline(always)]
    pub fn access(&mut self, addr: u64, size: u64) -> bool {
        let (b1, b2) = self.blocks(addr, size);
        self.access_blocks(b1, b2)
    }

    /// First and last block an access of `size` bytes at `addr` touches.
    #[inline(always)]
    pub fn blocks(&self, addr: u64, size: u64) -> (u64, u64) {
        (
            addr >> self.line_bits,
            // Wrapping: a size of 0 (a mapped file changed after its
            // check) must not panic in a debug build.
            addr.wrapping_add(size.wrapping_sub(1)) >> self.line_bits,
        )
    }

    /// Looks up the blocks `b1..=b2` of one access (equal, or adjacent when
    /// it straddles); true if either misses.
    #[inline(always)]
    pub fn access_blocks(&mut self, b1: u64, b2: u64) -> bool {
        if b1 == b2 {
            self.set_ref(b1)
        } else {
            let m1 = self.set_ref(b1);
            let m2 = self.set_ref(b2);
            m1 | m2
        }
    }
}

/// Geometry of the three cachegrind caches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CgConfig {
    #[serde(rename = "I1")]
    pub i1: Geometry,
    #[serde(rename = "D1")]
    pub d1: Geometry,
    #[serde(rename = "LL")]
    pub ll: Geometry,
}

impl Default for CgConfig {
    /// Cachegrind's own defaults on x86 when it cannot read the host's
    /// caches: I1 and D1 65536,2,64, LL 262144,8,64. (Cachegrind normally
    /// reads CPUID; numasim does not, so results never depend on the host.)
    fn default() -> Self {
        CgConfig {
            i1: Geometry {
                size: 65536,
                assoc: 2,
                line: 64,
            },
            d1: Geometry {
                size: 65536,
                assoc: 2,
                line: 64,
            },
            ll: Geometry {
                size: 262144,
                assoc: 8,
                line: 64,
            },
        }
    }
}

/// The cachegrind-compatible simulator. Counters are per class:
/// 0 = instruction fetches, 1 = data reads (loads and modifies), 2 = data
/// writes.
pub struct Cachegrind {
    l1: [LruSets; 2],
    ll: LruSets,
    min_line: u64,
    /// refs, L1 misses, LL misses per class.
    refs: [u64; 3],
    l1_miss: [u64; 3],
    ll_miss: [u64; 3],
    /// The last block the previous instruction fetch looked up in I1 (its
    /// second block if it straddled), `u64::MAX` before any (never a block:
    /// lines are at least 16 bytes). It is the MRU block
    /// of its set, since only fetches touch I1 and every lookup leaves its
    /// block MRU. A fetch within that block alone is a hit that changes
    /// nothing, so it skips the lookup.
    last_i: u64,
}

/// How far ahead [`Cachegrind::run`] asks for the batch's records: 512
/// of 16 bytes. 256 to 2 048 ran alike, 64 and 128 slower (`perf stat -r 8`,
/// 2026-12-04).
const PREFETCH_RECORDS: usize = 512;

impl Cachegrind {
    pub fn new(cfg: &CgConfig) -> Cachegrind {
        Cachegrind {
            l1: [LruSets::new(&cfg.i1), LruSets::new(&cfg.d1)],
            ll: LruSets::new(&cfg.ll),
            min_line: cfg.i1.line.min(cfg.d1.line).min(cfg.ll.line),
            refs: [0; 3],
            l1_miss: [0; 3],
            ll_miss: [0; 3],
            last_i: u64::MAX,
        }
    }

    /// Simulates one record.
    pub fn access(&mut self, r: &Access) {
        self.run(std::slice::from_ref(r));
    }

    /// Simulates a batch. Reference counts are kept in locals (registers)
    /// for the batch; each kind has its own inlined lookup so the branch
    /// predictor learns the instruction and data hit patterns separately.
    /// Most fetches fall in the block the previous fetch looked up: those
    /// are settled by one compare (see `last_i`).
    ///
    /// Generic over the record core's form: decoded [`Access`] values or
    /// cores read in place from a mapped file ([`traces::record::RawCore`]).
    pub fn run<C: Core>(&mut self, batch: &[C]) {
        let (mut ir, mut dr, mut dw) = (0u64, 0u64, 0u64);
        let min_line = self.min_line;
        let mut last_i = self.last_i;
        let [i1, d1] = &mut self.l1;
        for (q, quad) in batch.chunks(4).enumerate() {
            // A batch decoded on the other core sits in that core's cache:
            // asked for 8 KiB ahead, a host line (four records) at a time,
            // its lines arrive while the records before them are simulated
            // (without, the default two-thread replay ran slower than
            // `--single-thread`: docs/performance.md).
            if let Some(ahead) = batch.get(q * 4 + PREFETCH_RECORDS) {
                traces::hint::prefetch(ahead);
            }
            for r in quad {
                let r = r.access();
                let size = (r.size as u64).min(min_line);
                match r.kind {
                    Kind::IFetch => {
                        ir += 1;
                        let (b1, b2) = i1.blocks(r.addr, size);
                        if b1 == last_i && b2 == last_i {
                            continue;
                        }
                        last_i = b2;
                        if i1.access_blocks(b1, b2) {
                            self.l1_miss[0] += 1;
                            if self.ll.access(r.addr, size) {
                                self.ll_miss[0] += 1;
                            }
                        }
                    }
                    Kind::Load | Kind::Modify => {
                        dr += 1;
                        if d1.access(r.addr, size) {
                            self.l1_miss[1] += 1;
                            if self.ll.access(r.addr, size) {
                                self.ll_miss[1] += 1;
                            }
                        }
                    }
                    Kind::Store => {
                        dw += 1;
                        if d1.access(r.addr, size) {
                            self.l1_miss[2] += 1;
                            if self.ll.access(r.addr, size) {
                                self.ll_miss[2] += 1;
                            }
                        }
                    }
                }
            }
        }
        self.refs[0] += ir;
        self.refs[1] += dr;
        self.refs[2] += dw;
        self.last_i = last_i;
    }

    /// Counts so far.
    pub fn events(&self) -> Events {
        Events {
            ir: self.refs[0],
            i1mr: self.l1_miss[0],
            ilmr: self.ll_miss[0],
            dr: self.refs[1],
            d1mr: self.l1_miss[1],
            dlmr: self.ll_miss[1],
            dw: self.refs[2],
            d1mw: self.l1_miss[2],
            dlmw: self.ll_miss[2],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(size: u64, assoc: u32, line: u64) -> Geometry {
        Geometry::new(size, assoc, line).unwrap()
    }

    #[test]
    fn lru_two_way_hand_sequence() {
        // One set, 2 ways, 64-byte lines: blocks A=1, B=2, C=3.
        let mut c = LruSets::new(&g(128, 2, 64));
        let seq = [
            (1, true),
            (2, true),
            (1, false),
            (3, true),
            (2, true),
            (1, true),
            (3, true),
        ];
        for (i, (b, miss)) in seq.iter().enumerate() {
            assert_eq!(c.set_ref(*b), *miss, "step {i} block {b}");
        }
    }

    #[test]
    fn block_zero_looks_resident_like_cachegrind() {
        let mut c = LruSets::new(&g(1024, 2, 64));
        assert!(!c.access(0, 8));
        assert!(c.access(64, 8));
    }

    #[test]
    fn straddle_is_one_access_missing_if_either_line_misses() {
        let cfg = CgConfig {
            i1: g(1024, 2, 64),
            d1: g(1024, 2, 64),
            ll: g(4096, 4, 64),
        };
        let mut cg = Cachegrind::new(&cfg);
        cg.access(&Access::new(0, Kind::Load, 0x1000, 8)); // miss, line 0x40
        cg.access(&Access::new(0, Kind::Load, 0x103c, 8)); // straddles 0x40/0x41: miss (0x41)
        cg.access(&Access::new(0, Kind::Load, 0x1040, 8)); // hit
        cg.access(&Access::new(0, Kind::Store, 0x1038, 8)); // within line 0x40: hit
        cg.access(&Access::new(0, Kind::Modify, 0x2000, 4)); // miss, counted as a read
        assert_eq!(
            cg.events(),
            Events {
                dr: 4,
                dw: 1,
                d1mr: 3,
                dlmr: 3,
                ..Events::default()
            }
        );
    }

    /// Runs fetches (and the data accesses between them) one record per
    /// `run` and all in one `run`; both must count alike (the remembered
    /// fetch block carries across batches).
    fn fetch_events(cfg: &CgConfig, seq: &[Access]) -> Events {
        let mut one = Cachegrind::new(cfg);
        for a in seq {
            one.access(a);
        }
        let mut all = Cachegrind::new(cfg);
        all.run(seq);
        assert_eq!(one.events(), all.events());
        all.events()
    }

    /// Cores read in place (the native format's bytes, written here field
    /// by field) simulate as the decoded records do, over every kind,
    /// straddling sizes and a working set that misses at both levels.
    #[test]
    fn cores_in_place_give_the_decoded_records_events() {
        let cfg = CgConfig {
            i1: g(1024, 2, 64),
            d1: g(2048, 4, 64),
            ll: g(8192, 4, 64),
        };
        let mut x = 7u64;
        let mut next = || {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
            x >> 16
        };
        let (mut decoded, mut raw) = (Vec::new(), Vec::new());
        for i in 0..20_000u32 {
            let (r, a) = (next(), next() % 65536);
            let kind = Kind::ALL[(r % 4) as usize];
            let size = 1 + (r >> 8) as u16 % 16;
            let access = Access::new(i % 3, kind, a, size);
            let mut c = [0u8; 16];
            c[..8].copy_from_slice(&a.to_le_bytes());
            c[8..12].copy_from_slice(&(i % 3).to_le_bytes());
            c[12..14].copy_from_slice(&size.to_le_bytes());
            c[14] = kind as u8;
            decoded.push(access);
            raw.push(c);
        }
        let mut one = Cachegrind::new(&cfg);
        one.run(&decoded);
        let mut other = Cachegrind::new(&cfg);
        other.run(&raw);
        let e = one.events();
        assert_eq!(e, other.events());
        assert!(
            e.i1mr > 0 && e.ilmr > 0 && e.d1mr > 0 && e.d1mw > 0 && e.dlmr > 0 && e.dlmw > 0,
            "{e:?}"
        );
    }

    #[test]
    fn fetches_in_the_last_fetched_block_hit_and_others_look_up() {
        let fetch = |addr| Access::new(0, Kind::IFetch, addr, 4);
        // I1 direct-mapped, 2 sets of one 64-byte line: blocks 0x40 and 0x42
        // share set 0, 0x41 is in set 1. Hand-counted:
        let cfg = CgConfig {
            i1: g(128, 1, 64),
            d1: g(1024, 2, 64),
            ll: g(65536, 4, 64),
        };
        let seq = [
            fetch(0x1000), // block 0x40: I1 miss, LL miss
            fetch(0x1004), // same block: hit
            // A load between fetches leaves I1 alone (D1 miss, LL miss: 0x42 now in LL).
            Access::new(0, Kind::Load, 0x1080, 8),
            fetch(0x103e), // straddles 0x40 (hit) / 0x41 (I1 miss, LL miss): a miss
            fetch(0x1080), // 0x42 evicts 0x40 from set 0: I1 miss, LL hit
            fetch(0x1000), // 0x40 again: I1 miss, LL hit
            fetch(0x1004), // hit
        ];
        let want = Events {
            ir: 6,
            i1mr: 4,
            ilmr: 2,
            dr: 1,
            d1mr: 1,
            dlmr: 1,
            ..Events::default()
        };
        assert_eq!(fetch_events(&cfg, &seq), want);

        // I1 with one set of 2 ways: after a straddle the *second* block is
        // MRU; a fetch in the first must still reorder the set.
        let cfg = CgConfig {
            i1: g(128, 2, 64),
            ..cfg
        };
        let seq = [
            fetch(0x103e), // 0x40, 0x41 both miss: one I1 miss, one LL miss; set [0x41, 0x40]
            fetch(0x1000), // 0x40 hits and becomes MRU: [0x40, 0x41]
            fetch(0x1080), // 0x42 misses, evicts LRU 0x41: [0x42, 0x40]
            fetch(0x1040), // 0x41 misses (LL hit)
        ];
        let want = Events {
            ir: 4,
            i1mr: 3,
            ilmr: 2,
            ..Events::default()
        };
        assert_eq!(fetch_events(&cfg, &seq), want);
    }

    #[test]
    fn sizes_clamp_to_smallest_line() {
        // A 512-byte xsave at a line boundary counts as one line (clamped to 64).
        let cfg = CgConfig::default();
        let mut cg = Cachegrind::new(&cfg);
        cg.access(&Access::new(0, Kind::Store, 0x10000, 512));
        cg.access(&Access::new(0, Kind::Load, 0x10040, 8));
        assert_eq!(cg.events().d1mw, 1);
        assert_eq!(cg.events().d1mr, 1, "the second line was never touched");
    }
}
