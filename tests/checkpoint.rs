//! Warmed checkpoints (`replay --machine M --save-checkpoint FILE
//! --checkpoint-at N`, `--from-checkpoint FILE`): a run resumed from a
//! checkpoint writes the uninterrupted run's files byte for byte, whatever
//! the policies, the record the checkpoint was taken at and the path the
//! engine takes (many threads, one thread, a sampled run); a checkpoint of
//! another machine, run or trace, and a damaged file, are one-line errors
//! naming the file; a checkpoint that cannot be taken leaves no file.

mod common;

use std::path::Path;

use common::{numasim, ok, one_line_error};

fn generate(dir: &Path, name: &str, args: &[&str]) -> String {
    let t = dir.join(name).display().to_string();
    let mut a = vec!["trace", "gen"];
    a.extend_from_slice(args);
    a.extend_from_slice(&["-o", &t]);
    ok(&a);
    t
}

/// A 4-thread Zipf trace with sharing: 20% stores over 4 MiB.
fn shared(dir: &Path) -> String {
    let a = [
        "zipf",
        "-n",
        "30000",
        "--threads",
        "4",
        "--footprint",
        "4M",
        "--write-ratio",
        "0.2",
    ];
    generate(dir, "shared.nst", &a)
}

/// `replay TRACE --machine … FLAGS EXTRA --out DIR`; returns the files that
/// are the run's results.
fn run(trace: &str, flags: &[&str], extra: &[&str], out: &Path) -> Vec<(String, Vec<u8>)> {
    let out_s = out.display().to_string();
    let mut a = vec!["replay", trace];
    a.extend_from_slice(flags);
    a.extend_from_slice(extra);
    a.extend_from_slice(&["--window-ns", "2000", "--out", &out_s, "--json"]);
    let stdout = ok(&a).stdout;
    let mut files = vec![("stdout".to_string(), stdout)];
    for f in ["summary.json", "timeseries.csv"] {
        files.push((f.to_string(), std::fs::read(out.join(f)).unwrap()));
    }
    files
}

/// The uninterrupted run, the run that saves at each of `at` (and goes on)
/// and the run resumed from each: all the same files, byte for byte.
fn resumes_exactly(trace: &str, flags: &[&str], at: &[u64]) {
    let dir = tempfile::tempdir().unwrap();
    let full = run(trace, flags, &[], &dir.path().join("full"));
    for n in at {
        let ck = dir.path().join(format!("at{n}.ckpt"));
        let ck_s = ck.display().to_string();
        let n_s = n.to_string();
        let save = ["--save-checkpoint", &ck_s, "--checkpoint-at", &n_s];
        let saved = run(trace, flags, &save, &dir.path().join(format!("s{n}")));
        assert!(saved == full, "{flags:?}: saving at {n} changed the run");
        let from = ["--from-checkpoint", &ck_s];
        let resumed = run(trace, flags, &from, &dir.path().join(format!("r{n}")));
        for ((name, want), (_, got)) in full.iter().zip(&resumed) {
            assert!(
                want == got,
                "{flags:?}: resumed at {n}, {name} differs:\n{}\n---\n{}",
                String::from_utf8_lossy(want),
                String::from_utf8_lossy(got)
            );
        }
    }
}

/// Four threads on two sockets, first touch: checkpoints at the start, a
/// record inside a batch, and the very end.
#[test]
fn a_resumed_run_is_the_uninterrupted_run() {
    let dir = tempfile::tempdir().unwrap();
    let t = shared(dir.path());
    let flags = ["--machine", "xeon-2s", "--pin", "spread"];
    resumes_exactly(&t, &flags, &[0, 1, 12_345, 30_000]);
}

/// Policies with state: page migration (its counts), a stream and a delta
/// prefetcher at L2 and next-line at L1D (their tables and in-flight books),
/// and a bounded prefetch queue.
#[test]
fn policies_resume_with_their_state() {
    let dir = tempfile::tempdir().unwrap();
    let t = shared(dir.path());
    let flags = [
        "--machine",
        "epyc-4numa",
        "--pin",
        "spread",
        "--placement",
        "migrate:2",
        "--prefetch",
        "stream:4:2@L2",
        "--prefetch",
        "delta:2@L2",
        "--prefetch",
        "next-line@L1D",
        "--prefetch-queue",
        "8",
    ];
    resumes_exactly(&t, &flags, &[7_777, 21_000]);
    let flags = ["--machine", "xeon-2s", "--placement", "interleave"];
    resumes_exactly(&t, &flags, &[9_999]);
}

/// One thread (the fast paths settle records as they are read): a strided
/// walk with a stream prefetcher, and a lackey trace (instruction fetches,
/// a PC per data access) with an IP-stride prefetcher; a sampled run (its
/// units and phase); time-stamped records (open loop).
#[test]
fn every_engine_path_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let one = generate(
        dir.path(),
        "one.nst",
        &[
            "stride",
            "-n",
            "20000",
            "--stride",
            "128",
            "--footprint",
            "8M",
        ],
    );
    let flags = ["--machine", "xeon-2s", "--prefetch", "stream:2:2"];
    resumes_exactly(&one, &flags, &[5_001]);
    let lackey = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/hello.lackey");
    let flags = ["--machine", "xeon-2s", "--prefetch", "ip-stride:2:1@L1D"];
    resumes_exactly(lackey, &flags, &[997]);
    // A stride table with fills limited per level: a 3-line stride from
    // one PC twice over 4 MiB (over L2, inside the LLC), resumed in the
    // second pass, when its fills from the LLC wait for free slots.
    let walk = dir.path().join("walk.csv");
    let mut csv = String::from("thread,op,addr,size,pc\n");
    for k in 0..2 * 65_536u64 {
        let line = k * 3 % 65_536;
        csv += &format!("0,L,{:#x},8,0x401000\n", 0x1000_0000 + line * 64);
    }
    std::fs::write(&walk, csv).unwrap();
    let table = "ip-stride-table:f.L2=2:f.LLC=2:1=8:64=8@L1D";
    let flags = ["--machine", "xeon-2s", "--prefetch", table];
    resumes_exactly(&walk.display().to_string(), &flags, &[70_001]);
    let t = shared(dir.path());
    let flags = ["--machine", "xeon-2s", "--sample", "200:3000"];
    resumes_exactly(&t, &flags, &[4_100, 15_000]);
    // With a prefetcher: its warming counts and lines are state too.
    let pf = ["--prefetch", "stream:2:2"];
    resumes_exactly(&t, &[&flags[..], &pf[..]].concat(), &[4_100, 15_000]);
    let timed = generate(
        dir.path(),
        "timed.nst",
        &["random", "-n", "20000", "--threads", "2", "--rate", "50"],
    );
    resumes_exactly(&timed, &["--machine", "xeon-2s"], &[10_007]);
}

/// A checkpoint resumed and saved again further on, then resumed from the
/// second: still the uninterrupted run.
#[test]
fn checkpoints_chain() {
    let dir = tempfile::tempdir().unwrap();
    let t = shared(dir.path());
    let flags = ["--machine", "xeon-2s", "--pin", "spread"];
    let full = run(&t, &flags, &[], &dir.path().join("full"));
    let c1 = dir.path().join("c1").display().to_string();
    let c2 = dir.path().join("c2").display().to_string();
    run(
        &t,
        &flags,
        &["--save-checkpoint", &c1, "--checkpoint-at", "5000"],
        &dir.path().join("a"),
    );
    let mid = [
        "--from-checkpoint",
        &c1,
        "--save-checkpoint",
        &c2,
        "--checkpoint-at",
        "20000",
    ];
    assert!(run(&t, &flags, &mid, &dir.path().join("b")) == full);
    assert!(
        run(
            &t,
            &flags,
            &["--from-checkpoint", &c2],
            &dir.path().join("c")
        ) == full
    );
}

fn refused(args: &[&str], says: &[&str]) {
    let err = one_line_error(&numasim(args));
    for s in says {
        assert!(err.contains(s), "{args:?}: {err:?} does not say {s:?}");
    }
}

/// Another machine, other flags, another trace, a shorter one: each a
/// one-line error naming the file and what differs.
#[test]
fn a_checkpoint_of_another_machine_run_or_trace_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let t = shared(dir.path());
    let ck = dir.path().join("c.ckpt").display().to_string();
    let base = ["replay", &t, "--machine", "xeon-2s", "--pin", "spread"];
    let mut save = base.to_vec();
    save.extend_from_slice(&["--save-checkpoint", &ck, "--checkpoint-at", "3000"]);
    ok(&save);
    let with = |t: &str, extra: &[&str]| {
        let mut a = vec!["replay", t];
        a.extend_from_slice(extra);
        a.extend_from_slice(&["--from-checkpoint", &ck]);
        a.into_iter().map(String::from).collect::<Vec<_>>()
    };
    let call = |a: Vec<String>, says: &[&str]| {
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        refused(&a, says);
    };
    call(
        with(&t, &["--machine", "epyc-4numa", "--pin", "spread"]),
        &[&ck, "taken on another machine"],
    );
    call(
        with(&t, &["--machine", "xeon-2s", "--pin", "compact"]),
        &[&ck, "taken by another run", "Spread", "Compact"],
    );
    call(
        with(
            &t,
            &[
                "--machine",
                "xeon-2s",
                "--pin",
                "spread",
                "--placement",
                "interleave",
            ],
        ),
        &[&ck, "placement interleave"],
    );
    let other = generate(
        dir.path(),
        "other.nst",
        &[
            "zipf",
            "-n",
            "30000",
            "--threads",
            "4",
            "--footprint",
            "4M",
            "--seed",
            "9",
        ],
    );
    call(
        with(&other, &["--machine", "xeon-2s", "--pin", "spread"]),
        &[&ck, "taken on another trace", "first 3000 records"],
    );
    let short = generate(
        dir.path(),
        "short.nst",
        &["zipf", "-n", "2000", "--threads", "4", "--footprint", "4M"],
    );
    call(
        with(&short, &["--machine", "xeon-2s", "--pin", "spread"]),
        &[&ck, "taken after record 3000", "only 2000"],
    );
}

/// A flipped byte, a truncated file, a file that is not a checkpoint, a
/// missing one: one-line errors naming the file.
#[test]
fn a_damaged_checkpoint_is_a_one_line_error() {
    let dir = tempfile::tempdir().unwrap();
    let t = shared(dir.path());
    let ck = dir.path().join("c.ckpt");
    let ck_s = ck.display().to_string();
    ok(&[
        "replay",
        &t,
        "--machine",
        "xeon-2s",
        "--save-checkpoint",
        &ck_s,
        "--checkpoint-at",
        "100",
    ]);
    let bytes = std::fs::read(&ck).unwrap();
    let resume = |path: &Path| {
        let p = path.display().to_string();
        let o = numasim(&[
            "replay",
            &t,
            "--machine",
            "xeon-2s",
            "--from-checkpoint",
            &p,
        ]);
        (p, one_line_error(&o))
    };
    let write = |name: &str, b: &[u8]| {
        let p = dir.path().join(name);
        std::fs::write(&p, b).unwrap();
        p
    };
    let mut flipped = bytes.clone();
    let mid = bytes.len() / 2;
    flipped[mid] ^= 4;
    for (p, says) in [
        (write("flipped", &flipped), "corrupted"),
        (
            write("short", &bytes[..bytes.len() - 100]),
            "corrupted or truncated",
        ),
        (write("empty", &[]), "not a numasim checkpoint"),
        (Path::new(&t).to_path_buf(), "not a numasim checkpoint"),
        (dir.path().join("missing"), "No such file"),
    ] {
        let (p, err) = resume(&p);
        assert!(err.contains(&p) && err.contains(says), "{err}");
    }
}

/// A checkpoint past the trace's end, or before the one resumed from, is
/// refused, and no file (nor a temporary one) is left behind.
#[test]
fn a_checkpoint_that_cannot_be_taken_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let t = shared(dir.path());
    let ck = dir.path().join("c.ckpt").display().to_string();
    refused(
        &[
            "replay",
            &t,
            "--machine",
            "xeon-2s",
            "--save-checkpoint",
            &ck,
            "--checkpoint-at",
            "30001",
        ],
        &["checkpoint at record 30001", "only 30000"],
    );
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, vec![std::ffi::OsString::from("shared.nst")]);
    refused(
        &["replay", &t, "--machine", "xeon-2s", "--checkpoint-at", "5"],
        &["--save-checkpoint"],
    );
    refused(
        &[
            "replay",
            &t,
            "--save-checkpoint",
            &ck,
            "--checkpoint-at",
            "5",
        ],
        &["--save-checkpoint does not apply to the cache replay"],
    );
}

/// An engine takes back only a state of its own shape: a state of a
/// machine with another LLC (same cores and nodes), truncated or extended
/// bytes, and a state from an engine with a prefetcher are errors, never a
/// panic; its own state loads.
#[test]
fn an_engine_takes_back_only_a_state_of_its_shape() {
    use sim::timing::Engine;
    let engine = |m: &'static sim::Machine, prefetch: bool| {
        let ctx = policies::registry::Ctx::for_machine(m);
        let p = policies::placement::PLACEMENTS
            .build("first-touch", &ctx)
            .unwrap();
        let mut e = Engine::new(m, sim::Config::default(), p).unwrap();
        if prefetch {
            e.set_prefetcher(
                policies::prefetch::PREFETCHERS
                    .build("stream", &ctx)
                    .unwrap(),
            )
            .unwrap();
        }
        e
    };
    let leak = |m: sim::Machine| -> &'static sim::Machine { Box::leak(Box::new(m)) };
    let xeon = leak(common::preset("xeon-2s"));
    let text = sim::presets::preset("xeon-2s").unwrap();
    let smaller = text.replace("size = \"32M\"", "size = \"16M\"");
    assert_ne!(
        smaller, text,
        "the preset's LLC size moved: update the test"
    );
    let other = leak(sim::Machine::from_toml(&smaller).unwrap());
    let mut a = engine(xeon, false);
    let mut batch = traces::Batch::new(traces::Fields::default());
    for i in 0..5000u64 {
        let kind = if i % 5 == 0 {
            traces::Kind::Store
        } else {
            traces::Kind::Load
        };
        batch.push(traces::Record::access(
            (i % 4) as u32,
            kind,
            i * 4160 % (1 << 24),
            8,
        ));
    }
    a.feed(&batch).unwrap();
    let state = a.save_state();
    engine(xeon, false).load_state(&state).unwrap();
    let e = engine(other, false).load_state(&state).unwrap_err();
    assert!(e.to_string().contains("LLCs of another shape"), "{e}");
    for cut in [0, 1, state.len() / 2, state.len() - 1] {
        assert!(
            engine(xeon, false).load_state(&state[..cut]).is_err(),
            "cut at {cut}"
        );
    }
    let mut longer = state.clone();
    longer.push(0);
    assert!(engine(xeon, false).load_state(&longer).is_err());
    let with_pf = engine(xeon, true).save_state();
    assert!(engine(xeon, false).load_state(&with_pf).is_err());
}

/// 3 000 Zipf records of 4 threads over 1 MiB, 20% stores (seed 7): the
/// trace the committed checkpoint was saved on.
fn small_zipf(dir: &Path) -> String {
    let args = ["zipf", "-n", "3000", "--threads", "4", "--footprint", "1M"];
    let more = ["--write-ratio", "0.2", "--seed", "7"];
    generate(dir, "z.nst", &[&args[..], &more[..]].concat())
}

/// The committed checkpoint (`tests/expect/checkpoint.ckpt`, written by
/// this format version on `tests/data/tiny-2s.toml`) still resumes to the
/// uninterrupted run. A change of the state's types decodes into another
/// state or not at all and fails here: bump `sim::checkpoint::VERSION`, then
/// `UPDATE_EXPECT=1` writes the file again.
#[test]
fn the_committed_checkpoint_still_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let t = small_zipf(dir.path());
    let machine = common::root("tests/data/tiny-2s.toml");
    let flags = [
        "--machine",
        &machine,
        "--pin",
        "spread",
        "--placement",
        "migrate:2",
        "--prefetch",
        "stream:2:2",
    ];
    let ck = common::root("tests/expect/checkpoint.ckpt");
    if std::env::var_os("UPDATE_EXPECT").is_some() {
        let save = ["--save-checkpoint", &ck, "--checkpoint-at", "1500"];
        run(&t, &flags, &save, &dir.path().join("save"));
    }
    let full = run(&t, &flags, &[], &dir.path().join("full"));
    let resumed = run(
        &t,
        &flags,
        &["--from-checkpoint", &ck],
        &dir.path().join("resumed"),
    );
    assert!(
        resumed == full,
        "tests/expect/checkpoint.ckpt no longer resumes to the uninterrupted run: \
         bump sim::checkpoint::VERSION if the state's types changed, then UPDATE_EXPECT=1"
    );
}

/// The same run saves the same checkpoint, byte for byte, with the
/// policies whose state is a hash map (migrate's page counts, ip-stride's
/// and delta's tables): those maps use a fixed hasher, so their saved order
/// depends only on what was done to them (with a random one, two runs wrote
/// different bytes).
#[test]
fn checkpoints_repeat_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let t = small_zipf(dir.path());
    let machine = common::root("tests/data/tiny-2s.toml");
    let flags = [
        "--machine",
        &machine,
        "--pin",
        "spread",
        "--placement",
        "migrate:2",
        "--prefetch",
        "ip-stride:2:1@L1D",
        "--prefetch",
        "delta@L2",
    ];
    let saved: Vec<Vec<u8>> = (0..2)
        .map(|i| {
            let ck = dir.path().join(format!("{i}.ckpt")).display().to_string();
            let save = ["--save-checkpoint", &ck, "--checkpoint-at", "1500"];
            run(&t, &flags, &save, &dir.path().join(format!("out{i}")));
            std::fs::read(&ck).unwrap()
        })
        .collect();
    assert!(saved[0] == saved[1], "two runs saved different checkpoints");
}
