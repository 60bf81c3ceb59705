//! Live replay: a trace's data accesses executed on the real machine.
//!
//! The trace's footprint is remapped into one page-aligned allocation: its
//! pages in address order, untouched pages left out, every address keeping
//! its offset within its page (so line and page structure, and the strides
//! between touched pages, are the trace's); pages are first touched, by a
//! write, by the thread that will use them (first-touch). Each trace thread runs
//! pinned to a CPU and executes its loads and stores in trace order, each
//! load waiting for the one before it like a pointer chase — compare with
//! `--mlp 1` in the model. Latency is measured per chunk of accesses (never
//! per single load): chunk time / chunk size.
//!
//! Two harnesses issue the accesses ([`Harness`]):
//! - **chain**, for a trace of loads in which no line is visited more than
//!   8 times in a pass (8 words to a line): the trace is laid into the
//!   buffer as a pointer chain, each access's word holding the index of
//!   the next access's word, and the loop is `j = w[j]` — the loop of the
//!   calibration's chases and the prefetcher fingerprint's walks, nothing
//!   else in the caches. The k-th visit to a line uses its k-th word.
//! - **ops** otherwise: an op list (4 bytes per access) is streamed beside
//!   the data, and each load's address is its op plus the previous load's
//!   value times zero.
//!
//! Both loops have one load instruction ([`crate::chase`]), so the host's
//! PC-indexed prefetchers see the trace's own strides, as the model does.
//! Neither loop has a branch on a loaded value: on an EPYC VM a bounds
//! check on each loaded index made strided walks 2–3× slower than the
//! same walk unchecked (27 against 9.5 ns at 2 lines; random walks
//! unchanged). That check was the gap between the trace replay and the
//! fingerprint's walks.

use std::collections::HashMap;
use std::time::Instant;

use crate::chase::{self, WRITE};
use crate::tsc;

use traces::{Access, Kind};

use crate::LiveError;
use crate::os::{PageBuf, pin_current_thread};

/// Accesses per timed chunk.
pub const CHUNK: usize = 256;

/// The loop a replay ran (see the module doc).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Harness {
    /// The trace laid in the buffer as a pointer chain.
    Chain,
    /// An op list streamed beside the data.
    #[default]
    Ops,
}

impl Harness {
    pub fn name(self) -> &'static str {
        match self {
            Harness::Chain => "chain",
            Harness::Ops => "ops",
        }
    }
}

/// Visits a line may take in a chain: its words.
const WORDS_PER_LINE: usize = 8;

/// The chain's slot (word index) for every op of every thread, the k-th
/// visit to a line over all threads taking its k-th word; `None` when some
/// line is visited more often than it has words, or a trace has stores (a
/// store in a chain needs a branch on the loaded value, and such a branch
/// — like a bounds check — slowed strided walks on an EPYC VM by 1.8×).
fn chain_slots(threads: &[(u32, Vec<u32>)], words: usize) -> Option<Vec<Vec<u32>>> {
    let mut visits = vec![0u8; words.div_ceil(WORDS_PER_LINE)];
    threads
        .iter()
        .map(|(_, ops)| {
            ops.iter()
                .map(|&op| {
                    if op & WRITE != 0 {
                        return None;
                    }
                    let line = (op & !WRITE) as usize / WORDS_PER_LINE;
                    let k = visits.get_mut(line)?;
                    if *k as usize >= WORDS_PER_LINE {
                        return None;
                    }
                    let slot = line * WORDS_PER_LINE + *k as usize;
                    *k += 1;
                    Some(slot as u32)
                })
                .collect()
        })
        .collect()
}

/// What a live replay measured.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct LiveResult {
    /// The loop that issued the accesses.
    pub harness: Harness,
    pub accesses: u64,
    pub elapsed_ns: f64,
    /// Per-access latency (ns): mean, and p50/p99 over chunks.
    pub mean_ns: f64,
    pub p50_ns: f64,
    pub p99_ns: f64,
}

/// Replays `records` (data accesses; instruction fetches are skipped) with
/// trace thread `t` pinned to `cpus[t % cpus.len()]`, after `warm` passes
/// that are not timed; in transparent huge pages when `huge` (as `live
/// calibrate --huge-pages` measures).
pub fn replay(
    records: &[Access],
    cpus: &[u32],
    warm: usize,
    huge: bool,
) -> Result<LiveResult, LiveError> {
    if cpus.is_empty() {
        return Err(LiveError::NoCpusGiven);
    }
    let data = || records.iter().filter(|a| a.kind != Kind::IFetch);
    let mut sorted: Vec<u64> = data().map(|a| a.addr >> 12).collect();
    sorted.sort_unstable();
    sorted.dedup();
    let pages: HashMap<u64, usize> = sorted.iter().enumerate().map(|(i, &p)| (p, i)).collect();
    drop(sorted);
    let mut per_thread: HashMap<u32, Vec<u32>> = HashMap::new();
    for a in data() {
        let idx = pages[&(a.addr >> 12)];
        // Word offset in the allocation (8-byte aligned within the page).
        let off = idx * 4096 + (a.addr as usize & 4095) / 8 * 8;
        per_thread.entry(a.thread).or_default().push(
            (off / 8) as u32
                | if matches!(a.kind, Kind::Store | Kind::Modify) {
                    WRITE
                } else {
                    0
                },
        );
    }
    let mut threads: Vec<(u32, Vec<u32>)> = per_thread.into_iter().collect();
    threads.sort_by_key(|(t, _)| *t);
    let bytes = pages.len().max(1) * 4096;
    let mut buf = if huge {
        PageBuf::huge(bytes)?
    } else {
        PageBuf::new(bytes)?
    };
    let base = buf.as_mut_ptr() as usize;
    let words = buf.len() / 8;
    let harness;
    let handles: Vec<_> = match chain_slots(&threads, words) {
        Some(slots) => {
            harness = Harness::Chain;
            threads
                .into_iter()
                .zip(slots)
                .enumerate()
                .map(|(k, ((_, ops), slots))| {
                    let cpu = cpus[k % cpus.len()];
                    std::thread::spawn(move || run_chain(base, words, cpu, &ops, &slots, warm))
                })
                .collect()
        }
        None => {
            harness = Harness::Ops;
            threads
                .into_iter()
                .enumerate()
                .map(|(k, (_, ops))| {
                    let cpu = cpus[k % cpus.len()];
                    std::thread::spawn(move || run_ops(base, words, cpu, &ops, warm))
                })
                .collect()
        }
    };
    let t0 = Instant::now();
    let mut all = Vec::new();
    let mut n = 0u64;
    for h in handles {
        let (c, k) = h.join().map_err(|_| LiveError::Panicked("replay"))??;
        all.extend(c);
        n += k;
    }
    let elapsed = t0.elapsed().as_nanos() as f64;
    drop(buf);
    let (mean_ns, p50_ns, p99_ns) = chunk_stats(&mut all);
    Ok(LiveResult {
        harness,
        accesses: n,
        elapsed_ns: elapsed,
        mean_ns,
        p50_ns,
        p99_ns,
    })
}

/// One thread's chain replay: lays its chain (the first touch, by writes),
/// then walks it `warm + 1` times, timing the last pass per chunk.
fn run_chain(
    base: usize,
    words: usize,
    cpu: u32,
    ops: &[u32],
    slots: &[u32],
    warm: usize,
) -> Result<(Vec<f64>, u64), LiveError> {
    pin_current_thread(cpu)?;
    in_bounds(slots.iter().copied(), words)?;
    // SAFETY: the allocation outlives the threads (joined by `replay`);
    // every slot is a word of it (checked above), and the words hold only
    // slots; each thread writes only its own slots (`chain_slots` gives
    // every visit its own word), and only here, before the walks.
    let w = unsafe { std::slice::from_raw_parts_mut(base as *mut u64, words) };
    let n = ops.len();
    lay_chain(w, slots);
    let mut j = slots.first().copied().unwrap_or(0) as usize;
    let mut chunks = Vec::with_capacity(n / CHUNK + 1);
    for pass in 0..=warm {
        let mut left = n;
        while left > 0 {
            let len = left.min(CHUNK);
            left -= len;
            let t = tsc::start();
            // Unchecked, as in the calibration's chases: a bounds check
            // on each loaded index made strided walks 2–3× slower on an
            // EPYC VM (9.5 against 27 ns at 2 lines; random walks
            // unchanged), which no plain pointer chase pays.
            // SAFETY: `j` is a slot and every slot's word holds a slot
            // (see above).
            j = unsafe { chase::chase(w.as_ptr(), j, len) };
            if pass == warm {
                chunks.push(tsc::ns(t, tsc::stop()) / len as f64);
            }
        }
    }
    std::hint::black_box(j);
    Ok((chunks, n as u64))
}

/// Lays the chain: each slot's word holds the next slot (the last, the
/// first), written volatile — it is also the threads' first touch, by
/// writes. Slots outside `w` are skipped (`run_chain` checks them first).
fn lay_chain(w: &mut [u64], slots: &[u32]) {
    let n = slots.len();
    for (i, &s) in slots.iter().enumerate() {
        if let Some(x) = w.get_mut(s as usize) {
            // SAFETY: `x` is a valid, aligned word of the buffer.
            unsafe { std::ptr::write_volatile(x, slots[(i + 1) % n] as u64) };
        }
    }
}

/// Checks that every word index is inside the buffer, which the unchecked
/// loads of the replay loops rely on (true by construction; checked once
/// per replay, outside the timed passes).
fn in_bounds(mut idx: impl Iterator<Item = u32>, words: usize) -> Result<(), LiveError> {
    match idx.find(|&i| i as usize >= words) {
        Some(index) => Err(LiveError::OutOfBounds { index, words }),
        None => Ok(()),
    }
}

/// One thread's op-list replay: first-touches its words by writes, then
/// runs its ops `warm + 1` times, timing the last pass per chunk.
fn run_ops(
    base: usize,
    words: usize,
    cpu: u32,
    ops: &[u32],
    warm: usize,
) -> Result<(Vec<f64>, u64), LiveError> {
    pin_current_thread(cpu)?;
    in_bounds(ops.iter().map(|&op| op & !WRITE), words)?;
    // SAFETY: the allocation outlives the threads (joined by `replay`);
    // every op's word is in it (checked above); concurrent threads may race on
    // shared words, which only changes values, never which word
    // is touched (a loaded value enters the index only as `& 0`).
    let w = unsafe { std::slice::from_raw_parts_mut(base as *mut u64, words) };
    let zero = std::hint::black_box(0usize);
    let mut dep = 0usize;
    let mut chunks = Vec::with_capacity(ops.len() / CHUNK + 1);
    // First touch, by a write: a page only ever read stays
    // mapped to the kernel's shared zero page, and every load
    // of it would hit in the cache whatever the trace does.
    for &op in ops {
        if let Some(x) = w.get_mut((op & !WRITE) as usize) {
            // SAFETY: `x` is a valid, aligned word of the buffer.
            unsafe { std::ptr::write_volatile(x, std::ptr::read_volatile(x)) };
        }
    }
    for pass in 0..=warm {
        for c in ops.chunks(CHUNK) {
            let t = tsc::start();
            // `dep & zero` is 0 but the CPU cannot know: each load waits
            // for the one before it.
            // SAFETY: every op's word is in the buffer (see above), `zero`
            // is 0; unchecked as in the chain harness.
            dep = unsafe { chase::run_ops(w.as_mut_ptr(), c, dep, zero) };
            if pass == warm {
                chunks.push(tsc::ns(t, tsc::stop()) / c.len() as f64);
            }
        }
    }
    std::hint::black_box(dep);
    Ok((chunks, ops.len() as u64))
}

/// Mean, p50 and p99 of per-chunk mean latencies (sorts `v`); zeros if empty.
pub fn chunk_stats(v: &mut [f64]) -> (f64, f64, f64) {
    if v.is_empty() {
        return (0.0, 0.0, 0.0);
    }
    v.sort_by(f64::total_cmp);
    let q = |x: f64| v[((x * v.len() as f64) as usize).min(v.len() - 1)];
    (v.iter().sum::<f64>() / v.len() as f64, q(0.5), q(0.99))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_visit_to_a_line_takes_its_own_word_of_that_line() {
        // Thread 0 visits line 0 twice and line 3 once; thread 1 visits
        // line 0 (word 5 in the trace) and line 1.
        let threads = vec![(0, vec![0, 24, 1]), (1, vec![5, 8])];
        let slots = chain_slots(&threads, 64).unwrap();
        assert_eq!(slots, vec![vec![0, 24, 1], vec![2, 8]]);
    }

    #[test]
    fn a_ninth_visit_to_a_line_or_a_store_leaves_the_chain() {
        let nine = vec![(0, (0..9).map(|k| k % 8).collect::<Vec<u32>>())];
        assert!(chain_slots(&nine, 64).is_none());
        let eight = vec![(0, (0..8).collect::<Vec<u32>>())];
        assert!(chain_slots(&eight, 64).is_some());
        let store = vec![(0, vec![0, 8 | WRITE])];
        assert!(chain_slots(&store, 64).is_none());
    }

    #[test]
    fn the_chain_walks_the_slots_in_trace_order_and_closes() {
        let slots = [16u32, 0, 40, 1, 9];
        let mut w = vec![u64::MAX; 64];
        lay_chain(&mut w, &slots);
        let mut j = slots[0] as usize;
        let walked: Vec<u32> = (0..slots.len() + 1)
            .map(|_| {
                let here = j as u32;
                j = w[j] as usize;
                here
            })
            .collect();
        assert_eq!(walked, [16, 0, 40, 1, 9, 16]);
    }

    #[test]
    fn an_index_outside_the_buffer_is_an_error_not_a_load() {
        assert!(in_bounds([0u32, 7].into_iter(), 8).is_ok());
        let e = in_bounds([0u32, 8].into_iter(), 8).unwrap_err();
        assert!(
            e.to_string().contains("word 8 outside its 8-word buffer"),
            "{e}"
        );
    }
}
