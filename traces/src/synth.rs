//! Seeded synthetic trace generators.
//!
//! Every generator is a [`RecordSource`] driven by a ChaCha8 stream seeded
//! from a `u64`, so the same configuration and seed give the same records on
//! any machine. Memory is bounded by the footprint (pointer chase and Zipf
//! keep one permutation entry per line), never by the record count.
//!
//! Patterns (`threads` interleave round-robin, one record each):
//! - `sequential`: each thread walks its own region `size` bytes at a time,
//!   wrapping at the footprint;
//! - `stride`: as sequential, stepping `stride` bytes (with `modular`, the
//!   offset wraps modulo the footprint instead of restarting at 0, so a
//!   stride of an odd number of lines over a power-of-two footprint visits
//!   every line once per pass; `backward` mirrors the walk from the
//!   footprint's end, as for `sequential`);
//! - `random`: uniformly random line-aligned addresses over a footprint
//!   shared by all threads;
//! - `chase`: pointer chase — one random cycle through every line of the
//!   footprint (Sattolo's algorithm), each thread starting at its own point,
//!   as lmbench's `lat_mem_rd` does;
//! - `zipf`: lines of a shared footprint drawn with Zipf(`zipf_s`)
//!   popularity; ranks are scattered over the footprint by a random
//!   permutation so the hot set is not contiguous;
//! - `interleaved`: `streams` streams stepping `stride` bytes, each over
//!   its share of the thread's footprint, one access of each in turn;
//! - `gapped`: a stream stepping `stride` bytes that, after a step, skips
//!   1..=`skip_lines` further lines (uniform) with probability `skip_prob`.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Zipf};

use crate::error::{Param, Problem, Result, TraceError};
use crate::record::{BATCH, Fields};
use crate::record::{Batch, Kind, Record};
use crate::source::RecordSource;

/// Line granularity of the random, chase and zipf patterns.
pub const LINE: u64 = 64;

/// An address pattern.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Pattern {
    Sequential,
    Stride,
    Random,
    Chase,
    Zipf,
    /// Threads in pairs over a shared ring of lines: the even thread stores
    /// to a line, the odd one then loads it (each load is a cache-to-cache
    /// transfer of a modified line).
    ProducerConsumer,
    /// Every thread stores to its own `size`-byte slot of the same lines
    /// (false sharing: no byte is shared, every line is).
    FalseSharing,
    /// Several strided streams in one thread, one access of each in turn.
    Interleaved,
    /// A strided stream with random forward skips.
    Gapped,
}

impl Pattern {
    /// Names accepted on the command line.
    pub const NAMES: [(&'static str, Pattern); 9] = [
        ("sequential", Pattern::Sequential),
        ("stride", Pattern::Stride),
        ("random", Pattern::Random),
        ("chase", Pattern::Chase),
        ("zipf", Pattern::Zipf),
        ("producer-consumer", Pattern::ProducerConsumer),
        ("false-sharing", Pattern::FalseSharing),
        ("interleaved", Pattern::Interleaved),
        ("gapped", Pattern::Gapped),
    ];

    /// Parses a pattern name.
    pub fn from_name(s: &str) -> Option<Pattern> {
        Pattern::NAMES
            .iter()
            .find(|(n, _)| *n == s)
            .map(|(_, p)| *p)
    }
}

/// What to generate.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct GenConfig {
    pub pattern: Pattern,
    /// Records to produce.
    pub count: u64,
    /// Bytes of address space the pattern covers (per thread for sequential/stride).
    pub footprint: u64,
    /// Bytes per access.
    pub size: u16,
    /// Step for `stride`.
    pub stride: u64,
    /// Threads, interleaved round-robin.
    pub threads: u32,
    /// Probability an access is a store.
    pub write_ratio: f64,
    /// Zipf exponent for `zipf`.
    pub zipf_s: f64,
    /// First address of the footprint.
    pub base: u64,
    /// Compute gap (ns) to attach to every record, if any.
    pub gap_ns: Option<u64>,
    /// Open-loop Poisson issue: each thread issues at this mean rate
    /// (accesses per µs), exponential gaps, stamped as `time_ns`. Exclusive
    /// with `gap_ns`.
    #[serde(default)]
    pub rate_per_us: Option<f64>,
    /// `stride`: wrap the offset modulo the footprint.
    #[serde(default)]
    pub modular: bool,
    /// `sequential` / `stride`: walk from the footprint's end downwards
    /// (the same offsets, mirrored). Written only when set, so a forward
    /// trace's header is what it was before the field existed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub backward: bool,
    /// `interleaved`: streams per thread.
    #[serde(default = "default_streams")]
    pub streams: u32,
    /// `gapped`: most lines one skip jumps over.
    #[serde(default = "default_skip_lines")]
    pub skip_lines: u64,
    /// `gapped`: probability a step is followed by a skip.
    #[serde(default = "default_skip_prob")]
    pub skip_prob: f64,
    pub seed: u64,
}

fn default_streams() -> u32 {
    2
}
fn default_skip_lines() -> u64 {
    16
}
fn default_skip_prob() -> f64 {
    0.25
}

impl Default for GenConfig {
    fn default() -> Self {
        GenConfig {
            pattern: Pattern::Sequential,
            count: 1_000_000,
            footprint: 64 << 20,
            size: 8,
            stride: 64,
            threads: 1,
            write_ratio: 0.0,
            zipf_s: 1.0,
            base: 0x1000_0000,
            gap_ns: None,
            rate_per_us: None,
            modular: false,
            backward: false,
            streams: default_streams(),
            skip_lines: default_skip_lines(),
            skip_prob: default_skip_prob(),
            seed: 1,
        }
    }
}

/// The generator source.
pub struct Generator {
    cfg: GenConfig,
    rng: ChaCha8Rng,
    produced: u64,
    lines: u64,
    /// Per-thread cursor: byte offset (sequential/stride) or line (chase).
    cursor: Vec<u64>,
    /// Chase: next line of each line; zipf: line of each rank.
    perm: Vec<u32>,
    zipf: Option<Zipf<f64>>,
    /// Open loop: per-thread clock (ns, fractional) and a separate stream for gaps.
    clock: Vec<f64>,
    time_rng: ChaCha8Rng,
}

fn bad(p: Param) -> TraceError {
    TraceError::at_offset(0, 0, Problem::Param(p))
}

impl Generator {
    /// Checks the configuration and prepares the pattern's state.
    pub fn new(cfg: GenConfig) -> Result<Generator> {
        if cfg.threads == 0 {
            return Err(bad(Param::Zero("threads")));
        }
        if cfg.size == 0 {
            return Err(bad(Param::Zero("size")));
        }
        if !(0.0..=1.0).contains(&cfg.write_ratio) {
            return Err(bad(Param::WriteRatio(cfg.write_ratio)));
        }
        let lines = cfg.footprint / LINE;
        if lines == 0 {
            return Err(bad(Param::FootprintSmall {
                footprint: cfg.footprint,
                line: LINE,
            }));
        }
        if matches!(cfg.pattern, Pattern::Chase | Pattern::Zipf) && lines > u32::MAX as u64 {
            return Err(bad(Param::FootprintLarge));
        }
        if matches!(
            cfg.pattern,
            Pattern::Stride | Pattern::Interleaved | Pattern::Gapped
        ) && cfg.stride == 0
        {
            return Err(bad(Param::Zero("stride")));
        }
        if cfg.pattern == Pattern::Interleaved
            && (cfg.streams == 0 || cfg.footprint / cfg.streams as u64 <= cfg.stride)
        {
            return Err(bad(Param::Interleaved {
                streams: cfg.streams,
                footprint: cfg.footprint,
            }));
        }
        if cfg.pattern == Pattern::Gapped
            && (!(0.0..=1.0).contains(&cfg.skip_prob) || cfg.skip_lines == 0)
        {
            return Err(bad(Param::Gapped {
                prob: cfg.skip_prob,
                lines: cfg.skip_lines,
            }));
        }
        if cfg.backward && !matches!(cfg.pattern, Pattern::Sequential | Pattern::Stride) {
            let name = Pattern::NAMES
                .iter()
                .find(|(_, p)| *p == cfg.pattern)
                .map_or("?", |(n, _)| n);
            return Err(bad(Param::Backward(name)));
        }
        if cfg.backward && cfg.size as u64 > cfg.footprint {
            return Err(bad(Param::BackwardSize {
                size: cfg.size,
                footprint: cfg.footprint,
            }));
        }
        if cfg.pattern == Pattern::FalseSharing && cfg.threads as u64 * cfg.size as u64 > LINE {
            return Err(bad(Param::FalseSharing {
                threads: cfg.threads,
                size: cfg.size,
                line: LINE,
            }));
        }
        if let Some(g) = cfg.gap_ns {
            crate::horizon::check("gap", g).map_err(|p| TraceError::at_offset(0, 0, p.into()))?;
        }
        if let Some(r) = cfg.rate_per_us {
            if !(r.is_finite() && r > 0.0) {
                return Err(bad(Param::Rate(r)));
            }
            if cfg.gap_ns.is_some() {
                return Err(bad(Param::GapAndRate));
            }
        }
        let mut rng = ChaCha8Rng::seed_from_u64(cfg.seed);
        let mut perm = Vec::new();
        let per_thread = if cfg.pattern == Pattern::Interleaved {
            cfg.streams as usize + 1
        } else {
            1
        };
        let mut cursor = vec![0u64; cfg.threads as usize * per_thread];
        let mut zipf = None;
        match cfg.pattern {
            Pattern::Chase => {
                // Sattolo: a uniformly random single cycle over all lines.
                let mut order: Vec<u32> = (0..lines as u32).collect();
                for i in (1..order.len()).rev() {
                    let j = rng.random_range(0..i);
                    order.swap(i, j);
                }
                perm = vec![0u32; lines as usize];
                for w in 0..order.len() {
                    perm[order[w] as usize] = order[(w + 1) % order.len()];
                }
                for (t, c) in cursor.iter_mut().enumerate() {
                    *c = order[(t * order.len() / cfg.threads as usize) % order.len()] as u64;
                }
            }
            Pattern::Zipf => {
                if cfg.zipf_s < 0.0 {
                    return Err(bad(Param::ZipfExponent(cfg.zipf_s)));
                }
                let mut order: Vec<u32> = (0..lines as u32).collect();
                for i in (1..order.len()).rev() {
                    let j = rng.random_range(0..=i);
                    order.swap(i, j);
                }
                perm = order;
                zipf = Some(Zipf::new(lines as f64, cfg.zipf_s).map_err(|e| bad(Param::Zipf(e)))?);
            }
            _ => {}
        }
        let threads = cfg.threads as usize;
        let time_rng = ChaCha8Rng::seed_from_u64(cfg.seed ^ 0x7431_6d65);
        Ok(Generator {
            cfg,
            rng,
            produced: 0,
            lines,
            cursor,
            perm,
            zipf,
            clock: vec![0.0; threads],
            time_rng,
        })
    }

    #[inline]
    fn next_addr(&mut self, t: usize) -> u64 {
        let c = &self.cfg;
        match c.pattern {
            Pattern::Sequential | Pattern::Stride => {
                let step = if c.pattern == Pattern::Sequential {
                    c.size as u64
                } else {
                    c.stride
                };
                let off = self.cursor[t];
                let mut next = off + step;
                if c.modular && c.pattern == Pattern::Stride {
                    next %= c.footprint;
                    if next + c.size as u64 > c.footprint {
                        next = 0;
                    }
                } else if next + c.size as u64 > c.footprint {
                    next = 0;
                }
                self.cursor[t] = next;
                // Backward: the offset mirrored, so the access ends where
                // the forward one would start, counted from the end.
                let at = if c.backward {
                    c.footprint - c.size as u64 - off
                } else {
                    off
                };
                c.base + t as u64 * c.footprint + at
            }
            Pattern::Interleaved => {
                // Per thread: the turn, then each stream's offset in its region.
                let n = c.streams as usize;
                let at = t * (n + 1);
                let k = self.cursor[at] as usize;
                self.cursor[at] = ((k + 1) % n) as u64;
                let region = c.footprint / n as u64;
                let off = self.cursor[at + 1 + k];
                let next = off + c.stride;
                self.cursor[at + 1 + k] = if next + c.size as u64 > region {
                    0
                } else {
                    next
                };
                c.base + t as u64 * c.footprint + k as u64 * region + off
            }
            Pattern::Gapped => {
                let off = self.cursor[t];
                let mut next = off + c.stride;
                if self.rng.random_bool(c.skip_prob) {
                    next += self.rng.random_range(1..=c.skip_lines) * LINE;
                }
                self.cursor[t] = if next + c.size as u64 > c.footprint {
                    0
                } else {
                    next
                };
                c.base + t as u64 * c.footprint + off
            }
            Pattern::Random => c.base + self.rng.random_range(0..self.lines) * LINE,
            Pattern::Chase => {
                let line = self.cursor[t];
                self.cursor[t] = self.perm[line as usize] as u64;
                c.base + line * LINE
            }
            Pattern::Zipf => {
                let z = self.zipf.as_ref().expect("zipf state");
                let rank = z.sample(&mut self.rng) as u64; // 1..=lines
                let rank = rank.clamp(1, self.lines) - 1;
                c.base + self.perm[rank as usize] as u64 * LINE
            }
            Pattern::ProducerConsumer => {
                // The pair's ring; producer and consumer share one cursor
                // (kept by the producer, read by the consumer after it).
                let pair = t / 2;
                let line = self.cursor[pair * 2];
                if t % 2 == 1 || t + 1 == self.cursor.len() {
                    self.cursor[pair * 2] = (line + 1) % self.lines;
                }
                c.base + pair as u64 * c.footprint + line * LINE
            }
            Pattern::FalseSharing => {
                // All threads walk the same lines together, each in its slot.
                let line = self.cursor[t];
                self.cursor[t] = (line + 1) % self.lines;
                c.base + line * LINE + t as u64 * c.size as u64
            }
        }
    }

    /// The kind of thread `t`'s next access: set by the pattern for the
    /// sharing patterns, else a store with the write ratio's probability.
    #[inline]
    fn next_kind(&mut self, t: usize) -> Kind {
        match self.cfg.pattern {
            Pattern::ProducerConsumer if t.is_multiple_of(2) => Kind::Store,
            Pattern::ProducerConsumer => Kind::Load,
            Pattern::FalseSharing => Kind::Store,
            _ if self.cfg.write_ratio > 0.0 && self.rng.random_bool(self.cfg.write_ratio) => {
                Kind::Store
            }
            _ => Kind::Load,
        }
    }
}

impl RecordSource for Generator {
    fn fill(&mut self, out: &mut Batch) -> Result<usize> {
        let n = (self.cfg.count - self.produced).min(BATCH as u64) as usize;
        for _ in 0..n {
            let t = (self.produced % self.cfg.threads as u64) as usize;
            let addr = self.next_addr(t);
            let kind = self.next_kind(t);
            let mut r = Record::access(t as u32, kind, addr, self.cfg.size);
            if let Some(g) = self.cfg.gap_ns {
                r = r.with_gap(g);
            } else if let Some(rate) = self.cfg.rate_per_us {
                let u: f64 = self.time_rng.random::<f64>();
                self.clock[t] += -(1.0 - u).ln() * 1000.0 / rate;
                let at = self.clock[t].round();
                if at > crate::horizon::HORIZON_NS as f64 {
                    return Err(TraceError {
                        location: crate::error::Location::Record {
                            record: self.produced,
                        },
                        problem: crate::horizon::past("generated time", at as u64).into(),
                    });
                }
                r = r.with_time(at as u64);
            }
            out.push(r);
            self.produced += 1;
        }
        Ok(n)
    }

    fn fields(&self) -> Fields {
        Fields {
            pc: false,
            time: self.cfg.gap_ns.is_some() || self.cfg.rate_per_us.is_some(),
        }
    }

    fn format_name(&self) -> &'static str {
        "generator"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::collect_all;
    use std::collections::HashSet;

    fn run(cfg: GenConfig) -> Vec<Record> {
        collect_all(&mut Generator::new(cfg).unwrap()).unwrap()
    }

    #[test]
    fn sequential_wraps_and_threads_have_own_regions() {
        let v = run(GenConfig {
            count: 10,
            footprint: 64,
            size: 16,
            threads: 2,
            base: 0,
            ..Default::default()
        });
        let t0: Vec<u64> = v.iter().filter(|r| r.thread == 0).map(|r| r.addr).collect();
        let t1: Vec<u64> = v.iter().filter(|r| r.thread == 1).map(|r| r.addr).collect();
        assert_eq!(t0, vec![0, 16, 32, 48, 0]);
        assert_eq!(t1, vec![64, 80, 96, 112, 64]);
    }

    /// A stride of 3 lines over 64 lines, wrapping modulo the footprint:
    /// each access's address.
    fn modular_stride3(backward: bool) -> Vec<u64> {
        run(GenConfig {
            pattern: Pattern::Stride,
            count: 64,
            footprint: 64 * 64,
            stride: 3 * 64,
            modular: true,
            backward,
            base: 0,
            ..Default::default()
        })
        .iter()
        .map(|r| r.addr)
        .collect()
    }

    #[test]
    fn a_modular_stride_visits_every_line_once_per_pass() {
        let lines: Vec<u64> = modular_stride3(false).iter().map(|a| a / 64).collect();
        assert_eq!(&lines[..4], &[0, 3, 6, 9]);
        assert_eq!(lines[22], 2, "66 mod 64");
        let set: HashSet<u64> = lines.iter().copied().collect();
        assert_eq!(set.len(), 64);
    }

    #[test]
    fn a_backward_stride_descends_from_the_footprints_end() {
        let forward = modular_stride3(false);
        let back = modular_stride3(true);
        // Lines 63, 60, 57, ...: the forward walk's 0, 3, 6 mirrored, each
        // 8-byte access in the last 8 bytes of its line.
        let lines: Vec<u64> = back.iter().map(|a| a / 64).collect();
        assert_eq!(&lines[..4], &[63, 60, 57, 54]);
        assert!(back.iter().all(|a| a % 64 == 56));
        for (f, b) in forward.iter().zip(&back) {
            assert_eq!(f / 64 + b / 64, 63, "mirrored lines");
        }
    }

    #[test]
    fn interleaved_streams_take_turns_in_their_regions() {
        let v = run(GenConfig {
            pattern: Pattern::Interleaved,
            count: 7,
            footprint: 3 * 256,
            stride: 64,
            streams: 3,
            base: 0,
            ..Default::default()
        });
        let a: Vec<u64> = v.iter().map(|r| r.addr).collect();
        assert_eq!(a, vec![0, 256, 512, 64, 320, 576, 128]);
        assert!(
            Generator::new(GenConfig {
                pattern: Pattern::Interleaved,
                streams: 0,
                ..Default::default()
            })
            .is_err()
        );
    }

    #[test]
    fn gapped_streams_skip_whole_lines_forward() {
        let v = run(GenConfig {
            pattern: Pattern::Gapped,
            count: 10_000,
            footprint: 1 << 30,
            stride: 64,
            skip_lines: 4,
            skip_prob: 0.5,
            base: 0,
            ..Default::default()
        });
        let steps: Vec<u64> = v.windows(2).map(|w| (w[1].addr - w[0].addr) / 64).collect();
        assert!(
            steps.iter().all(|&s| (1..=5).contains(&s)),
            "1 line, or 1 + 1..=4 skipped"
        );
        let skipped = steps.iter().filter(|&&s| s > 1).count() as f64 / steps.len() as f64;
        assert!((skipped - 0.5).abs() < 0.03, "skip share {skipped}");
        let mean = steps.iter().sum::<u64>() as f64 / steps.len() as f64;
        assert!(
            (mean - 2.25).abs() < 0.1,
            "1 + 0.5 × 2.5 lines per step, got {mean}"
        );
    }

    #[test]
    fn chase_visits_every_line_once_per_cycle() {
        let lines = 1000u64;
        let v = run(GenConfig {
            pattern: Pattern::Chase,
            count: lines,
            footprint: lines * LINE,
            ..Default::default()
        });
        let set: HashSet<u64> = v.iter().map(|r| r.addr).collect();
        assert_eq!(set.len() as u64, lines, "a single cycle covers all lines");
        let next = run(GenConfig {
            pattern: Pattern::Chase,
            count: lines + 1,
            footprint: lines * LINE,
            ..Default::default()
        });
        assert_eq!(next[lines as usize].addr, next[0].addr, "the cycle closes");
    }

    #[test]
    fn same_seed_same_records_other_seed_differs() {
        let cfg = GenConfig {
            pattern: Pattern::Zipf,
            count: 5000,
            footprint: 1 << 20,
            write_ratio: 0.3,
            ..Default::default()
        };
        let a = run(cfg.clone());
        assert_eq!(a, run(cfg.clone()));
        assert_ne!(a, run(GenConfig { seed: 2, ..cfg }));
        let stores = a.iter().filter(|r| r.kind == Kind::Store).count();
        assert!((1200..1800).contains(&stores), "{stores}");
    }

    #[test]
    fn poisson_rate_gives_exponential_gaps_with_the_right_mean() {
        let v = run(GenConfig {
            count: 200_000,
            rate_per_us: Some(50.0),
            ..Default::default()
        });
        let last = match v.last().unwrap().timing() {
            crate::record::Timing::At(t) => t,
            other => panic!("{other:?}"),
        };
        // 200 000 arrivals at 50/µs span ≈ 4 000 µs.
        let span_us = last as f64 / 1000.0;
        assert!((span_us - 4000.0).abs() < 40.0, "{span_us}");
        // Exponential: the share of gaps above the mean is e^-1 ≈ 0.368.
        let mut prev = 0u64;
        let mut above = 0;
        for r in &v {
            if let crate::record::Timing::At(t) = r.timing() {
                if t - prev > 20 {
                    above += 1;
                }
                prev = t;
            }
        }
        let share = above as f64 / v.len() as f64;
        assert!((share - 0.368).abs() < 0.01, "{share}");
    }

    #[test]
    fn zipf_is_skewed_random_is_not() {
        let count = 100_000;
        let lines = 4096u64;
        let top_share = |p: Pattern| {
            let v = run(GenConfig {
                pattern: p,
                count,
                footprint: lines * LINE,
                zipf_s: 1.0,
                ..Default::default()
            });
            let mut freq = std::collections::HashMap::new();
            for r in &v {
                *freq.entry(r.addr).or_insert(0u64) += 1;
            }
            let mut f: Vec<u64> = freq.into_values().collect();
            f.sort_unstable_by(|a, b| b.cmp(a));
            f.iter().take(41).sum::<u64>() as f64 / count as f64
        };
        // Zipf(1) over 4096 items: the top 1% (41 items) hold H(41)/H(4096) ≈ 4.3/8.9 ≈ 0.49.
        let z = top_share(Pattern::Zipf);
        assert!((0.44..0.54).contains(&z), "{z}");
        let r = top_share(Pattern::Random);
        assert!(r < 0.03, "{r}");
    }

    #[test]
    fn sharing_patterns_by_hand() {
        let make = |pattern, threads, size| {
            let cfg = GenConfig {
                pattern,
                count: 8,
                footprint: 3 * LINE,
                size,
                threads,
                base: 0x1000,
                ..GenConfig::default()
            };
            collect_all(&mut Generator::new(cfg).unwrap()).unwrap()
        };
        // Producer (thread 0) stores line k, consumer (thread 1) loads it; a
        // 3-line ring wraps.
        let pc = make(Pattern::ProducerConsumer, 2, 8);
        let want: Vec<Record> = [0u64, 0, 1, 1, 2, 2, 0, 0]
            .iter()
            .enumerate()
            .map(|(i, &l)| {
                let kind = if i % 2 == 0 { Kind::Store } else { Kind::Load };
                Record::access((i % 2) as u32, kind, 0x1000 + l * LINE, 8)
            })
            .collect();
        assert_eq!(pc, want);
        // Four threads, 16-byte slots of the same lines, all stores.
        let fs = make(Pattern::FalseSharing, 4, 16);
        let addrs: Vec<(u32, u64)> = fs.iter().map(|r| (r.thread, r.addr)).collect();
        assert_eq!(
            addrs,
            vec![
                (0, 0x1000),
                (1, 0x1010),
                (2, 0x1020),
                (3, 0x1030),
                (0, 0x1040),
                (1, 0x1050),
                (2, 0x1060),
                (3, 0x1070)
            ]
        );
        assert!(fs.iter().all(|r| r.kind == Kind::Store));
        // Slots must fit a line.
        let cfg = GenConfig {
            pattern: Pattern::FalseSharing,
            threads: 9,
            size: 8,
            ..GenConfig::default()
        };
        assert!(Generator::new(cfg).is_err());
    }
}
