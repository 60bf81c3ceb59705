//! Re-simulates held-out traces against the live medians a `validate` run
//! recorded, without running them live again: for a change to the model
//! or to the calibration's mapping from a recorded fingerprint, it says
//! what the held-out table's simulated column becomes (`validate`'s own
//! simulated replay, `lab::validate::simulate`).
//!
//!     cargo run --release -p lab --example heldout_sim -- \
//!         MACHINE.toml DIR/validate.csv TRACE_DIR [SPEC@LEVEL...]
//!
//! With `FP=host.prefetch.json` the machine's prefetchers are derived
//! again from that recorded fingerprint by today's `live calibrate`
//! mapping (its recorded confirmation count kept, the fill limits fitted
//! again); SPEC@LEVEL arguments
//! replace them. `FILTER=a|b` keeps the traces whose names contain a or b.

use std::path::Path;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let a: Vec<String> = std::env::args().collect();
    if a.len() < 4 {
        return Err(
            "usage: heldout_sim MACHINE.toml validate.csv TRACE_DIR [SPEC@LEVEL...]".into(),
        );
    }
    let log = lab::InputLog::default();
    let mut m = lab::machines::load(&a[1], &log)?;
    if let Ok(fp) = std::env::var("FP") {
        let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&fp)?)?;
        let f: live::fingerprint::Fingerprint = serde_json::from_value(v["fingerprint"].clone())?;
        let mut spec = m.spec.clone();
        let confirm = spec.core.prefetch.as_ref().map_or(1, |p| p.confirm);
        live::fingerprint::apply(&mut spec, &f, &fp);
        live::fingerprint::apply_confirm(&mut spec, &f, confirm);
        for fit in lab::fill_fit::fit(&spec, &f)? {
            println!("{}", fit.note);
            live::fingerprint::apply_fills(&mut spec, &f, &fit.level, fit.fills);
        }
        m = sim::Machine::new(spec)?;
    }
    let pf: Vec<String> = if a.len() > 4 {
        a[4..].to_vec()
    } else {
        lab::validate::prefetchers(&[], &m)
    };
    println!("prefetchers: {}", pf.join(" "));
    let filter = std::env::var("FILTER").unwrap_or_default();
    let (mut n, mut in15, mut over30) = (0, 0, 0);
    for line in std::fs::read_to_string(&a[2])?.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        if f.len() < 4 || f[1] != "mean_ns" || !filter.split('|').any(|x| f[0].contains(x)) {
            continue;
        }
        let live_ns: f64 = f[3].parse()?;
        let acc = lab::input::load_accesses(&Path::new(&a[3]).join(f[0]), None, true)?;
        let (_, mut chunks) =
            lab::validate::simulate(&m, &pf, m.spec.core.mlp as usize, &log, f[0], &acc)?;
        let (mean, _, _) = live::replay::chunk_stats(&mut chunks);
        let e = (mean - live_ns) / live_ns * 100.0;
        n += 1;
        in15 += usize::from(e.abs() <= 15.0);
        over30 += usize::from(e.abs() > 30.0);
        println!("{:<32} live {live_ns:8.2} sim {mean:8.2} {e:+7.1}%", f[0]);
    }
    println!("within 15%: {in15} of {n}; beyond 30%: {over30}");
    Ok(())
}
