//! `bench/heldout.py` (issue 29, item 5): the held-out validation patterns
//! come from families and a seed, and none of its strides is one the
//! calibration's fingerprint walks (`live::fingerprint::STRIDES`).

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

fn families(seed: u32, dir: &std::path::Path) -> String {
    let o = Command::new("python3")
        .args([
            "bench/heldout.py",
            "--dry-run",
            "--seed",
            &seed.to_string(),
            "--out",
        ])
        .arg(dir)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    std::fs::read_to_string(dir.join("families.csv")).unwrap()
}

/// The rows of families.csv (no field holds a comma or a quote).
fn records(csv_text: &str) -> Vec<Vec<&str>> {
    let rows: Vec<Vec<&str>> = csv_text
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect())
        .collect();
    assert!(
        rows.iter()
            .all(|r| r.len() == 5 && !r.concat().contains('"')),
        "{csv_text}"
    );
    rows
}

/// The number after `flag` in a `trace gen` command, if the flag is there.
fn after(command: &str, flag: &str) -> Option<u64> {
    let words: Vec<&str> = command.split(' ').collect();
    let i = words.iter().position(|w| *w == flag)?;
    Some(words[i + 1].parse().unwrap())
}

/// (stride in lines, footprint, backward) of every stride trace.
fn strides(csv_text: &str) -> Vec<(u64, u64, bool)> {
    let mut out = Vec::new();
    for rec in records(csv_text) {
        if rec[1] != "stride" {
            continue;
        }
        let after = |flag: &str| after(rec[4], flag).unwrap();
        out.push((
            after("--stride") / 64,
            after("--footprint"),
            rec[4].split(' ').any(|w| w == "--backward"),
        ));
    }
    out
}

#[test]
fn held_out_families_come_from_a_seed_and_avoid_the_walked_strides() {
    let dir = tempfile::tempdir().unwrap();
    let a = families(1, &dir.path().join("a"));
    let again = families(1, &dir.path().join("b"));
    assert_eq!(a.replace("/a/", "/b/"), again, "same seed, same families");
    let mut per_family: BTreeMap<String, usize> = BTreeMap::new();
    for rec in records(&a) {
        *per_family.entry(rec[1].to_string()).or_default() += 1;
    }
    let want: BTreeMap<String, usize> = [
        ("random", 3),
        ("stride", 4 * 4 * 2),
        ("interleaved", 4),
        ("gapped", 2),
        ("zipf", 2),
        ("program", 2),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    assert_eq!(per_family, want);
    // Which families the calibration fits a parameter to (on other
    // sizes, strides, stream counts) is said per trace.
    for rec in records(&a) {
        let fitted = matches!(rec[1], "random" | "stride" | "interleaved");
        assert_eq!(rec[2], if fitted { "yes" } else { "no" }, "{rec:?}");
        // Every line of a footprint at least twice (a warming pass, then
        // the timed one), but Zipf's, which never covers its footprint.
        if let (Some(fp), Some(n)) = (after(rec[4], "--footprint"), after(rec[4], "-n"))
            && rec[1] != "zipf"
        {
            assert!(n >= 2 * fp / 64, "{rec:?}");
        }
    }
    // Interleaved stream counts the fingerprint does not walk.
    for rec in records(&a).iter().filter(|r| r[1] == "interleaved") {
        let n = after(rec[4], "--streams").unwrap() as u32;
        assert!(!live::fingerprint::STREAMS.contains(&n), "{rec:?}");
    }

    let walked: BTreeSet<u64> = live::fingerprint::STRIDES
        .iter()
        .map(|s| s.unsigned_abs())
        .collect();
    // The script's own copy of the walked strides is the fingerprint's.
    let script = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("bench/heldout.py"),
    )
    .unwrap();
    let line = script
        .lines()
        .find(|l| l.starts_with("WALKED = {"))
        .unwrap();
    let copy: BTreeSet<u64> = line["WALKED = {".len()..line.len() - 1]
        .split(", ")
        .map(|x| x.parse().unwrap())
        .collect();
    assert_eq!(copy, walked);

    let s = strides(&a);
    let lines: BTreeSet<u64> = s.iter().map(|x| x.0).collect();
    assert_eq!(lines.len(), 4, "{lines:?}");
    let prime = |n: u64| n > 1 && (2..n).all(|d| n % d != 0);
    assert!(
        lines.iter().filter(|&&n| prime(n)).count() >= 2,
        "{lines:?}"
    );
    for &n in &lines {
        assert!((2..=100).contains(&n) && !walked.contains(&n), "stride {n}");
        // Four footprints, each forward and backward.
        let fps: BTreeSet<(u64, bool)> =
            s.iter().filter(|x| x.0 == n).map(|x| (x.1, x.2)).collect();
        assert_eq!(fps.len(), 8, "stride {n}: {fps:?}");
        // A line count coprime to the stride: the modular walk visits every line.
        let gcd = |mut a: u64, mut b: u64| {
            while b != 0 {
                (a, b) = (b, a % b);
            }
            a
        };
        assert!(
            fps.iter().all(|&(fp, _)| gcd(fp / 64, n) == 1),
            "stride {n}: {fps:?}"
        );
    }
    let other: BTreeSet<u64> = strides(&families(2, &dir.path().join("c")))
        .iter()
        .map(|x| x.0)
        .collect();
    assert_ne!(other, lines, "another seed draws other strides");
}
