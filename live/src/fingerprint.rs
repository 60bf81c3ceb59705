//! Fingerprinting the host's hardware prefetchers, the way
//! microbenchmark papers do: dependent-load walks with a constant stride
//! through a working set far beyond the caches, against a random chase of
//! the same set. A walk a prefetcher follows costs a fraction of the
//! random chase's memory latency; one it cannot see costs the same.
//!
//! - **stride walks**: line *k·s mod p* for a prime line count *p* (every
//!   stride visits every line once per cycle), strides of −64…+4096 lines:
//!   within a 4 KiB page (|s| < 64) and across pages up to 256 KiB, odd
//!   strides included; each one's lookahead, random chase / walk, is the
//!   curve the model's `ip-stride-table` runs; the same walks again inside
//!   each cache level ([`level_walks`], recorded only);
//! - **streams**: N unit-stride streams walked round-robin, their regions
//!   placed at random (so that one instruction's stride never repeats and
//!   only a prefetcher that tracks regions can follow them): how many
//!   concurrent streams are tracked;
//! - **ahead** (Little's law on the unit-stride walk): a line takes the
//!   random chase's latency to arrive and the walk uses one per unit-walk
//!   time, so the prefetcher keeps random/unit lines in flight ahead of it;
//! - **pairs**: line 2k then 2k+1 (next line), 2k+1 then 2k (the other
//!   half of a 128-byte pair), against random pairs: next-line and
//!   adjacent-line prefetching;
//! - **the verdict** ([`verdict`], a pure function of the measurements): a
//!   stride is *followed* when its walk costs under half the random
//!   chase's latency; from the followed strides, whether a prefetcher
//!   exists, follows descending walks, reaches beyond a page, and the
//!   largest stride it follows; from the rest, streams tracked,
//!   lines ahead, next-line and adjacent-line prefetching.
//!
//! The strides 3, 5, 17 and 97 are not walked here: `bench/validate.sh`
//! holds them out to validate the calibrated model on.

use crate::LiveError;
use crate::calibrate::walk_cycle;
use crate::os::PageBuf;

/// The strides walked (lines).
/// Within a page (|s| < 64), strides every few lines and not only powers
/// of two, primes among them: a host can run the powers of two slower
/// than the strides between them (the Xeon VM of 2026-12-03 walked 8, 16
/// and 32 lines over memory at 72.8, 51.7 and 60.8 ns per load, 13 and 21
/// lines at 38.8 and 46.6), so a curve through the powers alone misjudges
/// the rest. Backward, the same strides up to a page. 3, 5 and 17 are
/// left for `bench/validate.sh`.
pub const STRIDES: [i64; 61] = [
    1, 2, 4, 6, 7, 8, 10, 11, 12, 14, 16, 19, 20, 23, 24, 28, 31, 32, 37, 40, 44, 48, 53, 56, 61,
    63, 64, 65, 128, 256, 512, 1024, 2048, 4096, -1, -2, -4, -6, -7, -8, -10, -11, -12, -14, -16,
    -19, -20, -23, -24, -28, -31, -32, -37, -40, -44, -48, -53, -56, -61, -63, -64,
];

/// Concurrent streams walked.
pub const STREAMS: [u32; 7] = [1, 2, 4, 8, 16, 32, 64];

/// Run lengths (lines) of the ramp walks.
pub const RAMPS: [u32; 6] = [2, 4, 8, 16, 32, 64];

/// Rounds of every walk, interleaved (see [`walk_rounds`]).
pub const ROUNDS: usize = 5;

/// ns per load of each order's walk over `buf`: the median over [`ROUNDS`]
/// rounds, each round walking every order once (`repeats` runs of `loads`
/// loads, their median). A slow spell of a shared VM then lands on one
/// round of each walk rather than on every run of one walk: walked one at a
/// time, a stride's walk moved by ±30% from one measurement to the next on
/// an EPYC VM, and the lookahead curve jumped with it.
fn walk_rounds(
    buf: &mut PageBuf,
    orders: &[&dyn Fn() -> Vec<u32>],
    loads: u64,
    repeats: usize,
) -> Vec<f64> {
    let mut runs = vec![Vec::with_capacity(ROUNDS); orders.len()];
    for _ in 0..ROUNDS {
        for (order, r) in orders.iter().zip(&mut runs) {
            r.push(walk_cycle(buf, &order(), loads, repeats).0);
        }
    }
    runs.into_iter().map(median).collect()
}

/// A walk is followed when it costs under this share of the random chase.
pub const FOLLOWED: f64 = 0.5;

/// A walk is partly followed when it costs under this share of the random
/// chase (a stride the prefetcher still runs ahead of, a line or two).
pub const PARTLY: f64 = 0.75;

/// The fewest lines in flight (random chase / walk, Little's law) for which
/// a walk enters the stride table's curve: from 1.5 the lookahead rounds
/// to a line ahead ([`lookahead`]). Walks between this and [`FOLLOWED`]
/// are partly followed: the Xeon VM of 2026-12-05 walked most strides of
/// 28–256 lines over memory at 80–90 ns against a 161 ns random chase
/// (one line ahead), which the model, with no curve point there, ran at
/// the lookahead of the nearest followed stride.
pub const CURVE_IN_FLIGHT: f64 = 1.5;

/// The stride table's lookahead for a walk that keeps `in_flight` lines in
/// flight (random chase / walk): one fewer, rounded, 1..=64. The table A
/// lines ahead keeps A + 1 in flight (the demand load and A prefetches), so
/// a dependent walk costs a memory access / (A + 1) a load.
pub fn lookahead(in_flight: f64) -> u32 {
    (in_flight - 1.0).round().clamp(1.0, 64.0) as u32
}

/// The longest step (lines) the model's region streamer counts towards a
/// stream (`policies/src/prefetch/stream.rs`): a longer stride followed on
/// the host needs the model's stride table.
pub const STREAM_STEP_LINES: u64 = sim::ranges::NEAR_STEP_LINES;

/// What was measured: the random chase and each stride walk (ns per load).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Fingerprint {
    /// Working set (bytes).
    pub bytes: u64,
    /// Share of the walks' buffer the kernel backed with huge pages (the
    /// walks are asked for them so that TLB misses, which a random chase
    /// takes and a short-stride walk does not, do not pass for prefetching).
    pub huge_share: f64,
    pub random_ns: f64,
    /// (stride in lines, ns per load).
    pub walks: Vec<(i64, f64)>,
    /// (concurrent streams, ns per load).
    #[serde(default)]
    pub streams: Vec<(u32, f64)>,
    /// Pairs of loads within 128-byte pairs, ns per load.
    #[serde(default)]
    pub pairs: Option<Pairs>,
    /// The stride walks again at working sets inside the cache levels
    /// ([`level_walks`]): recorded, not read by the verdict (a walk there
    /// is bounded by the level's latency, not memory's, so it says where
    /// the prefetcher's lines land rather than how far ahead it runs).
    #[serde(default)]
    pub levels: Vec<LevelWalks>,
    /// (run length in lines, ns per load) of the ramp walks: runs of
    /// consecutive lines, each at a random place — what a new stream costs
    /// before the prefetchers run ahead of it. Not read by the verdict;
    /// `live calibrate` fits the model's confirmation count to them.
    #[serde(default)]
    pub ramps: Vec<(u32, f64)>,
    /// (pages, ns per load) of the page walks ([`page_walks`]): one line
    /// on each of N pages. Not read by the verdict; `live calibrate` fits
    /// the model's data TLBs to them (`lab::tlb_fit`).
    #[serde(default)]
    pub pages: Vec<(u32, f64)>,
}

/// The stride walks at one working set (ns per load).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LevelWalks {
    /// The level the set sits in (its name in the machine file).
    pub level: String,
    pub bytes: u64,
    pub random_ns: f64,
    pub walks: Vec<(i64, f64)>,
}

/// Two loads per random pair of lines (ns per load).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Pairs {
    /// Line 2k, then 2k+1.
    pub next_ns: f64,
    /// Line 2k+1, then 2k.
    pub buddy_ns: f64,
}

/// What the measurements say of the host's prefetchers.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Verdict {
    /// Some stride walk is followed.
    pub detected: bool,
    /// The strides followed (lines), in the order measured.
    pub followed: Vec<i64>,
    /// A descending walk is followed.
    pub backward: bool,
    /// A walk of a page (64 lines) or more per step is followed.
    pub crosses_pages: bool,
    /// The largest stride followed (lines; 0 when none).
    pub max_stride_lines: u64,
    /// The random chase's latency over the unit-stride walk's.
    pub unit_speedup: f64,
    /// The most concurrent region streams followed (0: none beyond one
    /// instruction's stride).
    pub streams: u32,
    /// The least cost of the followed walks of 2 or more streams (ns per
    /// load; 0 when none): under the L2's latency, the streamer's lines
    /// reach L1.
    pub streams_ns: f64,
    /// Lines in flight ahead of a unit-stride walk (random chase / unit
    /// walk, Little's law; 0 when no stride is followed).
    pub ahead_lines: u32,
    /// The same for the longer ascending strides followed (s ≥ 2) up to
    /// `reach_lines`: the median of random chase / walk.
    pub stride_ahead: u32,
    /// Where the strides' lookahead drops (lines; 0: it does not): the
    /// longest stride of the nearer of two steps fitted to the lookaheads.
    pub reach_lines: u64,
    /// The lookahead of the strides beyond `reach_lines` (0 when none).
    pub far_ahead: u32,
    /// The longest stride the host's prefetcher runs ahead of at all
    /// (lines): the longest ascending walk below the shortest one beyond
    /// `max_stride_lines` that is not even partly followed ([`PARTLY`]);
    /// 0 when every walk beyond is (no limit measured; also in a
    /// `.prefetch.json` recorded before there was a reach).
    #[serde(default)]
    pub stride_reach: u64,
    /// Every ascending stride up to the reach walked with at least
    /// [`CURVE_IN_FLIGHT`] lines in flight (followed or partly), with its
    /// lookahead ([`lookahead`] of random chase / walk): the curve the
    /// model's `ip-stride-table` runs.
    pub curve: Vec<(u64, u32)>,
    /// A miss brings the next line (2k → 2k+1 costs one miss, not two).
    pub next_line: bool,
    /// A miss brings the other half of its 128-byte pair (2k+1 → 2k too).
    pub adjacent_line: bool,
}

/// The largest prime ≤ n (n ≥ 2).
fn prime_at_most(n: usize) -> usize {
    let is_prime = |k: usize| {
        k >= 2
            && (2..)
                .take_while(|d| d * d <= k)
                .all(|d| !k.is_multiple_of(d))
    };
    (2..=n.max(2)).rev().find(|&k| is_prime(k)).unwrap_or(2)
}

/// The cyclic order of a stride-`s` walk over `p` lines (`p` prime, so
/// every stride not a multiple of `p` visits every line).
fn stride_order(p: usize, s: i64) -> Vec<u32> {
    let step = s.rem_euclid(p as i64) as usize;
    let mut at = 0usize;
    (0..p)
        .map(|_| {
            let here = at as u32;
            at = (at + step) % p;
            here
        })
        .collect()
}

/// A random permutation of `0..n` (Fisher–Yates on splitmix64).
fn shuffled(n: usize, seed: u64) -> Vec<u32> {
    let mut v: Vec<u32> = (0..n as u32).collect();
    let mut s = seed;
    for i in (1..n).rev() {
        let j = (crate::calibrate::splitmix(&mut s) % (i as u64 + 1)) as usize;
        v.swap(i, j);
    }
    v
}

/// Runs of `len` consecutive lines over `p` lines (the blocks `k·len..`,
/// the last one shorter), the runs in a random order: each run a new
/// stream at a place unrelated to the last.
pub fn ramp_order(p: usize, len: u32, seed: u64) -> Vec<u32> {
    let len = len.max(1) as usize;
    shuffled(p.div_ceil(len), seed)
        .into_iter()
        .flat_map(|b| {
            let b = b as usize * len;
            (b..(b + len).min(p)).map(|l| l as u32)
        })
        .collect()
}

/// `n` unit-stride streams over `p` lines, walked round-robin; the streams'
/// regions are visited in a random order, so the step from one stream to
/// the next never repeats.
fn streams_order(p: usize, n: u32, seed: u64) -> Vec<u32> {
    let r = p / n as usize;
    let sigma = shuffled(n as usize, seed);
    (0..r)
        .flat_map(|j| sigma.iter().map(move |&i| (i as usize * r + j) as u32))
        .collect()
}

/// Random pairs of lines 2k, 2k+1 (`buddy`: 2k+1 first).
fn pairs_order(p: usize, buddy: bool, seed: u64) -> Vec<u32> {
    shuffled(p / 2, seed)
        .into_iter()
        .flat_map(|k| {
            if buddy {
                [2 * k + 1, 2 * k]
            } else {
                [2 * k, 2 * k + 1]
            }
        })
        .collect()
}

/// Measures the walks of [`STRIDES`], [`STREAMS`],
/// the pairs and a random chase over `bytes`, in huge pages, `loads` loads
/// per run, the median of `repeats` runs in each of [`ROUNDS`] rounds.
pub fn fingerprint(
    bytes: u64,
    loads: u64,
    repeats: usize,
    seed: u64,
) -> Result<Fingerprint, LiveError> {
    let p = prime_at_most((bytes / 64) as usize);
    let before = crate::os::anon_huge_bytes();
    let mut buf = PageBuf::huge(p * 64)?;
    let random = || crate::calibrate::random_cycle(p, seed);
    let strides: Vec<_> = STRIDES.map(|s| move || stride_order(p, s)).to_vec();
    let streams: Vec<_> = STREAMS
        .map(|n| move || streams_order(p, n, seed ^ n as u64))
        .to_vec();
    let next = || pairs_order(p, false, seed);
    let buddy = || pairs_order(p, true, seed);
    let ramps: Vec<_> = RAMPS
        .map(|n| move || ramp_order(p, n, seed ^ ((n as u64) << 8)))
        .to_vec();
    let mut orders: Vec<&dyn Fn() -> Vec<u32>> = vec![&random, &next, &buddy];
    orders.extend(strides.iter().map(|f| f as &dyn Fn() -> Vec<u32>));
    orders.extend(streams.iter().map(|f| f as &dyn Fn() -> Vec<u32>));
    orders.extend(ramps.iter().map(|f| f as &dyn Fn() -> Vec<u32>));
    let ns = walk_rounds(&mut buf, &orders, loads, repeats);
    let huge = crate::os::anon_huge_bytes().saturating_sub(before) as f64 / buf.len() as f64;
    let (random, next_ns, buddy_ns) = (ns[0], ns[1], ns[2]);
    let walks = STRIDES
        .iter()
        .copied()
        .zip(ns[3..].iter().copied())
        .collect();
    let streams = STREAMS
        .iter()
        .copied()
        .zip(ns[3 + STRIDES.len()..].iter().copied())
        .collect();
    let ramps = RAMPS
        .iter()
        .copied()
        .zip(ns[3 + STRIDES.len() + STREAMS.len()..].iter().copied())
        .collect();
    let pairs = Pairs { next_ns, buddy_ns };

    Ok(Fingerprint {
        bytes: p as u64 * 64,
        huge_share: huge.min(1.0),
        random_ns: random,
        walks,
        streams,
        pairs: Some(pairs),
        levels: Vec::new(),
        ramps,
        pages: Vec::new(),
    })
}

/// The page counts of [`page_walks`]: past a first-level DTLB's reach (64–
/// 128 entries on recent cores) and a second level's (1 536–4 096), four
/// to eight points a doubling around them.
pub const PAGE_WALK_PAGES: [u32; 22] = [
    8, 16, 32, 48, 64, 80, 96, 112, 128, 160, 192, 256, 384, 512, 768, 1024, 1536, 2048, 3072,
    4096, 6144, 8192,
];

/// A page walk's cyclic order (line indices): one line on each of `pages`
/// 4 KiB pages, the pages in a random cycle, page p's line at p mod 64 in
/// it. The lines spread evenly over a 64-set L1's sets, so up to 768 pages
/// the data stays in a 48 KiB L1 and up to 8 192 (512 KiB) in an L2 of
/// 1 MiB or more, while the translations outgrow the TLBs: what the walk
/// costs beyond the 8-page walk and its data's level is translation.
pub fn page_order(pages: u32, seed: u64) -> Vec<u32> {
    crate::calibrate::random_cycle(pages as usize, seed)
        .into_iter()
        .map(|p| p * 64 + p % 64)
        .collect()
}

/// The page walks ([`page_order`] for each of [`PAGE_WALK_PAGES`]) in
/// huge pages, as `validate` replays traces: on a VM whose hypervisor
/// backs the guest's huge pages with 4 KiB pages they still pay for 4 KiB
/// translations (`docs/live.md`, "Address translation in this VM").
pub fn page_walks(loads: u64, repeats: usize, seed: u64) -> Result<Vec<(u32, f64)>, LiveError> {
    let most = PAGE_WALK_PAGES[PAGE_WALK_PAGES.len() - 1] as usize;
    let mut buf = PageBuf::huge(most * 4096)?;
    let orders: Vec<_> = PAGE_WALK_PAGES
        .map(|n| move || page_order(n, seed ^ n as u64))
        .to_vec();
    let orders: Vec<&dyn Fn() -> Vec<u32>> =
        orders.iter().map(|f| f as &dyn Fn() -> Vec<u32>).collect();
    let ns = walk_rounds(&mut buf, &orders, loads, repeats);
    Ok(PAGE_WALK_PAGES.iter().copied().zip(ns).collect())
}

/// The walks of [`STRIDES`] and a random chase at each `(level, bytes)`
/// working set, in huge pages, as [`fingerprint`] measures them.
pub fn level_walks(
    sets: &[(String, u64)],
    loads: u64,
    repeats: usize,
    seed: u64,
) -> Result<Vec<LevelWalks>, LiveError> {
    sets.iter()
        .map(|(level, bytes)| {
            let p = prime_at_most((bytes / 64) as usize);
            let mut buf = PageBuf::huge(p * 64)?;
            let random = || crate::calibrate::random_cycle(p, seed);
            let strides: Vec<_> = STRIDES.map(|s| move || stride_order(p, s)).to_vec();
            let mut orders: Vec<&dyn Fn() -> Vec<u32>> = vec![&random];
            orders.extend(strides.iter().map(|f| f as &dyn Fn() -> Vec<u32>));
            let ns = walk_rounds(&mut buf, &orders, loads, repeats);
            Ok(LevelWalks {
                level: level.clone(),
                bytes: p as u64 * 64,
                random_ns: ns[0],
                walks: STRIDES
                    .iter()
                    .copied()
                    .zip(ns[1..].iter().copied())
                    .collect(),
            })
        })
        .collect()
}

/// The verdict on a fingerprint (pure: the same measurements, the same
/// verdict).
pub fn verdict(f: &Fingerprint) -> Verdict {
    let followed: Vec<i64> = f
        .walks
        .iter()
        .filter(|(_, ns)| *ns < FOLLOWED * f.random_ns)
        .map(|&(s, _)| s)
        .collect();
    let unit = unit_walk(&f.walks).unwrap_or(f.random_ns);
    let fast = |ns: f64| ns < FOLLOWED * f.random_ns;
    let streams = f
        .streams
        .iter()
        .take_while(|s| fast(s.1))
        .map(|s| s.0)
        .last()
        .unwrap_or(0);
    // Of a pair, the second load hit when the pair costs less than a miss
    // and half of one.
    let pair_hit = |ns: f64| 2.0 * ns < (1.0 + FOLLOWED) * f.random_ns;
    let speedup = if unit > 0.0 { f.random_ns / unit } else { 0.0 };
    let multi: Vec<f64> = f
        .streams
        .iter()
        .filter(|s| s.0 >= 2 && s.0 <= streams)
        .map(|s| s.1)
        .collect();
    let streams_ns = multi.into_iter().reduce(f64::min).unwrap_or(0.0);
    let (stride_ahead, reach_lines, far_ahead) = stride_steps(f, &followed);
    let max_stride_lines = followed.iter().map(|s| s.unsigned_abs()).max().unwrap_or(0);
    let stride_reach = stride_reach(f, max_stride_lines);
    let mut curve: Vec<(u64, u32)> = f
        .walks
        .iter()
        .filter(|&&(s, ns)| {
            s >= 1
                && ns > 0.0
                && f.random_ns / ns >= CURVE_IN_FLIGHT
                && (stride_reach == 0 || s as u64 <= stride_reach)
        })
        .map(|&(s, ns)| (s as u64, lookahead(f.random_ns / ns)))
        .collect();
    curve.sort_unstable();
    curve.dedup_by_key(|p| p.0);
    Verdict {
        stride_reach,
        streams_ns,
        curve,
        stride_ahead,
        reach_lines,
        far_ahead,
        streams,
        ahead_lines: if followed.is_empty() {
            0
        } else {
            speedup.round().clamp(1.0, 64.0) as u32
        },
        next_line: f.pairs.is_some_and(|p| pair_hit(p.next_ns)),
        adjacent_line: f.pairs.is_some_and(|p| pair_hit(p.buddy_ns)),
        detected: !followed.is_empty(),
        backward: followed.iter().any(|&s| s < 0),
        crosses_pages: followed.iter().any(|&s| s.unsigned_abs() >= 64),
        max_stride_lines,
        unit_speedup: speedup,
        followed,
    }
}

/// [`Verdict::stride_reach`]: of the ascending walks beyond the longest
/// followed stride, the first that is not even partly followed ends the
/// reach at the walk before it.
fn stride_reach(f: &Fingerprint, max_followed: u64) -> u64 {
    let mut up: Vec<(u64, f64)> = f
        .walks
        .iter()
        .filter(|w| w.0 >= 1)
        .map(|&(s, ns)| (s as u64, ns))
        .collect();
    up.sort_by_key(|w| w.0);
    let mut reach = 0;
    for &(s, ns) in &up {
        if s > max_followed && ns >= PARTLY * f.random_ns {
            return reach;
        }
        reach = s;
    }
    0
}

/// The median of `v` (the mean of the middle two for an even count; NaN
/// when empty).
pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    match n {
        0 => f64::NAN,
        _ if n % 2 == 1 => v[n / 2],
        _ => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// The lookahead (random chase / walk, Little's law) of the followed
/// ascending strides longer than one line, fitted by two steps in the
/// stride (least squares on its logarithm; a split only where the step is
/// at least 1.5×). Descending walks are left out: the model's prefetcher
/// treats both directions alike, and the traces it runs mostly ascend.
/// (median lookahead up to the split, the split's longest stride or 0,
/// median lookahead beyond it or 0).
fn stride_steps(f: &Fingerprint, followed: &[i64]) -> (u32, u64, u32) {
    let mut pts: Vec<(u64, f64)> = f
        .walks
        .iter()
        .filter(|(s, ns)| *s >= 2 && followed.contains(s) && *ns > 0.0)
        .map(|&(s, ns)| (s as u64, f.random_ns / ns))
        .collect();
    if pts.is_empty() {
        return (0, 0, 0);
    }
    pts.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
    let median = |v: &[(u64, f64)]| median(v.iter().map(|p| p.1).collect());
    let sse = |v: &[(u64, f64)]| {
        let m = v.iter().map(|p| p.1.ln()).sum::<f64>() / v.len() as f64;
        v.iter().map(|p| (p.1.ln() - m).powi(2)).sum::<f64>()
    };
    let ahead = |x: f64| x.round().clamp(1.0, 64.0) as u32;
    let mut best: Option<(f64, usize)> = None;
    for i in 1..pts.len() {
        if pts[i].0 == pts[i - 1].0 {
            continue;
        }
        let (near, far) = pts.split_at(i);
        if median(near) < 1.5 * median(far) {
            continue;
        }
        let cost = sse(near) + sse(far);
        if best.is_none_or(|(c, _)| cost < c) {
            best = Some((cost, i));
        }
    }
    match best {
        Some((_, i)) if sse(&pts[..i]) + sse(&pts[i..]) < sse(&pts) => {
            let (near, far) = pts.split_at(i);
            (
                ahead(median(near)),
                near[near.len() - 1].0,
                ahead(median(far)),
            )
        }
        _ => (ahead(median(&pts)), 0, 0),
    }
}

/// The prefetchers the model runs for a verdict (`SPEC@LEVEL`, as
/// `--prefetch` takes them), pure:
/// - a stride followed across pages, or a stride in the curve (followed
///   or partly) longer than the region streamer's step
///   ([`STREAM_STEP_LINES`]), is an instruction-stride prefetcher's (a
///   region streamer stops at a page and counts near steps only):
///   `ip-stride-table:r=R:1=A:2=A…@L1D`, each ascending stride of the
///   curve with its lookahead (`curve`), none beyond the reach R
///   (`stride_reach`; no `r=` when none was measured), at most `fills`
///   of its fills in flight from each level named (`f.LEVEL=N`);
/// - the unit-stride walk's lookahead A (`ahead_lines`) is a region
///   streamer's: `stream:A:1:N@LEVEL` when N > 1 streams were followed at
///   once (`stream:A:1@LEVEL` for one), at `stream_level` (the caller's
///   reading of `streams_ns`: L1D when a walk of streams cost less than an
///   L2 hit, else L2);
/// - the other half of a 128-byte pair brought: `adjacent:mem@L2` (the
///   pairs walk measures lines from memory); else the
///   next line brought: `next-line:1@L1D`.
pub fn model(v: &Verdict, stream_level: &str, confirm: u8, fills: &Fills) -> Vec<String> {
    let mut m = Vec::new();
    if !v.detected {
        return m;
    }
    let ahead = v.ahead_lines.max(1);
    let beyond_stream = |s: u64| s > STREAM_STEP_LINES;
    if (v.crosses_pages
        || beyond_stream(v.max_stride_lines)
        || v.curve.iter().any(|p| beyond_stream(p.0)))
        && !v.curve.is_empty()
    {
        let mut pts: Vec<String> = v.curve.iter().map(|(s, a)| format!("{s}={a}")).collect();
        for (i, (level, n)) in fills.iter().enumerate() {
            pts.insert(i, format!("f.{level}={n}"));
        }
        if v.stride_reach > 0 {
            pts.insert(0, format!("r={}", v.stride_reach));
        }
        if confirm > 1 {
            pts.insert(0, format!("c={confirm}"));
        }
        m.push(format!("ip-stride-table:{}@L1D", pts.join(":")));
    }
    let tracked = if v.streams >= 2 { v.streams } else { 16 };
    if confirm > 1 {
        m.push(format!(
            "stream:{ahead}:1:{tracked}:{confirm}@{stream_level}"
        ));
    } else if v.streams >= 2 {
        m.push(format!("stream:{ahead}:1:{tracked}@{stream_level}"));
    } else {
        m.push(format!("stream:{ahead}:1@{stream_level}"));
    }
    if v.adjacent_line {
        m.push("adjacent:mem@L2".to_string());
    } else if v.next_line {
        m.push("next-line:1@L1D".to_string());
    }
    m
}

/// How much more than an L2 hit the several-streams walk must cost for the
/// streamer to fill L2: the 25 % within which the calibration's checks
/// call a walk reproduced (a closer reading is the hosts' noise).
const STREAM_L2_MARGIN: f64 = 0.25;

/// The level the region streamer fills: L2 when a walk of several streams
/// costs clearly more than an L2 hit (by more than [`STREAM_L2_MARGIN`]),
/// else L1. Two calibrations of one host (the Xeon VM with a 7 MB LLC
/// level, 2026-12-03 and -04) measured the streams at 5.36 and 5.74 ns
/// against L2 hits of 5.97 and 5.46 ns: a plain comparison put the
/// streamer at L1 one day and at L2 the next, and the unit-stride walk
/// over memory went from 8.8 ns in the model (host 9.1) to 6.4 (host 9.0).
fn stream_level(spec: &sim::machine::MachineSpec, v: &Verdict) -> String {
    let caches = &spec.core.caches;
    match (caches.first(), caches.get(1)) {
        (Some(l1), Some(l2))
            if v.streams_ns > 0.0 && v.streams_ns <= l2.latency_ns * (1.0 + STREAM_L2_MARGIN) =>
        {
            l1.name.clone()
        }
        (_, Some(l2)) => l2.name.clone(),
        (Some(l1), None) => l1.name.clone(),
        (None, None) => "0".to_string(),
    }
}

/// The unit-stride walk's cost among `walks` (stride, ns per load).
pub fn unit_walk(walks: &[(i64, f64)]) -> Option<f64> {
    walks.iter().find(|w| w.0 == 1).map(|w| w.1)
}

/// Where the host's prefetchers leave the lines of one working set.
#[derive(Clone, Debug, PartialEq)]
pub struct Landing {
    /// The set: a level's name from [`Fingerprint::levels`], or "memory"
    /// for the fingerprint's own set.
    pub set: String,
    pub bytes: u64,
    /// The unit-stride walk (ns per load).
    pub walk_ns: f64,
    /// The level whose latency is nearest the walk's in ratio.
    pub level: String,
}

/// Where prefetched lines land, from the unit-stride walks: a walk the
/// prefetchers keep ahead of costs the latency of the level they fill (a
/// walk inside L2 at L1's latency finds its lines in L1; one over memory
/// at L2's finds them in L2). `levels` are (name, latency ns) innermost
/// first, memory last. Sets whose unit walk is not followed (under
/// [`FOLLOWED`] of the set's random chase) are left out. Pure. A walk
/// bounded by lines in flight rather than by where they land reads the
/// same (over memory, a walk at L2's latency may be lines landing in L1
/// late): the note informs, the model does not read it.
pub fn landing(f: &Fingerprint, levels: &[(String, f64)]) -> Vec<Landing> {
    let sets = f
        .levels
        .iter()
        .map(|l| (l.level.as_str(), l.bytes, l.random_ns, unit_walk(&l.walks)))
        .chain([("memory", f.bytes, f.random_ns, unit_walk(&f.walks))]);
    sets.filter_map(|(set, bytes, random, walk)| {
        let walk = walk.filter(|&w| w > 0.0 && w < FOLLOWED * random)?;
        let level = levels
            .iter()
            .filter(|l| l.1 > 0.0)
            .min_by(|a, b| (walk / a.1).ln().abs().total_cmp(&(walk / b.1).ln().abs()))?;
        Some(Landing {
            set: set.to_string(),
            bytes,
            walk_ns: walk,
            level: level.0.clone(),
        })
    })
    .collect()
}

/// Sets the confirmation count of the model's prefetchers in a machine
/// file [`apply`] wrote (`core.prefetch.confirm` and the `model` specs);
/// nothing when it has no `core.prefetch`.
pub fn apply_confirm(spec: &mut sim::machine::MachineSpec, f: &Fingerprint, confirm: u8) {
    let fills = spec
        .core
        .prefetch
        .as_ref()
        .map(|p| p.fills.clone())
        .unwrap_or_default();
    apply_fits(spec, f, confirm, fills);
}

/// Sets the stride table's fills in flight per core from the cache level
/// named `level` in a machine file [`apply`] wrote (`core.prefetch.fills`
/// and the `model` specs; 0: no limit); nothing when it has no
/// `core.prefetch`.
pub fn apply_fills(spec: &mut sim::machine::MachineSpec, f: &Fingerprint, level: &str, n: u8) {
    let Some(p) = spec.core.prefetch.as_ref() else {
        return;
    };
    let (confirm, mut fills) = (p.confirm, p.fills.clone());
    if n == 0 {
        fills.remove(level);
    } else {
        fills.insert(level.to_string(), n);
    }
    apply_fits(spec, f, confirm, fills);
}

/// Fills in flight per core by the cache level they come from.
pub type Fills = std::collections::BTreeMap<String, u8>;

fn apply_fits(spec: &mut sim::machine::MachineSpec, f: &Fingerprint, confirm: u8, fills: Fills) {
    let v = verdict(f);
    let level = stream_level(spec, &v);
    if let Some(p) = spec.core.prefetch.as_mut() {
        p.confirm = confirm;
        p.model = model(&v, &level, confirm, &fills);
        p.fills = fills;
    }
}

/// The walks the stride table's fills in flight from the cache level
/// named `level` are fitted to (`lab`'s `fill_fit`): of the walks inside
/// that level, the ascending strides in the stride table's curve (longer than
/// [`STREAM_STEP_LINES`], up to its reach). The descending walks, the
/// streamer's strides and the walks beyond the reach stay held out.
pub fn fill_fit_walks(f: &Fingerprint, level: &str) -> Vec<(i64, f64)> {
    let v = verdict(f);
    let Some(set) = f.levels.iter().find(|l| l.level == level) else {
        return Vec::new();
    };
    set.walks
        .iter()
        .filter(|&&(s, ns)| {
            s > STREAM_STEP_LINES as i64
                && (v.stride_reach == 0 || s as u64 <= v.stride_reach)
                && v.curve.iter().any(|p| p.0 as i64 == s)
                && ns > 0.0
        })
        .copied()
        .collect()
}

/// Writes the verdict into a machine description (`core.prefetch`, the
/// measurements in the file `measured`); returns a note for its sources.
/// Pure, like [`crate::calibrate::apply`]: the same fingerprint gives the
/// same machine file.
pub fn apply(spec: &mut sim::machine::MachineSpec, f: &Fingerprint, measured: &str) -> String {
    let v = verdict(f);
    let model = model(&v, &stream_level(spec, &v), 1, &Fills::new());
    let r2 = |x: f64| (x * 100.0).round() / 100.0;
    spec.core.prefetch = Some(sim::machine::HostPrefetch {
        detected: v.detected,
        followed_strides: v.followed.clone(),
        backward: v.backward,
        crosses_pages: v.crosses_pages,
        max_stride_lines: v.max_stride_lines,
        unit_speedup: r2(v.unit_speedup),
        streams: v.streams,
        ahead_lines: v.ahead_lines,
        stride_ahead: v.stride_ahead,
        reach_lines: v.reach_lines,
        far_ahead: v.far_ahead,
        next_line: v.next_line,
        adjacent_line: v.adjacent_line,
        confirm: 1,
        fills: Fills::new(),
        model: model.clone(),
        measured: measured.to_string(),
    });
    let unit = unit_walk(&f.walks).unwrap_or(f.random_ns);
    format!(
        "Prefetchers (stride walks over {} B, {:.0}% huge pages): a random chase {:.1} ns, a unit-stride walk {:.1} ns; {} of {} strides followed (under {:.0}% of the random chase), up to {} lines{}{}{}; {} region stream(s) at once, {} lines ahead{}{}; modelled as {}; measurements in {measured}.",
        f.bytes,
        f.huge_share * 100.0,
        f.random_ns,
        unit,
        v.followed.len(),
        f.walks.len(),
        FOLLOWED * 100.0,
        v.max_stride_lines,
        if v.backward { ", descending too" } else { "" },
        if v.crosses_pages {
            ", across pages"
        } else {
            ""
        },
        match v.stride_reach {
            r if r > 0 && (v.crosses_pages || v.max_stride_lines > STREAM_STEP_LINES) => {
                format!(", none beyond {r} lines")
            }
            _ => String::new(),
        },
        v.streams,
        v.ahead_lines,
        if v.next_line { ", next line" } else { "" },
        if v.adjacent_line {
            ", adjacent line"
        } else {
            ""
        },
        if v.detected {
            model.join(" ")
        } else {
            "none".to_string()
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stride_orders_are_single_cycles_over_every_line() {
        let p = prime_at_most(1000);
        assert_eq!(p, 997);
        for s in STRIDES {
            let o = stride_order(p, s);
            let mut seen = vec![false; p];
            for &l in &o {
                assert!(
                    !std::mem::replace(&mut seen[l as usize], true),
                    "stride {s}"
                );
            }
            assert_eq!(
                (o[1] as i64 - o[0] as i64).rem_euclid(p as i64),
                s.rem_euclid(p as i64)
            );
        }
    }

    #[test]
    fn ramp_orders_are_runs_of_consecutive_lines_at_random_places() {
        let p = prime_at_most(1000);
        for len in RAMPS {
            let o = ramp_order(p, len, 5);
            let mut sorted = o.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, (0..p as u32).collect::<Vec<_>>(), "run {len}");
            // Within a run each step is one line; a run starts at a
            // multiple of its length.
            let starts: Vec<usize> = (0..o.len())
                .filter(|&i| (o[i] as usize).is_multiple_of(len as usize))
                .collect();
            for w in starts.windows(2) {
                let run = &o[w[0]..w[1]];
                assert!(
                    run.windows(2).all(|x| x[1] == x[0] + 1),
                    "run {len}: {run:?}"
                );
            }
            // The runs are not in address order.
            assert!(o.windows(2).any(|x| x[1] < x[0]), "run {len}");
        }
    }

    #[test]
    fn stream_and_pair_orders_touch_each_line_once() {
        let p = prime_at_most(4096);
        for n in STREAMS {
            let o = streams_order(p, n, 3);
            let set: std::collections::HashSet<u32> = o.iter().copied().collect();
            assert_eq!(set.len(), o.len(), "{n} streams");
            // Each stream ascends by one line per round.
            let r = p / n as usize;
            assert_eq!(o[n as usize] as usize, o[0] as usize + 1);
            assert!(o.iter().all(|&l| (l as usize) < n as usize * r));
        }
        for buddy in [false, true] {
            let o = pairs_order(p, buddy, 5);
            assert_eq!(o.len(), p / 2 * 2);
            for w in o.chunks(2) {
                assert_eq!(w[0] ^ 1, w[1]);
                assert_eq!(w[0] % 2 == 1, buddy);
            }
        }
    }

    fn sample() -> Fingerprint {
        Fingerprint {
            bytes: 1 << 26,
            huge_share: 1.0,
            random_ns: 100.0,
            walks: vec![
                (1, 5.0),
                (2, 10.0),
                (4, 12.5),
                (16, 10.0),
                (64, 12.5),
                (256, 25.0),
                (1024, 20.0),
                (-1, 7.0),
                (-16, 90.0),
            ],
            streams: vec![(1, 5.0), (2, 6.0), (4, 8.0), (8, 60.0), (16, 9.0)],
            pairs: Some(Pairs {
                next_ns: 60.0,
                buddy_ns: 90.0,
            }),
            levels: Vec::new(),
            ramps: Vec::new(),
            pages: Vec::new(),
        }
    }

    #[test]
    fn prefetched_lines_land_at_the_level_whose_latency_the_unit_walk_costs() {
        let mut f = sample();
        let set = |level: &str, random_ns, unit| LevelWalks {
            level: level.to_string(),
            bytes: 1 << 20,
            random_ns,
            walks: vec![(2, 1.0), (1, unit)],
        };
        // Inside L2 at L1's latency; an "LLC" set whose unit walk is not
        // followed (under half its random chase) says nothing.
        f.levels = vec![set("L2", 6.0, 2.0), set("LLC", 40.0, 30.0)];
        let lat = |n: &str, ns| (n.to_string(), ns);
        let levels = [
            lat("L1D", 2.3),
            lat("L2", 6.8),
            lat("LLC", 40.0),
            lat("memory", 100.0),
        ];
        let l = landing(&f, &levels);
        let got: Vec<(&str, &str)> = l
            .iter()
            .map(|x| (x.set.as_str(), x.level.as_str()))
            .collect();
        // Memory's unit walk costs 5 ns: nearer L2's 6.8 than L1's 2.3 in
        // ratio (1.36 against 2.17).
        assert_eq!(got, [("L2", "L1D"), ("memory", "L2")]);
        assert_eq!(l[1].walk_ns, 5.0);
        assert!(landing(&f, &[]).is_empty());
    }

    #[test]
    fn the_verdict_is_a_pure_function_of_the_measurements() {
        let f = sample();
        let v = verdict(&f);
        assert_eq!(v.followed, [1, 2, 4, 16, 64, 256, 1024, -1]);
        assert!(v.detected && v.backward && v.crosses_pages);
        assert_eq!(v.max_stride_lines, 1024);
        assert!((v.unit_speedup - 20.0).abs() < 1e-9);
        assert_eq!(v.ahead_lines, 20, "100 ns / 5 ns");
        // Lookaheads 10, 8, 10, 8 up to 64 lines, then 4 and 5: two steps.
        assert_eq!((v.stride_ahead, v.reach_lines, v.far_ahead), (9, 64, 5));
        // Streams: followed up to 4 at once (8 is not; 16 after it does not count).
        assert_eq!(v.streams, 4);
        // Pairs: 2 × 60 < 1.5 × 100 (next line), 2 × 90 is not (buddy).
        assert!(v.next_line && !v.adjacent_line);
        assert_eq!(verdict(&f), v);
        // Streams of 2 and 4 cost 6 and 8 ns: the least, 6.
        assert_eq!(v.streams_ns, 6.0);
        assert_eq!(
            model(&v, "L2", 1, &Fills::new()),
            [
                "ip-stride-table:1=19:2=9:4=7:16=9:64=7:256=3:1024=4@L1D",
                "stream:20:1:4@L2",
                "next-line:1@L1D"
            ]
        );
        // Confirmed after 3 repeats: both the stride table and the streamer.
        assert_eq!(
            model(&v, "L2", 3, &Fills::new())[..2],
            [
                "ip-stride-table:c=3:1=19:2=9:4=7:16=9:64=7:256=3:1024=4@L1D",
                "stream:20:1:4:3@L2"
            ]
        );
        // One level of lookahead: no step, every stride alike.
        let flat = Fingerprint {
            walks: vec![(1, 5.0), (2, 10.0), (64, 11.0), (1024, 9.0)],
            ..sample()
        };
        let v = verdict(&flat);
        assert_eq!((v.stride_ahead, v.reach_lines, v.far_ahead), (10, 0, 0));
        assert_eq!(
            model(&v, "L2", 1, &Fills::new())[0],
            "ip-stride-table:1=19:2=9:64=8:1024=10@L1D"
        );
        // Followed up to 32 lines within a page, 63 partly (1.8 lines
        // in flight: in the curve, one ahead), 64 not at all (128
        // partly, but after 64: beyond the reach), shaped like
        // the Xeon VM's walks of 2026-12-03: the region streamer
        // counts steps of 2 lines, so the stride table runs the longer
        // strides, up to 63 lines.
        let in_page = Fingerprint {
            walks: vec![
                (1, 5.0),
                (2, 10.0),
                (4, 45.0),
                (32, 40.0),
                (63, 55.0),
                (64, 99.0),
                (128, 60.0),
                (-1, 6.0),
            ],
            ..sample()
        };
        let v = verdict(&in_page);
        assert!(!v.crosses_pages);
        // Lookahead one fewer than the lines in flight: 100/5 = 20 → 19,
        // 100/40 = 2.5 → 2 (half away from zero), 100/55 = 1.8 → 1.
        assert_eq!(v.curve, [(1, 19), (2, 9), (4, 1), (32, 2), (63, 1)]);
        assert_eq!((v.max_stride_lines, v.stride_reach), (32, 63));
        assert_eq!(
            model(&v, "L2", 2, &Fills::new())[0],
            "ip-stride-table:c=2:r=63:1=19:2=9:4=1:32=2:63=1@L1D"
        );
        // Only unit and 2-line strides followed: the streamer alone.
        let near = Fingerprint {
            walks: vec![(1, 5.0), (2, 10.0), (4, 90.0), (64, 99.0)],
            ..sample()
        };
        let v = verdict(&near);
        assert_eq!((v.max_stride_lines, v.stride_reach), (2, 2));
        assert!(model(&v, "L2", 1, &Fills::new())[0].starts_with("stream:"));
        // The sample follows every walk beyond its longest followed stride
        // partly or fully: no reach.
        assert_eq!(verdict(&f).stride_reach, 0);
        let none = Fingerprint {
            walks: vec![(1, 95.0), (-1, 99.0)],
            streams: vec![(1, 95.0)],
            pairs: Some(Pairs {
                next_ns: 99.0,
                buddy_ns: 99.0,
            }),
            ..sample()
        };
        let v = verdict(&none);
        assert!(!v.detected && !v.backward && !v.crosses_pages && v.max_stride_lines == 0);
        assert_eq!((v.streams, v.ahead_lines), (0, 0));
        assert!(model(&v, "L2", 1, &Fills::new()).is_empty());
    }

    /// The streamer fills L2 only when the several-streams walk costs
    /// clearly more than an L2 hit: within the margin it stays at L1.
    #[test]
    fn the_streamer_fills_l2_only_past_the_margin() {
        let spec = sim::Machine::from_toml(sim::presets::preset("xeon-2s").unwrap())
            .unwrap()
            .spec;
        let l2 = spec.core.caches[1].latency_ns;
        let at = |ns: f64| {
            let v = Verdict {
                streams_ns: ns,
                ..verdict(&sample())
            };
            stream_level(&spec, &v)
        };
        let (l1, l2name) = (&spec.core.caches[0].name, &spec.core.caches[1].name);
        assert_eq!(&at(0.9 * l2), l1);
        assert_eq!(&at(1.05 * l2), l1, "within the margin");
        assert_eq!(&at(1.3 * l2), l2name);
        assert_eq!(&at(0.0), l2name, "no multi-stream walk followed");
    }
}
