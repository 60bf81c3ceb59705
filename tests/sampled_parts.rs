//! A sampled replay split into parts (`replay --sample … --parts N`):
//! one part is the unsplit run; parts measure every unit exactly once; a
//! part warmed over everything before it starts where the unsplit run
//! stood (one thread, no prefetcher); the parts run one by one
//! (`--part K`, what a Slurm array task runs) and merged (`--merge`) give
//! the local run's summary byte for byte; parts of another run, a broken
//! or missing part file and a part out of range are one-line errors; the
//! Slurm scripts run this very command line. `ci/slurm-sweep.sh` runs the
//! split on a one-node Slurm cluster.

mod common;

use common::{numasim, one_line_error, stdout as ok};
use serde_json::Value;

fn trace(dir: &std::path::Path, threads: &str) -> String {
    let t = dir.join(format!("t{threads}.nst")).display().to_string();
    let generate = ["trace", "gen", "zipf", "-n", "200000", "--threads", threads];
    let more = ["--footprint", "4M", "--write-ratio", "0.2", "-o", &t];
    ok(&[&generate[..], &more[..]].concat());
    t
}

const SAMPLE: &[&str] = &["--sample", "500:10000", "--sample-seed", "3"];

fn replay(trace: &str, extra: &[&str]) -> Value {
    common::xeon_replay(trace, &[SAMPLE, extra].concat())
}

#[test]
fn one_part_is_the_unsplit_run_and_parts_measure_every_unit_once() {
    let dir = tempfile::tempdir().unwrap();
    let t = trace(dir.path(), "4");
    let whole = replay(&t, &[]);
    let one = replay(&t, &["--parts", "1"]);
    assert_eq!(one["sampled"], whole["sampled"]);
    let four = replay(&t, &["--parts", "4", "--part-warming", "30000"]);
    let (w, f) = (&whole["sampled"], &four["sampled"]);
    // 200 000 records, a unit every 10 000: 20 units, each measured once.
    assert_eq!(w["units"], 20);
    for k in ["units", "measured", "detailed"] {
        assert_eq!(f[k], w[k], "{k}");
    }
    let parts = four["parts"].as_array().unwrap();
    assert_eq!(parts.len(), 4);
    assert_eq!(parts[0]["from"], 0);
    assert!(parts[3]["to"].is_null(), "the last part runs to the end");
    let mut detailed = 0;
    for p in parts.windows(2) {
        assert_eq!(p[0]["to"], p[1]["from"], "parts follow each other");
    }
    for p in parts {
        assert_eq!(p["warming"], 30000);
        detailed += p["summary"]["accesses"].as_u64().unwrap();
    }
    assert_eq!(detailed, w["detailed"].as_u64().unwrap());
    // Three parts of four warm 30 000 records each besides what the
    // unsplit run warms, and skip the rest before them.
    let warmed = f["warmed"].as_u64().unwrap() + f["skipped"].as_u64().unwrap();
    assert!(warmed > w["warmed"].as_u64().unwrap(), "{f}");
}

/// One thread, no prefetcher: warming replays the records in trace order
/// through the same caches, so a part warmed over every record before it
/// starts its units with the caches the unsplit run had there: where each
/// access was served is the same, and the latencies differ only by what
/// the part's clock starting at 0 changes (under 10⁻⁴ of the mean).
#[test]
fn parts_warmed_over_everything_before_them_are_the_unsplit_run() {
    let dir = tempfile::tempdir().unwrap();
    let t = trace(dir.path(), "1");
    let whole = replay(&t, &[]);
    let split = replay(&t, &["--parts", "3", "--part-warming", "200000"]);
    assert_eq!(split["sampled"]["skipped"], 0);
    let metric = |v: &Value, m: &str| v["sampled"]["metrics"][m]["estimate"].as_f64().unwrap();
    for m in [
        "llc_miss_rate",
        "hit_rate_L1D",
        "hit_rate_L2",
        "hit_rate_LLC",
    ] {
        assert_eq!(metric(&split, m), metric(&whole, m), "{m}");
    }
    let (s, w) = (
        metric(&split, "latency_mean_ns"),
        metric(&whole, "latency_mean_ns"),
    );
    assert!((s - w).abs() < 1e-4 * w, "{s} {w}");
    // Warmed less, the later parts start colder: more LLC misses.
    let cold = replay(&t, &["--parts", "3", "--part-warming", "0"]);
    let rate = |v: &Value| metric(v, "llc_miss_rate");
    assert!(
        rate(&cold) > rate(&whole),
        "{} {}",
        rate(&cold),
        rate(&whole)
    );
}

#[test]
fn parts_run_one_by_one_merge_into_the_local_run_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let t = trace(dir.path(), "4");
    let out = |name: &str| dir.path().join(name).display().to_string();
    // This split (3 parts, each warmed over `warming` records) with `extra`.
    let run_with = |warming: &str, extra: &[&str]| {
        let base = [
            "replay",
            &t,
            "--machine",
            "xeon-2s",
            "--pin",
            "spread",
            "--parts",
            "3",
        ];
        numasim(&[&base[..], SAMPLE, &["--part-warming", warming], extra].concat())
    };
    let run = |extra: &[&str]| run_with("20000", extra);
    let local = run(&["--out", &out("local"), "--json"]);
    assert!(local.status.success());
    for k in ["0", "1", "2"] {
        assert!(run(&["--out", &out("split"), "--part", k]).status.success());
    }
    let merged = run(&["--out", &out("split"), "--merge", "--json"]);
    assert!(merged.status.success());
    assert_eq!(merged.stdout, local.stdout);
    let read = |d: &str| std::fs::read(dir.path().join(d).join("summary.json")).unwrap();
    assert_eq!(read("split"), read("local"));

    // A part of another run (other flags), a broken one, a missing one.
    let other = ["--out", &out("other"), "--part", "1", "--mlp", "4"];
    assert!(run(&other).status.success());
    let part = |d: &str| dir.path().join(d).join("parts").join("part-1.json");
    let good = std::fs::read(part("split")).unwrap();
    std::fs::copy(part("other"), part("split")).unwrap();
    let e = one_line_error(&run(&["--out", &out("split"), "--merge"]));
    assert!(
        e.contains("part-1.json: a part of another run (flags not the same)"),
        "{e}"
    );
    // The same part with another warming: another split.
    let o = run_with("20001", &["--out", &out("warmer"), "--part", "1"]);
    assert!(o.status.success());
    std::fs::copy(part("warmer"), part("split")).unwrap();
    let e = one_line_error(&run(&["--out", &out("split"), "--merge"]));
    assert!(
        e.contains("part-1.json: a part of another run (split not the same)"),
        "{e}"
    );
    std::fs::write(part("split"), &good[..good.len() / 2]).unwrap();
    let e = one_line_error(&run(&["--out", &out("split"), "--merge"]));
    assert!(
        e.contains("part-1.json: not a part file of numasim's: EOF"),
        "{e}"
    );
    std::fs::remove_file(part("split")).unwrap();
    let e = one_line_error(&run(&["--out", &out("split"), "--merge"]));
    assert!(e.contains("part-1.json: No such file"), "{e}");
    let e = one_line_error(&run(&["--out", &out("split"), "--part", "3"]));
    assert!(e.contains("--part 3: no such part; the split has 3"), "{e}");
}

#[test]
fn slurm_scripts_run_this_command_line_per_part_and_merge() {
    let dir = tempfile::tempdir().unwrap();
    let t = trace(dir.path(), "4");
    let out = dir.path().join("o");
    let o = out.display().to_string();
    let base = ["replay", &t, "--machine", "xeon-2s", "--parts", "4"];
    let slurm = [
        "--out",
        &o,
        "--slurm",
        "--array-limit=2",
        "--sbatch-option",
        "--time=5",
        "--dry-run",
    ];
    ok(&[&base[..], SAMPLE, &slurm[..]].concat());
    let array = std::fs::read_to_string(out.join("replay.sbatch")).unwrap();
    let merge = std::fs::read_to_string(out.join("merge.sbatch")).unwrap();
    assert!(array.contains("#SBATCH --array=0-3%2\n"), "{array}");
    for s in [&array, &merge] {
        assert!(s.contains("#SBATCH --time=5\n"), "{s}");
        let here = std::env::current_dir().unwrap().display().to_string();
        assert!(s.contains(&format!("#SBATCH --chdir={here}\n")), "{s}");
        let exec = s.lines().find(|l| l.starts_with("exec ")).unwrap();
        assert!(
            !exec.contains("--sbatch-option") && !exec.contains("--time"),
            "{s}"
        );
        assert!(s.contains(" replay ") && s.contains(" --parts 4 "), "{s}");
        assert!(
            !s.contains("--slurm") && !s.contains("--dry-run") && !s.contains("--array-limit"),
            "{s}"
        );
    }
    assert!(
        array.contains(" --part \"$SLURM_ARRAY_TASK_ID\"\n"),
        "{array}"
    );
    assert!(merge.trim_end().ends_with(" --merge"), "{merge}");
    assert!(!out.join("parts").exists(), "a dry run runs nothing");

    // More parts than units: one part per unit; no parts at all: refused.
    let many = replay(&t, &["--parts", "50", "--part-warming", "1000"]);
    assert_eq!(many["parts"].as_array().unwrap().len(), 20);
    assert_eq!(many["sampled"]["units"], 20);
    let e = one_line_error(&numasim(
        &[&base[..], SAMPLE, &["--parts", "0"][..]].concat(),
    ));
    assert!(e.contains("--parts"), "{e}");

    // Flags that do not go together.
    let e = one_line_error(&numasim(&[
        "replay",
        &t,
        "--machine",
        "xeon-2s",
        "--parts",
        "2",
    ]));
    assert!(e.contains("--sample"), "{e}");
    let ck = ["--save-checkpoint", "c", "--checkpoint-at", "10"];
    let e = one_line_error(&numasim(&[&base[..], SAMPLE, &ck[..]].concat()));
    assert!(e.contains("cannot be used with"), "{e}");
}
