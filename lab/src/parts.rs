//! A sampled replay split into independent parts (`replay --sample …
//! --parts N`), so that the parts can run at once: locally, or as a Slurm
//! job array whose tasks each write a part file and
//! whose merge job combines them. Either way the same parts are merged by
//! the same code, so the two give the same `summary.json`, byte for byte.
//! Locally [`Job::all`] runs the parts at once, on every CPU.
//!
//! Each part has its own engine ([`sim::timing::Part`]): it skips the
//! records before its range (pinning threads and placing pages as the
//! trace first touches them), warms the last `warming` of them, then runs
//! the sample's phases over its units. The split run's estimates differ
//! from the unsplit run's only by what each part's cold start leaves after
//! its warming (docs/performance.md measures it).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sim::checkpoint::TraceHash;
use sim::timing::{Part, PartResult, Sample};
use traces::Batch;

use crate::input::Source;
use crate::replay::ReplayError;

/// A part file that cannot be written, read or merged.
#[derive(Debug, thiserror::Error)]
pub enum PartsError {
    #[error("{path}: {error}")]
    Io { path: String, error: std::io::Error },
    #[error("{path}: not a part file of numasim's: {error}")]
    Parse {
        path: String,
        error: serde_json::Error,
    },
    #[error(
        "{path}: a part of another run ({what} not the same); rerun the part with the same flags and trace"
    )]
    OtherRun { path: String, what: &'static str },
    #[error("part {index}: no such part; the split has {parts} (0..{parts})")]
    NoSuchPart { index: u64, parts: usize },
    #[error(transparent)]
    Merge(#[from] sim::timing::MergeError),
    #[error(transparent)]
    Replay(#[from] ReplayError),
    #[error(transparent)]
    Input(#[from] crate::input::InputError),
}

/// What identifies the run a part belongs to: the trace (its records and
/// their hash), the machine, the engine's flags and the split.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Split {
    pub records: u64,
    /// [`TraceHash`] of every record.
    pub trace: u64,
    /// `sim::checkpoint::machine_hash`.
    pub machine: u64,
    /// `Engine::run_description`: flags, sample shape, placement, prefetchers.
    pub run: String,
    /// Parts, and the records each warms.
    pub count: u64,
    pub warming: u64,
    /// The parts' ranges (from the sample's shape; not in a part file,
    /// whose own range the merge checks).
    #[serde(skip)]
    pub parts: Vec<Part>,
}

/// A part file (`OUT/parts/part-K.json`): the split and one part's result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PartFile {
    pub split: Split,
    pub index: u64,
    pub result: PartResult,
}

/// The warming a part gets unless told: four times the lines the
/// machine's LLCs hold together. On a 16-thread Zipf trace over 64 MiB on
/// `xeon-2s` (two 32 MiB LLCs), a quarter of that left the estimates of
/// 8 parts biased beyond their intervals, and this much did not
/// (docs/performance.md, "Sampled replay split into parts").
pub fn default_warming(m: &sim::Machine) -> u64 {
    let llc: u64 = (m.spec.nodes.iter())
        .filter_map(|n| n.llc.as_ref().map(|c| c.size.0))
        .sum();
    4 * llc / m.spec.line_size.max(1)
}

/// What every part's run shares: how its engine is made (as the
/// unsplit run's, without a time series: a part's clock is its own) and
/// how the trace is opened.
pub struct Job<'a> {
    pub machine: &'a sim::Machine,
    pub cfg: sim::Config,
    pub placement: &'a str,
    pub prefetch: &'a [String],
    pub seed: u64,
    pub log: &'a crate::InputLog,
    pub open: &'a (dyn Fn() -> Result<Source, crate::input::InputError> + Sync),
}

impl Job<'_> {
    fn engine(&self) -> Result<sim::Engine<'_>, ReplayError> {
        let cfg = sim::Config {
            timeseries: false,
            ..self.cfg.clone()
        };
        let (m, seed) = (self.machine, self.seed);
        crate::replay::timing_engine(m, cfg, self.placement, self.prefetch, seed, self.log)
    }

    /// Reads the trace from `source` and splits `shape` into `n` parts
    /// over it, each warmed over `warming` records ([`default_warming`]
    /// if None).
    pub fn split(
        &self,
        source: Source,
        shape: &Sample,
        n: u64,
        warming: Option<u64>,
    ) -> Result<Split, PartsError> {
        let counted = count(source, &mut || {})?;
        let warming = warming.unwrap_or_else(|| default_warming(self.machine));
        Ok(split(&self.engine()?, shape, counted, n, warming))
    }

    /// Runs part `k` of `split`.
    pub fn part(&self, split: &Split, k: u64) -> Result<PartResult, PartsError> {
        let part = part(split, k)?;
        Ok(run(&mut self.engine()?, (self.open)()?, part, &mut || {})?)
    }

    /// Runs every part of `split` at once (on every CPU); an error is the
    /// lowest-numbered failing part's, whichever failed first.
    pub fn all(&self, split: &Split) -> Result<Vec<PartResult>, PartsError> {
        use rayon::prelude::*;
        let runs: Vec<_> = (0..split.count)
            .into_par_iter()
            .map(|k| self.part(split, k))
            .collect();
        runs.into_iter().collect()
    }
}

/// Every part's file of `split` from `out`, in order (an error is the
/// lowest-numbered part's).
pub fn load_all(out: &Path, split: &Split) -> Result<Vec<PartResult>, PartsError> {
    (0..split.count).map(|k| load(out, split, k)).collect()
}

/// Reads every record of `source`: how many, and their [`TraceHash`].
pub fn count(source: Source, progress: &mut dyn FnMut()) -> Result<(u64, u64), ReplayError> {
    let mut hash = TraceHash::default();
    let mut n = 0u64;
    let mut batches = source.into_batches();
    while let Some(batch) = batches.next_batch() {
        let batch = batch.map_err(ReplayError::Trace)?;
        hash.add(&batch, 0..batch.len());
        n += batch.len() as u64;
        progress();
        batches.recycle(batch);
    }
    Ok((n, hash.digest()))
}

/// The split of `shape` over a trace of `records` records (hash `trace`)
/// into `n` parts warmed over `warming` records each, for `engine`'s run.
pub fn split(
    engine: &sim::Engine,
    shape: &Sample,
    (records, trace): (u64, u64),
    n: u64,
    warming: u64,
) -> Split {
    let header = engine.checkpoint_header(trace);
    let parts = shape.parts(records, n, warming);
    Split {
        records,
        trace,
        machine: header.machine,
        run: header.run,
        count: parts.len() as u64,
        warming,
        parts,
    }
}

/// Runs part `part` of a sampled `engine` over `source`: reads the trace
/// up to the part's end and returns what the merge needs.
pub fn run(
    engine: &mut sim::Engine,
    source: Source,
    part: Part,
    progress: &mut dyn FnMut(),
) -> Result<PartResult, ReplayError> {
    engine.set_part(part)?;
    let mut pos = 0u64;
    let mut batches = source.into_batches();
    while let Some(batch) = batches.next_batch() {
        let batch = batch.map_err(ReplayError::Trace)?;
        let left = part.to.saturating_sub(pos);
        if left >= batch.len() as u64 {
            engine.feed(&batch)?;
        } else {
            let mut head = Batch::new(batch.fields());
            (0..left as usize).for_each(|i| head.push(batch.get(i)));
            engine.feed(&head)?;
        }
        pos += batch.len() as u64;
        progress();
        batches.recycle(batch);
        if pos >= part.to {
            break;
        }
    }
    engine.finish()?;
    Ok(engine.part_result().expect("a part was set"))
}

/// The part `index` of `split`, or why there is none.
pub fn part(split: &Split, index: u64) -> Result<Part, PartsError> {
    split
        .parts
        .get(index as usize)
        .copied()
        .ok_or(PartsError::NoSuchPart {
            index,
            parts: split.parts.len(),
        })
}

/// Where part `index`'s file goes in `out`.
pub fn path(out: &Path, index: u64) -> PathBuf {
    out.join("parts").join(format!("part-{index}.json"))
}

/// Writes a part file whole or not at all.
pub fn save(path: &Path, file: &PartFile) -> Result<(), PartsError> {
    let io = |p: &Path| {
        let path = p.display().to_string();
        move |error| PartsError::Io { path, error }
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io(dir))?;
    }
    let tmp = path.with_extension(format!("json.{}.tmp", std::process::id()));
    let text = serde_json::to_vec(file).expect("a part serializes");
    std::fs::write(&tmp, text).map_err(io(&tmp))?;
    std::fs::rename(&tmp, path).map_err(io(path))
}

/// Reads part `index`'s file from `out`, refusing one of another run.
pub fn load(out: &Path, split: &Split, index: u64) -> Result<PartResult, PartsError> {
    let p = path(out, index);
    let path = p.display().to_string();
    let bytes = std::fs::read(&p).map_err(|error| PartsError::Io {
        path: path.clone(),
        error,
    })?;
    let file: PartFile = serde_json::from_slice(&bytes).map_err(|error| PartsError::Parse {
        path: path.clone(),
        error,
    })?;
    let s = &file.split;
    let what = if s.records != split.records || s.trace != split.trace {
        Some("trace")
    } else if s.machine != split.machine {
        Some("machine")
    } else if s.run != split.run {
        Some("flags")
    } else if s.count != split.count || s.warming != split.warming || file.index != index {
        Some("split")
    } else {
        None
    };
    match what {
        Some(what) => Err(PartsError::OtherRun { path, what }),
        None => Ok(file.result),
    }
}

/// The merged estimates of `results` (one per part of `split`, in order)
/// and the JSON summary a split run writes: the estimates under
/// `"sampled"`, and under `"parts"` each part's range and its own summary
/// of the records it simulated in detail.
pub fn merge(
    m: &sim::Machine,
    shape: &Sample,
    split: &Split,
    results: &[PartResult],
) -> Result<(sim::results::Sampled, serde_json::Value), PartsError> {
    let sampled = sim::timing::merge_parts(m, shape, &split.parts, results)?;
    let parts: Vec<serde_json::Value> = results
        .iter()
        .map(|r| {
            serde_json::json!({
                "from": r.part.from,
                "to": (r.part.to != u64::MAX).then_some(r.part.to),
                "warming": r.part.warming,
                "summary": r.summary,
            })
        })
        .collect();
    let json = serde_json::json!({
        "machine": m.spec.name,
        "records": split.records,
        "sampled": sampled,
        "parts": parts,
    });
    Ok((sampled, json))
}
