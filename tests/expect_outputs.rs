//! Outputs that are data: compared with files under `tests/expect/`
//! (`UPDATE_EXPECT=1` rewrites them; review the diff).

mod common;

use common::{cmd, expect_file, normalize, root_dir, stdout};

#[test]
fn the_policy_listing() {
    let text = stdout(&["policies"]);
    // The documented form: a heading, then "  NAME  HELP" lines.
    let entries = text.lines().filter(|l| l.starts_with("  ")).count();
    assert!(entries >= 20, "{entries} policies listed");
    for l in text.lines().filter(|l| l.starts_with("  ")) {
        let rest = &l[2..];
        let (name, help) = rest.split_once("  ").expect("two spaces after the name");
        assert!(!name.contains(' ') && !help.trim().is_empty(), "{l:?}");
    }
    expect_file("tests/expect/policies.txt", &text);
}

#[test]
fn trace_info() {
    let dir = tempfile::tempdir().unwrap();
    let mut report = String::new();
    let make = |args: &[&str], name: &str| {
        let out = dir.path().join(name);
        let mut a = vec!["trace", "gen"];
        a.extend_from_slice(args);
        a.extend_from_slice(&["-o", out.to_str().unwrap()]);
        stdout(&a);
        out
    };
    let traces = [
        root_dir().join("tests/data/hello.lackey"),
        make(
            &[
                "zipf",
                "-n",
                "20000",
                "--threads",
                "4",
                "--footprint",
                "1M",
                "--write-ratio",
                "0.2",
            ],
            "zipf.nst",
        ),
        make(
            &["stride", "-n", "5000", "--stride", "192", "--gap-ns", "3"],
            "stride.csv",
        ),
        make(
            &["false-sharing", "-n", "4000", "--threads", "2"],
            "fs.nst.zst",
        ),
    ];
    for t in &traces {
        let o = cmd().args(["trace", "info"]).arg(t).output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        report.push_str(&format!(
            "$ numasim trace info {}\n{}",
            normalize(&t.display().to_string(), Some(dir.path())),
            normalize(&String::from_utf8_lossy(&o.stdout), Some(dir.path()))
        ));
    }
    expect_file("tests/expect/trace-info.txt", &report);
}
