//! A task-trace comparison whose rows share a warm-up (same machine,
//! placement and prefetchers on a seed) runs it once and forks each row
//! from its state: every row's results are those of the row warming by
//! itself ([`lab::tasks::run_one`] without a state), and the warm-ups run
//! are one per distinct placement, prefetchers and seed.

use std::path::Path;

use lab::compare::{Options, tasks};
use lab::kinds::AnyExperiment;

/// Warm-up rows that write a 64 KiB region the tasks then read (so the
/// warm-up changes every task's latency), and 40 tasks on 4 keys.
fn trace_csv() -> String {
    let mut s = String::from("task,op,addr,size,gap_ns,arrival_ns,key\n");
    for i in 0..1024u64 {
        s.push_str(&format!("w,S,{:#x},8,,,\n", 0x100_0000 + 64 * i));
    }
    for t in 0..40u64 {
        s.push_str(&format!("{t},B,,,,{},{}\n", t * 20_000, t % 4));
        for j in 0..64u64 {
            let addr = 0x100_0000 + 64 * ((t * 7 + j * 13) % 1024);
            s.push_str(&format!("{t},L,{addr:#x},8,5,,\n"));
        }
        s.push_str(&format!("{t},E,,,,,\n"));
    }
    s
}

const EXPERIMENT: &str = r#"
[experiment]
name = "fork"
seeds = [1, 2]

[workload]
trace = "t.csv"
machine = "xeon-2s"
workers = "0,1,28,29"

[[row]]
name = "static"
scheduler = "static"

[[row]]
name = "rr"
scheduler = "round-robin"

[[row]]
name = "interleaved"
scheduler = "static"
placement = "interleave"

[[row]]
name = "streamed"
scheduler = "round-robin"
prefetch = ["stream:2:2"]
"#;

fn experiment(dir: &Path, csv: &str) -> Box<lab::tasks::TaskExperiment> {
    std::fs::write(dir.join("t.csv"), csv).unwrap();
    let path = dir.join("e.toml");
    match AnyExperiment::parse_file_text(&path, EXPERIMENT).unwrap() {
        AnyExperiment::Tasks(t) => t,
        AnyExperiment::Requests(_) => panic!("a task experiment"),
    }
}

#[test]
fn rows_that_share_a_warm_up_fork_from_one_and_lose_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let exp = experiment(dir.path(), &trace_csv());
    let opts = Options::default();
    let tc = tasks(&exp, "e.toml", &opts, &|_, _| {}).unwrap();
    // static and rr share first-touch without prefetchers: one shared
    // warm-up per seed; interleaved and streamed warm in their own runs.
    assert_eq!(tc.warmups, 2, "one shared warm-up per seed");
    let m = lab::machines::load(&exp.workload.machine, &exp.inputs).unwrap();
    let trace = lab::tasks::read(&exp.base.join(&exp.workload.trace), &exp.inputs).unwrap();
    assert_eq!(trace.warmup.len(), 1024);
    let cores = [0, 1, 28, 29];
    let mut cold = trace.clone();
    cold.warmup.clear();
    for (r, row) in exp.row.iter().enumerate() {
        for (s, &seed) in exp.experiment.seeds.iter().enumerate() {
            let alone = lab::tasks::run_one(&m, &exp, &trace, &cores, row, seed, &exp.inputs, None)
                .unwrap();
            let forked = &tc.comparison.rows[r].runs[s];
            assert_eq!(forked.latency, alone.latency, "{} seed {seed}", row.name);
            assert_eq!(
                (forked.span_ps, forked.memory_bytes),
                (alone.span_ps, alone.memory_bytes),
                "{} seed {seed}",
                row.name
            );
            // The warm-up matters: without it the tasks take longer.
            let unwarmed =
                lab::tasks::run_one(&m, &exp, &cold, &cores, row, seed, &exp.inputs, None).unwrap();
            assert_ne!(unwarmed.latency, alone.latency, "{}: vacuous", row.name);
        }
    }
}

/// Without warm-up records nothing is shared (there is nothing to run).
#[test]
fn a_trace_without_a_warm_up_runs_none() {
    let dir = tempfile::tempdir().unwrap();
    let csv: String = trace_csv()
        .lines()
        .filter(|l| !l.starts_with("w,"))
        .map(|l| format!("{l}\n"))
        .collect();
    let exp = experiment(dir.path(), &csv);
    let tc = tasks(&exp, "e.toml", &Options::default(), &|_, _| {}).unwrap();
    assert_eq!(tc.warmups, 0);
}
