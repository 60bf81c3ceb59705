//! Issue 29: does this host pay for address translation inside the caches,
//! and does it in transparent huge pages too? One line on each of N pages,
//! the pages visited in a random cycle, the lines' offsets spread over the
//! L1's sets (so up to 768 pages the data stays in a 48 KiB L1): a
//! dependent walk whose data is L1- or L2-resident while its pages exceed
//! the first-level TLB's reach. The replay remaps the N pages into one
//! allocation, in 4 KiB or 2 MiB pages.
//!
//!     cargo run --release -p live --example tlb_probe [ROUNDS]
//!
//! Prints ns per load for each N, in 4 KiB and in huge pages (median of
//! the rounds); the 8-page walk, within any TLB's reach, is the baseline
//! to read the others against.

use traces::{Access, Kind};

fn walk(pages: u64, loads: usize, seed: u64) -> Vec<Access> {
    // A random cyclic order of the pages (xorshift Fisher–Yates).
    let mut order: Vec<u64> = (0..pages).collect();
    let mut s = seed | 1;
    for i in (1..order.len()).rev() {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        order.swap(i, (s % (i as u64 + 1)) as usize);
    }
    (0..loads)
        .map(|k| {
            let p = order[k % order.len()];
            Access::new(0, Kind::Load, (p << 12) | ((p % 64) << 6), 8)
        })
        .collect()
}

fn main() {
    let rounds: usize = std::env::args()
        .nth(1)
        .map(|a| a.parse().expect("ROUNDS: a number"))
        .unwrap_or(5);
    let cpu = 0;
    let sizes = [
        8u64, 16, 32, 48, 64, 80, 96, 112, 128, 160, 192, 256, 384, 512, 768, 1024, 1536, 2048,
        3072, 4096, 6144, 8192,
    ];
    println!("| pages | 4 KiB pages ns | huge pages ns |");
    println!("|---:|---:|---:|");
    for &n in &sizes {
        let acc = walk(n, 400_000, 0x7115 + n);
        let med = |huge: bool| {
            let mut v: Vec<f64> = (0..rounds)
                .map(|_| {
                    live::replay::replay(&acc, &[cpu], 1, huge)
                        .unwrap_or_else(|e| panic!("{e}"))
                        .mean_ns
                })
                .collect();
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        };
        let (small, huge) = (med(false), med(true));
        println!("| {n} | {small:.3} | {huge:.3} |");
    }
}
