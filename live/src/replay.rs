//! Live replay: a trace's data accesses executed on the real machine.
//!
//! The trace's footprint is remapped into one page-aligned allocation: its
//! pages in address order, untouched pages left out, every address keeping
//! its offset within its page (so line and page structure, and the strides
//! between touched pages, are the trace's); pages are first touched, by a
//! write, by the thread that will use them (first-touch). Each trace thread runs
//! pinned to a CPU and executes its loads and stores in trace order; each
//! load's address depends on the previous load's value (plus zero), so the
//! loads are serialised like a pointer chase — compare with `--mlp 1` in
//! the model. Latency is measured per chunk of accesses (never per single
//! load): chunk time / chunk size.

use std::collections::HashMap;
use std::time::Instant;

use crate::tsc;

use traces::{Access, Kind};

use crate::LiveError;
use crate::os::{PageBuf, pin_current_thread};

/// The store flag of an op (the rest is the word index).
const WRITE: u32 = 1 << 31;

/// Accesses per timed chunk.
pub const CHUNK: usize = 256;

/// What a live replay measured.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct LiveResult {
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
/// calibrate --huge-pages` measures: the model has no TLB).
pub fn replay(
    records: &[Access],
    cpus: &[u32],
    warm: usize,
    huge: bool,
) -> Result<LiveResult, LiveError> {
    if cpus.is_empty() {
        return Err(LiveError::Invalid("no CPUs to replay on".into()));
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
    let handles: Vec<_> = threads
        .into_iter()
        .enumerate()
        .map(|(k, (_, ops))| {
            let cpu = cpus[k % cpus.len()];
            std::thread::spawn(move || -> Result<(Vec<f64>, u64), LiveError> {
                pin_current_thread(cpu)?;
                // SAFETY: the allocation outlives the threads (joined below);
                // accesses are bounds-checked; concurrent threads may race on
                // shared words, which only changes values, never which word
                // is touched (a loaded value enters the index only as `& 0`).
                let w = unsafe { std::slice::from_raw_parts_mut(base as *mut u64, words) };
                let zero = std::hint::black_box(0usize);
                let mut dep = 0usize;
                let mut chunks = Vec::with_capacity(ops.len() / CHUNK + 1);
                // First touch, by a write: a page only ever read stays
                // mapped to the kernel's shared zero page, and every load
                // of it would hit in the cache whatever the trace does.
                for &op in &ops {
                    if let Some(x) = w.get_mut((op & !WRITE) as usize) {
                        // SAFETY: `x` is a valid, aligned word of the buffer.
                        unsafe { std::ptr::write_volatile(x, std::ptr::read_volatile(x)) };
                    }
                }
                for pass in 0..=warm {
                    for c in ops.chunks(CHUNK) {
                        let t = tsc::start();
                        for &op in c {
                            // `dep & zero` is 0 but the CPU cannot know: each
                            // load waits for the one before it.
                            let j = (op & !WRITE) as usize + (dep & zero);
                            if let Some(x) = w.get_mut(j) {
                                if op & WRITE != 0 {
                                    *x = x.wrapping_add(1);
                                } else {
                                    dep = *x as usize;
                                }
                            }
                        }
                        if pass == warm {
                            chunks.push(tsc::ns(t, tsc::stop()) / c.len() as f64);
                        }
                    }
                }
                std::hint::black_box(dep);
                Ok((chunks, ops.len() as u64))
            })
        })
        .collect();
    let t0 = Instant::now();
    let mut all = Vec::new();
    let mut n = 0u64;
    for h in handles {
        let (c, k) = h
            .join()
            .map_err(|_| LiveError::Invalid("replay thread panicked".into()))??;
        all.extend(c);
        n += k;
    }
    let elapsed = t0.elapsed().as_nanos() as f64;
    drop(buf);
    let (mean_ns, p50_ns, p99_ns) = chunk_stats(&mut all);
    Ok(LiveResult {
        accesses: n,
        elapsed_ns: elapsed,
        mean_ns,
        p50_ns,
        p99_ns,
    })
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
