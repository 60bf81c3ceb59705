//! A comparison run and written: what `compare` and each sweep point do
//! with an experiment's text — the kind it is (request model, task trace,
//! line level) run through `lab::compare`, then the table printed and the
//! result's files written (`compare.csv`, `compare.json`, plots,
//! requests, monitoring, timeline, manifest).

use std::path::PathBuf;

use crate::machines::load_machine;
use crate::output::{ensure_dir, write_file, write_json};
use anyhow::{Context, Result, bail};
use lab::kinds::AnyExperiment;

const TIMELINE: &str = "--timeline on compare shows the request model's batches; for tasks use replay --workers --timeline";

/// What to compare and how: `compare`'s arguments, or a sweep point's.
pub struct Ask {
    /// The experiment file (its text is given to [`run`]).
    pub experiment: PathBuf,
    pub out: Option<PathBuf>,
    pub duration: Option<f64>,
    pub seeds: Option<Vec<u64>>,
    pub threads: Option<usize>,
    pub qps: Option<f64>,
    pub timeline: Option<PathBuf>,
    pub timeline_window: String,
    pub timeline_row: Option<String>,
    pub report: bool,
    pub fidelity: Option<String>,
    /// The command line the manifest records instead of this process's
    /// (a sweep point records the `compare` that runs it alone).
    pub recorded: Option<Vec<String>>,
    /// Print no table (a sweep's points).
    pub quiet: bool,
}

/// `compare` on an experiment's `text` as if read from `a.experiment`
/// (a sweep point's overridden experiment; `file_text` is the file as
/// read, which the manifest records).
pub fn run(a: &Ask, text: &str, file_text: &str) -> Result<()> {
    let rec = crate::manifest::Record {
        args: a
            .recorded
            .clone()
            .unwrap_or_else(crate::manifest::process_args),
        experiment: crate::manifest::experiment_input(
            &a.experiment.display().to_string(),
            file_text,
        ),
        quiet: a.quiet,
    };
    let origin = a.experiment.display().to_string();
    let mut any = AnyExperiment::parse_file_text(&a.experiment, text)?;
    if let Some(s) = &a.seeds {
        any.meta().seeds = s.clone();
    }
    let lines = a.fidelity.as_deref() == Some("lines");
    let mut exp = match any {
        AnyExperiment::Tasks(t) => {
            if a.timeline.is_some() {
                bail!("{TIMELINE}");
            }
            if a.duration.is_some() || a.qps.is_some() {
                bail!(
                    "--duration and --qps apply to the request model; a task trace's load is its workload.arrivals"
                );
            }
            if a.fidelity.as_deref() == Some("flow") {
                bail!("--fidelity flow: a task trace workload runs at line level only");
            }
            let opts = lab::compare::Options {
                threads: a.threads,
                ..Default::default()
            };
            let tc = lab::compare::tasks(&t, &origin, &opts, &|_, _| {})?;
            let r = lab::compare::files::tasks(&t, &tc, a.out.is_some())?;
            return finish(a, &rec, r, &t.inputs, || {});
        }
        AnyExperiment::Requests(e) => e,
    };
    if a.timeline.is_some() && lines {
        bail!("{TIMELINE}");
    }
    if let Some(d) = a.duration {
        exp.workload.duration_s = d;
    }
    if let Some(q) = a.qps {
        if !(q.is_finite() && q > 0.0) {
            bail!("--qps must be positive");
        }
        exp.workload.qps = q;
    }
    if lines {
        let opts = lab::compare::Options {
            threads: a.threads,
            ..Default::default()
        };
        lab::lines::check(&exp, &origin)?;
        let lc = lab::compare::lines(&exp, &origin, &opts, &|_, _| {})?;
        let r = lab::compare::files::lines(&exp, &lc, a.out.is_some())?;
        return finish(a, &rec, r, &exp.inputs, || {});
    }
    let m = load_machine(&exp.workload.machine, &exp.inputs)?;
    let window = a
        .timeline
        .as_ref()
        .map(|_| crate::timeline::parse_window(&a.timeline_window))
        .transpose()?;
    let shown = match &a.timeline_row {
        None => 0,
        Some(n) => exp.row.iter().position(|r| &r.name == n).with_context(|| {
            format!(
                "--timeline-row {n:?}: no such row in {}",
                a.experiment.display()
            )
        })?,
    };
    let opts = lab::compare::Options {
        threads: a.threads,
        keep_records: a.out.is_some(),
        timeline: window.map(|w| (shown, w.1)),
    };
    let clock = std::time::Instant::now();
    let c = lab::compare::flow(&exp, &m, &opts, &|_, _| {})
        .map_err(|e| anyhow::anyhow!("{}: {e}", a.experiment.display()))?;
    let secs = clock.elapsed().as_secs_f64();
    if let (Some(path), Some(w)) = (&a.timeline, window) {
        let row = &c.rows[shown];
        let ev = lab::timeline::serve::events(&row.first_records, &row.first_totals, w);
        write_file(path, lab::timeline::to_json(&ev)?.as_bytes())?;
    }
    let r = lab::compare::files::flow(&exp, &c, a.out.is_some())?;
    // After the table: the wall times (stderr; not results).
    let tell = || {
        eprintln!(
            "simulated {} requests in {secs:.2} s of wall time ({:.0} requests/s)",
            c.simulated,
            c.simulated as f64 / secs.max(1e-9)
        );
        for row in &c.rows {
            let mut w = row.predict_wall_ns.clone();
            if !w.is_empty() {
                w.sort_unstable();
                eprintln!(
                    "{}: real prediction time p50 {} ns, p99 {} ns over {} predictions (wall clock; reported, not simulated)",
                    row.name,
                    analysis::stats::quantile_sorted(&w, 0.5),
                    analysis::stats::quantile_sorted(&w, 0.99),
                    w.len()
                );
            }
        }
    };
    finish(a, &rec, r, &exp.inputs, tell)
}

/// Prints a rendered comparison and then `tell`s (unless quiet), writes its files and
/// manifest into `--out`, and its report if asked.
fn finish(
    a: &Ask,
    rec: &crate::manifest::Record,
    r: lab::compare::files::Rendered,
    log: &lab::InputLog,
    tell: impl FnOnce(),
) -> Result<()> {
    if !rec.quiet {
        print!("{}", r.text);
        tell();
    }
    if let Some(dir) = &a.out {
        ensure_dir(dir)?;
        crate::output::write_all(dir, &r.files)?;
        write_json(
            &dir.join("manifest.json"),
            &crate::manifest::manifest_as(&rec.args, vec![rec.experiment.clone()], r.config, log),
        )?;
    }
    crate::report::after(a.report, a.out.as_deref())
}
