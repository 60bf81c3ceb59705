//! The TLB fit of `live calibrate` (`lab::tlb_fit`) on its own: walks
//! this host's pages (`live::fingerprint::page_walks`, pinned to the first
//! allowed CPU) — or reads them from a recorded fingerprint — and fits
//! `[core.tlb]` to them for the machine file given.
//!
//!     cargo run --release -p lab --example tlb_fit -- MACHINE.toml [FP.prefetch.json]
//!
//! Prints the walks (pages, host ns per load) and the fit's note.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let a: Vec<String> = std::env::args().collect();
    if a.len() < 2 {
        return Err("usage: tlb_fit MACHINE.toml [FP.prefetch.json]".into());
    }
    let m = lab::machines::load(&a[1], &lab::InputLog::default())?;
    let walks: Vec<(u32, f64)> = match a.get(2) {
        Some(fp) => {
            let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(fp)?)?;
            let f: live::fingerprint::Fingerprint =
                serde_json::from_value(v["fingerprint"].clone())?;
            f.pages
        }
        None => {
            let cpus = live::os::allowed_cpus()?;
            live::os::pin_current_thread(cpus[0])?;
            live::fingerprint::page_walks(200_000, 5, 0xF3)?
        }
    };
    for (p, ns) in &walks {
        println!("{p} {ns:.3}");
    }
    let fit = lab::tlb_fit::fit(&m.spec, &walks)?;
    println!("{}", fit.note);
    Ok(())
}
