//! Issue 29, item 2: does a DRAM row left open pay on this host?
//! (`live::rows`: a chase in pairs `d` lines apart against a random one.)
//!
//!     cargo run --release -p live --example dram_rows [MIB [LOADS [ROUNDS]]]
//!
//! Defaults: a 1024 MiB buffer, 1 000 000 loads a run, 3 runs, 7 rounds.
//! Keep the machine quiet while it runs (about five minutes).

fn main() {
    let arg = |i: usize, default: u64| {
        std::env::args()
            .nth(i)
            .map(|a| {
                a.parse()
                    .unwrap_or_else(|_| panic!("argument {i}: not a number: {a}"))
            })
            .unwrap_or(default)
    };
    let (mib, loads, rounds) = (arg(1, 1024), arg(2, 1_000_000), arg(3, 7));
    let w = live::rows::row_walks(mib << 20, loads, 3, rounds as usize, 0xD0)
        .unwrap_or_else(|e| panic!("{e}"));
    println!(
        "buffer {} MiB, huge pages {:.0} %, random chase {:.1} ns per load (median of every run)",
        w.bytes >> 20,
        w.huge_share * 100.0,
        w.random_ns
    );
    println!(
        "| pair distance (lines) | bytes apart | second load / random chase: median | min | max |"
    );
    println!("|---:|---:|---:|---:|---:|");
    for (d, med, lo, hi) in &w.pairs {
        println!(
            "| {d} | {} | {med:.3} | {lo:.3} | {hi:.3} |",
            *d as u64 * 64
        );
    }
}
