//! One experiment type for every kind: the schema's `[workload]` decides
//! (a `trace` key: a recorded task trace; otherwise the request model),
//! and each kind keeps its own schema's errors.

use std::path::Path;

use lab::kinds::AnyExperiment;

const TASKS: &str = r#"
[experiment]
name = "svc"
seeds = [1, 2]

[workload]
trace = "traces/svc.csv"
machine = "xeon-2s"
workers = "4"

[[row]]
name = "static"
scheduler = "round-robin"
"#;

#[test]
fn the_workload_decides_the_kind() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/seed-inference.toml");
    match AnyExperiment::load(&path).unwrap().0 {
        AnyExperiment::Requests(e) => assert_eq!(e.row[0].name, "static"),
        AnyExperiment::Tasks(_) => panic!("the seed is a request-model experiment"),
    }
    let mut t = AnyExperiment::parse_file_text(Path::new("exp/t.toml"), TASKS).unwrap();
    t.meta().seeds = vec![7];
    match t {
        AnyExperiment::Tasks(t) => {
            assert_eq!(
                t.base,
                Path::new("exp"),
                "the trace resolves beside the file"
            );
            assert_eq!(t.experiment.seeds, vec![7]);
            assert_eq!(t.row[0].placement, "first-touch", "the schema's default");
        }
        AnyExperiment::Requests(_) => panic!("a workload with a trace is a task trace"),
    }
}

#[test]
fn each_kind_words_its_own_schema_errors() {
    // A request-model field in a task-trace workload: the task schema's
    // error, which lists the task-trace workload's fields.
    let bad = TASKS.replace("workers = \"4\"", "workers = \"4\"\nqps = 100.0");
    let e = AnyExperiment::parse_file_text(Path::new("t.toml"), &bad)
        .err()
        .expect("qps is not a task-trace workload field")
        .to_string();
    assert!(e.starts_with("t.toml: "), "{e}");
    assert!(
        e.contains("unknown field `qps`, expected one of `trace`"),
        "{e}"
    );
    // A task-trace field in a workload without a trace: the request
    // model's schema refuses it.
    let bad = TASKS.replace("trace = \"traces/svc.csv\"\n", "");
    let e = AnyExperiment::parse_file_text(Path::new("r.toml"), &bad)
        .err()
        .expect("workers is not a request-model workload field")
        .to_string();
    assert!(e.starts_with("r.toml: "), "{e}");
    assert!(e.contains("unknown field `workers`"), "{e}");
    assert!(!e.contains("expected one of `trace`"), "{e}");
}
