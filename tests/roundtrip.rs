//! Round trips: lackey → native → CSV → native (and compressed native) give
//! identical record streams, and `trace info` agrees on every form.

mod common;

use std::path::{Path, PathBuf};

use common::stdout as numasim;
use traces::{Record, collect_all};

fn records(path: &Path) -> Vec<Record> {
    let f = std::fs::File::open(path).unwrap();
    let name = path.file_name().and_then(|n| n.to_str());
    let mut src = traces::registry::open(Box::new(f), name, None).unwrap();
    collect_all(src.as_mut()).unwrap()
}

fn info(path: &Path) -> serde_json::Value {
    let v: serde_json::Value = serde_json::from_str(&numasim(&[
        "trace",
        "info",
        "--json",
        path.to_str().unwrap(),
    ]))
    .unwrap();
    v["stats"].clone()
}

fn chain(start: &Path, dir: &Path) -> Vec<PathBuf> {
    let steps = ["a.nst", "b.csv", "c.nst", "d.nst.zst", "e.csv"];
    let mut prev = start.to_path_buf();
    let mut all = vec![prev.clone()];
    for s in steps {
        let next = dir.join(s);
        numasim(&[
            "trace",
            "convert",
            prev.to_str().unwrap(),
            next.to_str().unwrap(),
        ]);
        all.push(next.clone());
        prev = next;
    }
    all
}

#[test]
fn lackey_native_csv_native_is_identity() {
    let lackey = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/hello.lackey");
    let dir = tempfile::tempdir().unwrap();
    let files = chain(&lackey, dir.path());
    let original = records(&lackey);
    assert_eq!(original.len(), 1994, "the fixture's access lines");
    let first_info = info(&lackey);
    assert_eq!(first_info["records"], 1994);
    for f in &files[1..] {
        assert_eq!(records(f), original, "{}", f.display());
        assert_eq!(info(f), first_info, "{}", f.display());
    }
}

#[test]
fn optional_columns_survive_the_round_trip() {
    // A generated trace with gaps, plus a CSV carrying pc and time_ns.
    let dir = tempfile::tempdir().unwrap();
    let g = dir.path().join("g.nst");
    numasim(&[
        "trace",
        "gen",
        "zipf",
        "-n",
        "20000",
        "--threads",
        "3",
        "--write-ratio",
        "0.25",
        "--gap-ns",
        "7",
        "-o",
        g.to_str().unwrap(),
    ]);
    let files = chain(&g, dir.path());
    let original = records(&g);
    assert_eq!(original.len(), 20000);
    assert!(
        original
            .iter()
            .all(|r| r.timing() == traces::Timing::Gap(7))
    );
    for f in &files[1..] {
        assert_eq!(records(f), original, "{}", f.display());
    }
    let csv = dir.path().join("pc.csv");
    std::fs::write(&csv, "thread,op,addr,size,pc,time_ns\n0,L,0x1000,8,0x400,10\n1,S,0x2000,4,,20\n0,I,0x400,4,0x400,\n").unwrap();
    let sub = dir.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    let files = chain(&csv, &sub);
    let original = records(&csv);
    assert_eq!(original[0].pc(), Some(0x400));
    assert_eq!(original[1].timing(), traces::Timing::At(20));
    for f in &files[1..] {
        assert_eq!(records(f), original, "{}", f.display());
    }
}

#[test]
fn info_counts_match_a_hand_count() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("t.csv");
    // Lines of 64 B: 0x1000 (+0x1038 straddles into 0x1040), 0x2000; pages: 0x1, 0x2.
    std::fs::write(
        &csv,
        "thread,op,addr,size\n0,L,0x1000,8\n1,S,0x1038,16\n0,M,0x2000,4\n2,I,0x1000,4\n",
    )
    .unwrap();
    let st = info(&csv);
    assert_eq!(st["records"], 4);
    assert_eq!(st["by_kind"]["load"], 1);
    assert_eq!(st["by_kind"]["store"], 1);
    assert_eq!(st["by_kind"]["modify"], 1);
    assert_eq!(st["by_kind"]["ifetch"], 1);
    assert_eq!(st["by_thread"]["0"], 2);
    assert_eq!(st["footprint_lines"], 3);
    assert_eq!(st["footprint_pages"], 2);
    assert_eq!(st["min_addr"], "0x1000");
    assert_eq!(st["max_addr"], "0x2003");
}
