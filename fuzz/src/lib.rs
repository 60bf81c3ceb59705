//! What every fuzz target does, in one place (`fuzz_targets/*.rs` are one
//! line each). Properties: no input panics (the campaign builds with
//! overflow checks, so no arithmetic wraps either); the segmented readers
//! agree with the streaming ones; the timing engine accounts for every
//! access and simulates at least a trace's own span; a machine that loads
//! runs; the task engine finishes every task once under every scheduler.

use std::io::Cursor;
use std::sync::Arc;

use traces::{Batch, Format, Kind, Record, RecordSource, Whole};

/// Most records decoded from one input (a compressed input can expand a lot).
const MAX_RECORDS: usize = 1 << 20;

fn open(data: &[u8], format: Option<Format>) -> traces::error::Result<Box<dyn RecordSource>> {
    traces::registry::open(Box::new(Cursor::new(data.to_vec())), None, format)
}

/// Every record of `src` (at most [`MAX_RECORDS`]), or its error as a user sees it.
fn drain(src: &mut dyn RecordSource) -> Result<Vec<Record>, String> {
    let mut batch = Batch::new(src.fields());
    let mut out = Vec::new();
    while out.len() < MAX_RECORDS {
        batch.clear();
        match src.fill(&mut batch) {
            Ok(0) => break,
            Ok(_) => out.extend(batch.iter()),
            Err(e) => return Err(e.to_string()),
        }
    }
    Ok(out)
}

/// Reads `data` as `format` (detected when `None`) to its end or first error.
pub fn read_all(data: &[u8], format: Option<Format>) {
    if let Ok(mut src) = open(data, format) {
        let _ = drain(src.as_mut());
    }
}

struct Bytes(Vec<u8>);

impl Whole for Bytes {
    fn bytes(&self) -> &[u8] {
        &self.0
    }
}

/// The whole-file path (segments decoded on two threads) gives exactly the
/// streaming readers' records or error.
pub fn whole_matches_stream(data: &[u8]) {
    if data.len() > MAX_RECORDS {
        return;
    }
    let whole: Arc<dyn Whole> = Arc::new(Bytes(data.to_vec()));
    let segmented = match traces::registry::open_whole(whole, None, None, 2) {
        Ok(Some(mut r)) => drain(&mut r),
        Ok(None) => return, // compressed or empty: streamed anyway
        Err(e) => Err(e.to_string()),
    };
    let streamed = match open(data, None) {
        Ok(mut s) => drain(s.as_mut()),
        Err(e) => Err(e.to_string()),
    };
    assert_eq!(segmented, streamed, "segmented and streamed readers differ");
}

/// Machine and workload TOML: a value or an error; a machine that loads
/// writes a TOML that loads again.
pub fn configs(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(m) = sim::Machine::from_toml(text) {
        let again = sim::Machine::from_toml(&m.to_toml());
        assert!(
            again.is_ok(),
            "a loaded machine's TOML does not load: {again:?}"
        );
        machine_runs(&m);
    }
    if let Ok(w) = traces::config::parse_toml::<traces::workload::WorkloadSpec>(text) {
        let _ = w.validate();
    }
}

/// A machine that loads (every value within its range) runs a short
/// trace — two threads sharing lines, open-loop bursts — with every
/// latency statistic within min and max and every access served once.
fn machine_runs(m: &sim::Machine) {
    let mut b = Batch::new(traces::Fields {
        pc: false,
        time: true,
    });
    for i in 0..200u64 {
        let thread = (i % 2) as u32 % m.cores() as u32;
        let kind = if i % 5 == 0 { Kind::Store } else { Kind::Load };
        let r = Record::access(thread, kind, 0x4000_0000 + 64 * ((i * 37) % 512), 8);
        b.push(if i % 3 == 0 {
            r.with_time(i / 2 * 10)
        } else {
            r
        });
    }
    let placement = policies::placement::PLACEMENTS
        .build("first-touch", &policies::registry::Ctx::for_machine(m))
        .expect("placement");
    let cfg = sim::Config {
        timeseries: false,
        ..sim::Config::default()
    };
    let mut e = sim::Engine::new(m, cfg, placement).expect("engine on a loaded machine");
    match e.feed(&b).and_then(|_| e.finish()) {
        Ok(()) => {}
        Err(sim::EngineError::TimeBackwards { .. }) => return,
        Err(other) => panic!("a loaded machine refuses a short trace: {other}"),
    }
    let s = e.summary();
    let served: u64 = s.served.iter().map(|x| x.accesses).sum();
    assert_eq!(served, s.accesses, "every access is served somewhere");
    latencies_in_order(&s);
}

/// A model file: loads or fails; a loaded model predicts.
pub fn model(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(m) = policies::model::Model::from_json(text) {
        let n = m.features.len();
        let _ = m.predict(&vec![0.0; n]);
        let _ = m.predict(&vec![1e300; n]);
        let _ = m.predict(&[]);
    }
}

/// Sixteen bytes a record: thread (six threads), kind and address shift,
/// address, size, a timing mode and a full 64-bit time. Modes: none, a
/// gap or an absolute time of any 64-bit value, small gaps and times, and
/// gaps around the time horizon (2^53 ns), so the fuzzer reaches both the
/// everyday paths and the horizon's edge.
fn records(data: &[u8]) -> Batch {
    let fields = traces::Fields {
        pc: false,
        time: true,
    };
    let mut b = Batch::new(fields);
    let mut clock = [0u64; 6];
    for c in data.chunks_exact(16) {
        let thread = (c[0] % 6) as usize;
        let kind = [Kind::Load, Kind::Store, Kind::Modify, Kind::IFetch][(c[1] & 3) as usize];
        let addr = (u32::from_le_bytes([c[2], c[3], c[4], c[5]]) as u64) << ((c[1] >> 2) & 7);
        let size = 1 + (c[6] % 64) as u16;
        let t = u64::from_le_bytes(c[8..16].try_into().expect("8 bytes"));
        let r = Record::access(thread as u32, kind, addr, size);
        b.push(match c[7] % 6 {
            0 => r,
            1 => r.with_gap(t),
            2 => r.with_time(t),
            3 => r.with_gap(t % 4096),
            4 => {
                // Non-decreasing per thread, as a recorded trace's times are.
                clock[thread] = clock[thread].saturating_add(t % (1 << 20));
                r.with_time(clock[thread])
            }
            _ => r.with_gap(t >> 11),
        });
    }
    b
}

/// Every latency statistic of a run within its min and max.
fn latencies_in_order(s: &sim::Summary) {
    let l = &s.latency_ns;
    if s.data_accesses > 0 {
        for v in [l.mean, l.p50, l.p90, l.p99, l.p999] {
            assert!(l.min <= v && v <= l.max, "{l:?}");
        }
    }
}

/// The trace's own span (ns): per thread, absolute times set the clock and
/// gaps add to it; the latest over threads.
fn own_span(b: &Batch) -> u128 {
    let mut clock = std::collections::HashMap::<u32, u128>::new();
    let mut latest = 0;
    for r in b.iter() {
        let c = clock.entry(r.thread).or_default();
        match r.timing() {
            traces::Timing::At(t) => *c = t as u128,
            traces::Timing::Gap(g) => *c += g as u128,
            traces::Timing::None => {}
        }
        latest = latest.max(*c);
    }
    latest
}

/// Two nodes of four cores with tiny caches (evictions, back-invalidations
/// and remote traffic within a few records), SRRIP in the L2 and PLRU in
/// the LLC so the replacement policies are fuzzed too.
const TINY: &str = r#"
name = "tiny"
line_size = 64
page_size = 4096
c2c_latency_ns = 40.0
[core]
freq_ghz = 2.0
mlp = 4
[[core.caches]]
name = "L1D"
size = 1024
assoc = 2
latency_ns = 1.0
replacement = "lru"
[[core.caches]]
name = "L2"
size = 4096
assoc = 4
latency_ns = 4.0
replacement = "srrip"
[core.l1i]
name = "L1I"
size = 1024
assoc = 2
latency_ns = 1.0
replacement = "lru"
[[nodes]]
cores = 4
[nodes.llc]
name = "LLC"
size = 16384
assoc = 4
latency_ns = 15.0
replacement = "plru"
[nodes.memory]
capacity = 1073741824
channels = 2
channel_gbps = 10.0
latency_ns = 80.0
interleave = 256
[[nodes]]
cores = 4
[nodes.memory]
capacity = 1073741824
channels = 1
channel_gbps = 10.0
latency_ns = 80.0
interleave = 256
[[links]]
a = 0
b = 1
latency_ns = 50.0
bandwidth_gbps = 20.0
"#;

/// The timing engine on arbitrary records: no panic, every access counted
/// at exactly one served-by level, the simulated span at least the
/// trace's own, every latency statistic within min and max; a refusal only
/// for a time past the horizon, running into it, or going backwards.
pub fn engine(data: &[u8]) {
    let machine = sim::Machine::from_toml(TINY).expect("the tiny machine loads");
    let cfg = sim::Config {
        window_ns: 100,
        ..sim::Config::default()
    };
    let placement = policies::placement::PLACEMENTS
        .build("migrate:2", &policies::registry::Ctx::for_machine(&machine))
        .expect("placement");
    let mut e = sim::Engine::new(&machine, cfg, placement).expect("engine");
    let ctx = policies::registry::Ctx::for_machine(&machine);
    if data.first().is_some_and(|b| b & 1 == 1) {
        let p = policies::prefetch::PREFETCHERS
            .build("stream:4:2", &ctx)
            .expect("prefetcher");
        e.add_prefetcher(p, 1).expect("level 1");
    }
    let batch = records(data);
    match e.feed(&batch).and_then(|_| e.finish()) {
        Ok(()) => {}
        Err(
            sim::EngineError::TimePastHorizon { .. }
            | sim::EngineError::ClockPastHorizon { .. }
            | sim::EngineError::TimeBackwards { .. }
            | sim::EngineError::TooManyWindows { .. },
        ) => return,
        Err(other) => panic!("unexpected refusal: {other}"),
    }
    let s = e.summary();
    let served: u64 = s.served.iter().map(|x| x.accesses).sum();
    assert_eq!(s.accesses, batch.len() as u64, "every record is an access");
    assert_eq!(served, s.accesses, "every access is served somewhere");
    let span = own_span(&batch);
    assert!(
        s.elapsed_ns >= span as f64 * (1.0 - 1e-15),
        "{} ns simulated for a trace spanning {span} ns",
        s.elapsed_ns
    );
    latencies_in_order(&s);
}

/// A task trace from arbitrary bytes (sixteen a task: key, accesses,
/// arrival and gap modes with full 64-bit values), through the task CSV
/// reader, then run under every scheduler on three workers of the tiny
/// machine: a result or a refusal at the horizon, no panic; every task
/// finishes once, starts no earlier than it arrives and ends no earlier
/// than it starts.
pub fn task_engine(data: &[u8]) {
    let mut csv = String::from("task,op,addr,size,gap_ns,arrival_ns,key\n");
    let mut arrival = 0u64;
    for (id, c) in data.chunks_exact(16).enumerate().take(64) {
        let t = u64::from_le_bytes(c[3..11].try_into().expect("8 bytes"));
        arrival = match c[2] % 4 {
            0 | 1 => arrival.saturating_add(t % 100_000),
            2 => t,
            _ => t >> 11,
        };
        csv += &format!("{id},B,,,,{arrival},{}\n", c[0] % 8);
        for k in 0..(c[1] % 8) as usize {
            let x = c[11 + k % 5] as u64;
            let gap = match (c[2] >> 2) % 4 {
                0 | 1 => x,
                2 => t.rotate_left(k as u32 * 8),
                _ => (t >> 11) >> (x % 8),
            };
            let op = ["L", "S", "M", "I"][(x % 4) as usize];
            let addr = 0x1000_0000 + 64 * (x * 31 + k as u64 * 7 + (c[0] as u64) * 4096);
            csv += &format!("{id},{op},{addr:#x},8,{gap},,\n");
        }
        csv += &format!("{id},E,,,,,\n");
    }
    let Ok(trace) = traces::tasks::read_task_csv(csv.as_bytes()) else {
        return; // e.g. a time past the horizon, an arrival going backwards
    };
    let machine = sim::Machine::from_toml(TINY).expect("the tiny machine loads");
    let ctx = policies::registry::Ctx::for_machine(&machine);
    for s in policies::sched::SCHEDULERS.entries {
        let sched = (s.build)(&policies::registry::Spec::parse(s.name), &ctx).expect("scheduler");
        let placement = policies::placement::PLACEMENTS
            .build("first-touch", &ctx)
            .expect("placement");
        let e = sim::Engine::new(&machine, sim::Config::default(), placement).expect("engine");
        let mut te =
            sim::tasks::TaskEngine::new(e, &machine, &[0, 1, 4], sched).expect("task engine");
        let mut seen = vec![0u32; trace.tasks.len()];
        let index: std::collections::HashMap<u32, usize> = trace
            .tasks
            .iter()
            .enumerate()
            .map(|(i, t)| (t.id, i))
            .collect();
        let run = te.run(&trace, |r| {
            seen[index[&r.task]] += 1;
            assert!(
                r.start_ps >= r.arrival_ps && r.end_ps >= r.start_ps,
                "{r:?}"
            );
        });
        match run {
            Ok(()) => assert!(seen.iter().all(|&n| n == 1), "{}: {seen:?}", s.name),
            Err(
                sim::tasks::TaskError::TimePastHorizon { .. }
                | sim::tasks::TaskError::ClockPastHorizon { .. },
            ) => {}
            Err(other) => panic!("{}: unexpected refusal: {other}", s.name),
        }
    }
}

/// A request workload from arbitrary TOML, run for a short simulated time
/// (at most 20 ms at up to 20 000 QPS) under every scheduler, with both
/// warm-ups: a result or an error, no panic; every arrival is served.
pub fn workload(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(mut spec) = traces::config::parse_toml::<traces::workload::WorkloadSpec>(text) else {
        return;
    };
    spec.duration_s = spec.duration_s.min(0.02);
    spec.qps = spec.qps.min(20_000.0);
    if let traces::workload::Arrivals::Mmpp { rates, .. } = &mut spec.arrivals {
        for r in rates.iter_mut() {
            *r = r.min(20_000.0);
        }
    }
    spec.shards.count = spec.shards.count.min(64);
    spec.request.features.items = spec.request.features.items.min(100_000);
    spec.request.features.resident = spec
        .request
        .features
        .resident
        .min(spec.request.features.items);
    spec.request.features.lookups = spec.request.features.lookups.min(64);
    spec.request.batch = spec.request.batch.min(64);
    let Some(text) = sim::presets::preset(&spec.machine) else {
        return;
    };
    let machine = sim::Machine::from_toml(text).expect("preset loads");
    let ctx = policies::registry::Ctx::default();
    for (i, e) in policies::sched::SCHEDULERS.entries.iter().enumerate() {
        let sched = (e.build)(&policies::registry::Spec::parse(e.name), &ctx).expect("scheduler");
        let warm = policies::warmup::WARMUPS
            .build(if i % 2 == 0 { "none" } else { "sequential" }, &ctx)
            .expect("warm-up");
        let Ok(mut engine) = sim::serve::ServeEngine::new(&machine, &spec, sched, warm) else {
            return;
        };
        let mut served = 0u64;
        if let Ok(t) = engine.run(1, |_| served += 1) {
            assert_eq!(
                t.requests, served,
                "{}: totals and records disagree",
                e.name
            );
        }
    }
}
