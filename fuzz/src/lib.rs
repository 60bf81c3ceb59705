//! What every fuzz target does, in one place (`fuzz_targets/*.rs` are one
//! line each). Properties: no input panics; the segmented readers agree
//! with the streaming ones; the timing engine accounts for every access.

use std::io::Cursor;
use std::sync::Arc;

use traces::{Batch, Format, Kind, Record, RecordSource, Whole};

/// Most records decoded from one input (a compressed input can expand a lot).
const MAX_RECORDS: usize = 1 << 20;

fn open(data: &[u8], format: Option<Format>) -> traces::error::Result<Box<dyn RecordSource>> {
    traces::open(Box::new(Cursor::new(data.to_vec())), None, format)
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
    let segmented = match traces::open_whole(whole, None, None, 2) {
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
    }
    if let Ok(w) = traces::config::parse_toml::<traces::workload::WorkloadSpec>(text) {
        let _ = w.validate();
    }
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

/// Twelve bytes a record: thread (six threads), kind, address, size and
/// timing (none, a gap, or an absolute time) from the input.
fn records(data: &[u8]) -> Batch {
    let fields = traces::Fields {
        pc: false,
        time: true,
    };
    let mut b = Batch::new(fields);
    for c in data.chunks_exact(12) {
        let kind = [Kind::Load, Kind::Store, Kind::Modify, Kind::IFetch][(c[1] & 3) as usize];
        let addr = (u32::from_le_bytes([c[2], c[3], c[4], c[5]]) as u64) << ((c[1] >> 2) & 7);
        let size = 1 + (c[6] % 64) as u16;
        let t = u32::from_le_bytes([c[8], c[9], c[10], c[11]]) as u64;
        let r = Record::access((c[0] % 6) as u32, kind, addr, size);
        b.push(match c[7] % 3 {
            0 => r,
            1 => r.with_gap(t % 1000),
            _ => r.with_time(t),
        });
    }
    b
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
/// at exactly one served-by level.
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
    let fed = e.feed(&batch).and_then(|_| e.finish());
    if fed.is_err() {
        return; // e.g. a time going backwards: an error, not a panic
    }
    let s = e.summary();
    let served: u64 = s.served.iter().map(|x| x.accesses).sum();
    assert_eq!(s.accesses, batch.len() as u64, "every record is an access");
    assert_eq!(served, s.accesses, "every access is served somewhere");
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
