//! Request-level inference workloads: the spec (a TOML file, documented in
//! `docs/workload.md`) and the request-arrival generator.
//!
//! A request carries its own seed, derived from the workload seed and its
//! id, so everything about it (its feature lookups, its compute time) is
//! the same whichever policy serves it: runs of different policies on one
//! workload seed are paired request by request.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use crate::error::{Param, Problem, Result, TraceError};

fn d_true() -> bool {
    true
}

/// How requests arrive.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "ArrivalsDoc", into = "ArrivalsDoc")]
pub enum Arrivals {
    /// Poisson at `qps`.
    Poisson,
    /// Bursty: a Markov-modulated Poisson process cycling through states
    /// with these rates (requests/s) and mean dwell times (ms); the spec's
    /// `qps` is ignored.
    Mmpp { rates: Vec<f64>, dwell_ms: Vec<f64> },
    /// A recorded request log (`crate::request_log`): its requests at its
    /// arrival times (relative to the first, times `time_scale`), cut at
    /// the duration; the spec's `qps` is ignored. `requests` is the log
    /// as read: the experiment's loader reads `log` (relative to the
    /// experiment file) and fills it in.
    Log {
        log: std::path::PathBuf,
        time_scale: f64,
        requests: Option<std::sync::Arc<crate::request_log::RequestLog>>,
    },
}

/// `[workload] arrivals` as written: `{ process = "poisson" }`,
/// `{ process = "mmpp", rates = [...], dwell_ms = [...] }` or
/// `{ log = "FILE", time_scale = 1.0 }`.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ArrivalsDoc {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    process: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    rates: Option<Vec<f64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    dwell_ms: Option<Vec<f64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    log: Option<std::path::PathBuf>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    time_scale: Option<f64>,
}

/// An `arrivals` table that names no process or log, or mixes them.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ArrivalsShape {
    #[error("arrivals: a log takes time_scale only")]
    LogExtras,
    #[error("arrivals: poisson takes no rates, dwell_ms or time_scale")]
    PoissonExtras,
    #[error("arrivals: mmpp takes no time_scale")]
    MmppScale,
    #[error("arrivals: mmpp needs rates and dwell_ms")]
    MmppNeeds,
    #[error("arrivals: unknown process {0:?}; expected poisson or mmpp (or log = \"FILE\")")]
    Unknown(String),
    #[error("arrivals: give process or log, not both")]
    Both,
    #[error("arrivals: give process = \"poisson\" or \"mmpp\", or log = \"FILE\"")]
    Neither,
}

impl TryFrom<ArrivalsDoc> for Arrivals {
    type Error = ArrivalsShape;

    fn try_from(d: ArrivalsDoc) -> std::result::Result<Arrivals, ArrivalsShape> {
        let only = |e: ArrivalsShape, ok: bool| if ok { Ok(()) } else { Err(e) };
        match (d.process.as_deref(), d.log) {
            (None, Some(log)) => {
                only(
                    ArrivalsShape::LogExtras,
                    d.rates.is_none() && d.dwell_ms.is_none(),
                )?;
                Ok(Arrivals::Log {
                    log,
                    time_scale: d.time_scale.unwrap_or(1.0),
                    requests: None,
                })
            }
            (Some("poisson"), None) => {
                only(
                    ArrivalsShape::PoissonExtras,
                    d.rates.is_none() && d.dwell_ms.is_none() && d.time_scale.is_none(),
                )?;
                Ok(Arrivals::Poisson)
            }
            (Some("mmpp"), None) => {
                only(ArrivalsShape::MmppScale, d.time_scale.is_none())?;
                match (d.rates, d.dwell_ms) {
                    (Some(rates), Some(dwell_ms)) => Ok(Arrivals::Mmpp { rates, dwell_ms }),
                    _ => Err(ArrivalsShape::MmppNeeds),
                }
            }
            (Some(p), None) => Err(ArrivalsShape::Unknown(p.to_string())),
            (Some(_), Some(_)) => Err(ArrivalsShape::Both),
            (None, None) => Err(ArrivalsShape::Neither),
        }
    }
}

impl From<Arrivals> for ArrivalsDoc {
    fn from(a: Arrivals) -> ArrivalsDoc {
        match a {
            Arrivals::Poisson => ArrivalsDoc {
                process: Some("poisson".into()),
                ..ArrivalsDoc::default()
            },
            Arrivals::Mmpp { rates, dwell_ms } => ArrivalsDoc {
                process: Some("mmpp".into()),
                rates: Some(rates),
                dwell_ms: Some(dwell_ms),
                ..ArrivalsDoc::default()
            },
            Arrivals::Log {
                log, time_scale, ..
            } => ArrivalsDoc {
                log: Some(log),
                time_scale: Some(time_scale),
                ..ArrivalsDoc::default()
            },
        }
    }
}

/// Model shards.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Shards {
    pub count: u32,
    /// Zipf exponent of shard popularity (0 = uniform).
    pub popularity_zipf: f64,
    /// Model weights per shard (GB); resident in GPU memory, reported only.
    pub weights_gb: f64,
    /// Host-side working set a worker needs before it can serve the shard
    /// (MB): on a node that does not hold it, it is fetched from the far
    /// tier — the cold start.
    pub state_mb: f64,
}

/// Per-request compute on the accelerator.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Compute {
    /// Fixed cost of a batch (ms).
    pub batch_ms: f64,
    /// Cost per request in the batch (ms).
    pub per_request_ms: f64,
    /// Cost per input (prompt) token of a request (ms; prefill). 0 unless
    /// given: a request's cost is then `per_request_ms` alone.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub per_input_token_ms: f64,
    /// Cost per generated token of a request (ms; decode).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub per_output_token_ms: f64,
    /// Log-normal noise σ on each request's cost.
    pub sigma: f64,
}

/// Per-request data: feature lookups.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Features {
    /// Lookups per request.
    pub lookups: u32,
    /// Bytes per item (KiB).
    pub item_kb: f64,
    /// Items per shard.
    pub items: u32,
    /// Items of each shard resident in its home node's memory (the rest
    /// live on the far tier).
    pub resident: u32,
    /// Zipf exponent of item popularity.
    pub zipf: f64,
    /// A request "misses" (the label a preload predictor learns, the
    /// outcome its calls are judged on, what an oracle is told) when at
    /// least this share of its lookups miss the worker node's cache.
    #[serde(default = "half")]
    pub miss_share: f64,
    /// A preload fetches the request's whole feature set (one object per
    /// request in the store), not only the items the node's cache lacks:
    /// a preload of a request that would have hit moves bytes for
    /// nothing. False unless given.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub preload_whole: bool,
}

fn half() -> f64 {
    0.5
}

fn is_zero<T: Default + PartialEq>(x: &T) -> bool {
    *x == T::default()
}

/// The inference service.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Request {
    /// Input tokens per request (a logged request's own count where the
    /// log has one).
    pub tokens: u32,
    /// Generated tokens per request (likewise; 0 unless given).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub output_tokens: u32,
    /// Bytes per token sent to the accelerator.
    pub token_bytes: u32,
    /// Most requests an accelerator runs at once.
    pub batch: u32,
    pub compute: Compute,
    pub features: Features,
}

/// The slow far tier (object storage).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FarTier {
    pub latency_ms: f64,
    pub bandwidth_gbps: f64,
}

/// Most feature items a workload may have (the popularity table: 128 MiB).
pub const MAX_ITEMS: u64 = 1 << 24;

/// Most items a node's feature cache may hold (about 70 MB a node).
pub const MAX_CACHE_ITEMS: u64 = 1 << 22;

/// Per-node feature cache (items held in the node's memory).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cache {
    pub items_per_node: u32,
}

/// Periodic background work.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Background {
    /// A job starts every this many requests (counted at arrival).
    pub every_requests: u64,
    /// Bytes it streams through the node's memory (GB).
    pub sweep_gb: f64,
    /// It flushes the node's feature cache (its writes invalidate the lines).
    #[serde(default = "d_true")]
    pub flushes_cache: bool,
}

/// A shard changing its home worker at a time.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Move {
    pub at_s: f64,
    pub shard: u32,
    pub to_worker: u32,
}

/// A whole workload.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadSpec {
    pub name: String,
    /// Machine preset or file.
    pub machine: String,
    pub duration_s: f64,
    pub qps: f64,
    pub arrivals: Arrivals,
    pub shards: Shards,
    pub request: Request,
    pub cache: Cache,
    pub far_tier: FarTier,
    #[serde(default)]
    pub background: Option<Background>,
    #[serde(default)]
    pub moves: Vec<Move>,
}

fn bad(p: Param) -> TraceError {
    TraceError::at_offset(0, 0, Problem::Param(p))
}

impl WorkloadSpec {
    /// Checks ranges.
    pub fn validate(&self) -> Result<()> {
        let pos = |x: f64, what: &str| {
            if x.is_finite() && x > 0.0 {
                Ok(())
            } else {
                Err(bad(Param::NotPositive {
                    field: what.to_string(),
                    value: x,
                }))
            }
        };
        pos(self.duration_s, "duration_s")?;
        pos(self.qps, "qps")?;
        pos(
            self.request.compute.batch_ms + self.request.compute.per_request_ms,
            "compute",
        )?;
        pos(self.far_tier.bandwidth_gbps, "far_tier.bandwidth_gbps")?;
        // Every size and time within a range whose nanoseconds and bytes fit
        // the model's 64-bit clocks and counters (a petabyte; times within
        // the horizon, `crate::horizon`, about 104 days).
        let within = |x: f64, max: f64, what: &str| {
            if x.is_finite() && (0.0..=max).contains(&x) {
                Ok(())
            } else {
                Err(bad(Param::OutOfRange {
                    field: what.to_string(),
                    max,
                    value: x,
                }))
            }
        };
        let time = |s: f64, what: &str| {
            if s <= crate::horizon::HORIZON_S {
                Ok(())
            } else {
                Err(bad(Param::PastHorizon {
                    field: what.to_string(),
                    seconds: s,
                }))
            }
        };
        time(self.duration_s, "duration_s")?;
        within(self.shards.popularity_zipf, 100.0, "shards.popularity_zipf")?;
        within(self.shards.weights_gb, 1e6, "shards.weights_gb")?;
        within(self.shards.state_mb, 1e9, "shards.state_mb")?;
        within(
            self.request.compute.batch_ms,
            1e6,
            "request.compute.batch_ms",
        )?;
        within(
            self.request.compute.per_request_ms,
            1e6,
            "request.compute.per_request_ms",
        )?;
        within(self.request.compute.sigma, 10.0, "request.compute.sigma")?;
        within(
            self.request.compute.per_input_token_ms,
            1.0,
            "request.compute.per_input_token_ms",
        )?;
        within(
            self.request.compute.per_output_token_ms,
            1e3,
            "request.compute.per_output_token_ms",
        )?;
        within(
            self.request.features.item_kb,
            1e6,
            "request.features.item_kb",
        )?;
        within(self.request.features.zipf, 100.0, "request.features.zipf")?;
        within(self.far_tier.latency_ms, 1e6, "far_tier.latency_ms")?;
        within(self.far_tier.bandwidth_gbps, 1e6, "far_tier.bandwidth_gbps")?;
        if self.far_tier.bandwidth_gbps < 1e-3 {
            return Err(bad(Param::BelowMin {
                field: "far_tier.bandwidth_gbps".into(),
                min: 1e-3,
                value: self.far_tier.bandwidth_gbps,
            }));
        }
        if let Some(b) = &self.background {
            within(b.sweep_gb, 1e6, "background.sweep_gb")?;
        }
        for (i, m) in self.moves.iter().enumerate() {
            if !(m.at_s.is_finite() && m.at_s >= 0.0) {
                return Err(bad(Param::Negative {
                    field: format!("moves[{i}].at_s"),
                    value: m.at_s,
                }));
            }
            time(m.at_s, &format!("moves[{i}].at_s"))?;
        }
        if self.shards.count == 0 || self.request.batch == 0 || self.request.features.items == 0 {
            return Err(bad(Param::ZeroCount));
        }
        // Counts that multiply into a batch's bytes: bounded so that a
        // batch moves at most about a petabyte.
        for (x, max, what) in [
            (self.shards.count as u64, 100_000, "shards.count"),
            (self.request.batch as u64, 100_000, "request.batch"),
            (
                self.request.tokens as u64,
                crate::request_log::MAX_TOKENS,
                "request.tokens",
            ),
            (
                self.request.output_tokens as u64,
                crate::request_log::MAX_TOKENS,
                "request.output_tokens",
            ),
            (
                self.request.token_bytes as u64,
                1_000_000,
                "request.token_bytes",
            ),
            (
                self.request.features.lookups as u64,
                crate::request_log::MAX_LOOKUPS,
                "request.features.lookups",
            ),
        ] {
            if x > max {
                return Err(bad(Param::TooLarge {
                    field: what.into(),
                    max,
                    value: x,
                }));
            }
        }
        // Tables the request model allocates up front: the items'
        // popularity (12 bytes an item: the CDF and its search keys) and
        // each node's feature cache (4.5 bytes a slot): bounded so that a well-formed file cannot ask
        // for more memory than a machine has (the fuzz campaign found a
        // 10^8-item cache per node running out of memory).
        for (x, max, what) in [
            (
                self.request.features.items as u64,
                MAX_ITEMS,
                "request.features.items",
            ),
            (
                self.cache.items_per_node as u64,
                MAX_CACHE_ITEMS,
                "cache.items_per_node",
            ),
        ] {
            if x > max {
                return Err(bad(Param::TooLarge {
                    field: what.into(),
                    max,
                    value: x,
                }));
            }
        }
        let ms = self.request.features.miss_share;
        if !(ms.is_finite() && ms > 0.0 && ms <= 1.0) {
            return Err(bad(Param::MissShare(ms)));
        }
        if self.request.features.resident > self.request.features.items {
            return Err(bad(Param::ResidentExceedsItems));
        }
        if let Arrivals::Log { time_scale, .. } = &self.arrivals {
            pos(*time_scale, "arrivals.time_scale")?;
        }
        if let Arrivals::Mmpp { rates, dwell_ms } = &self.arrivals {
            if rates.is_empty() || rates.len() != dwell_ms.len() {
                return Err(bad(Param::MmppShape));
            }
            for (&r, &d) in rates.iter().zip(dwell_ms) {
                pos(r, "mmpp rate")?;
                pos(d, "mmpp dwell_ms")?;
            }
        }
        for m in &self.moves {
            if m.shard >= self.shards.count {
                return Err(bad(Param::MoveShard {
                    shard: m.shard,
                    shards: self.shards.count,
                }));
            }
        }
        Ok(())
    }
}

/// One request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Arrival {
    pub id: u64,
    pub arrival_ns: u64,
    pub shard: u32,
    /// Seed for everything drawn about this request.
    pub seed: u64,
    /// Its input tokens: the workload's `request.tokens`, or the logged
    /// request's own.
    pub input_tokens: u32,
    /// Its generated tokens: `request.output_tokens`, or the log's.
    pub output_tokens: u32,
}

impl Compute {
    /// A request's cost before noise (ms): `per_request_ms` plus its
    /// tokens at the per-token costs.
    pub fn request_ms(&self, a: &Arrival) -> f64 {
        self.per_request_ms
            + a.input_tokens as f64 * self.per_input_token_ms
            + a.output_tokens as f64 * self.per_output_token_ms
    }
}

impl WorkloadSpec {
    /// The logged request behind `a`, when the workload replays a log
    /// (a logged arrival's id is its index in the log).
    pub fn logged(&self, a: &Arrival) -> Option<&crate::request_log::LoggedRequest> {
        match &self.arrivals {
            Arrivals::Log {
                requests: Some(log),
                ..
            } => log.requests.get(a.id as usize),
            _ => None,
        }
    }

    /// The feature items request `a` looks up, in order, then its compute
    /// noise (the standard normal of [`compute_noise`]): drawn from the
    /// request's own stream — `lookups` Zipf draws, then the noise — or,
    /// when the log gives the request's prompt blocks (Mooncake's
    /// `hash_ids`), one lookup per block, of item `hash mod items`, the
    /// noise then drawn first from the same stream.
    pub fn request_items(&self, a: &Arrival, items: &CdfSampler, mut each: impl FnMut(u32)) -> f64 {
        let mut rng = a.seed;
        if let Some(r) = self.logged(a)
            && let Some(keys) = &r.hash_ids
        {
            let n = self.request.features.items as u64;
            for &h in keys {
                each((h % n) as u32);
            }
        } else {
            // In chunks: the chunk's draws are independent, so their table
            // loads overlap (`CdfSampler::sample_many`); same ranks, same order.
            let mut left = self.request.features.lookups as usize;
            let (mut us, mut ranks) = ([0.0f64; CHUNK], [0u32; CHUNK]);
            while left > 0 {
                let n = left.min(CHUNK);
                for u in &mut us[..n] {
                    *u = unit(splitmix(&mut rng));
                }
                items.sample_many(&us[..n], &mut ranks[..n]);
                ranks[..n].iter().for_each(|&r| each(r));
                left -= n;
            }
        }
        compute_noise(&mut rng)
    }

    /// [`WorkloadSpec::request_items`] for a batch of requests at once:
    /// every request's items go to `items`, one request after another, and
    /// `spans` gets each request's end in `items` and its compute noise.
    /// The draws of all the batch's requests are sampled in one
    /// [`CdfSampler::sample_many`], so the tables' cache misses of one
    /// request overlap with the next's; the same items, in the same order.
    /// `us` is scratch. All three are cleared first.
    pub fn batch_items<'b>(
        &self,
        batch: impl Iterator<Item = &'b Arrival>,
        sampler: &CdfSampler,
        us: &mut Vec<f64>,
        items: &mut Vec<u32>,
        spans: &mut Vec<(usize, f64)>,
    ) {
        us.clear();
        items.clear();
        spans.clear();
        // The drawn items still to sample are the last `us.len()` of `items`.
        let flush = |us: &mut Vec<f64>, items: &mut Vec<u32>| {
            let from = items.len() - us.len();
            sampler.sample_many(us, &mut items[from..]);
            us.clear();
        };
        for a in batch {
            let mut rng = a.seed;
            if let Some(keys) = self.logged(a).and_then(|r| r.hash_ids.as_ref()) {
                flush(us, items);
                let n = self.request.features.items as u64;
                items.extend(keys.iter().map(|&h| (h % n) as u32));
            } else {
                let n = self.request.features.lookups as usize;
                us.extend((0..n).map(|_| unit(splitmix(&mut rng))));
                items.resize(items.len() + n, 0);
            }
            spans.push((items.len(), compute_noise(&mut rng)));
        }
        flush(us, items);
    }

    /// How many lookups request `a` makes.
    pub fn lookups_of(&self, a: &Arrival) -> u32 {
        match self.logged(a).and_then(|r| r.hash_ids.as_ref()) {
            Some(keys) => keys.len() as u32,
            None => self.request.features.lookups,
        }
    }
}

/// SplitMix64's state step: the state after k draws is the seed plus k
/// times this (so a stream can be entered at any draw).
pub const SPLITMIX_GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

/// SplitMix64: the per-request seed stream and cheap per-request draws.
#[inline]
pub fn splitmix(x: &mut u64) -> u64 {
    *x = x.wrapping_add(SPLITMIX_GAMMA);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

use crate::cdf::CHUNK;
pub use crate::cdf::{CdfSampler, zipf_cdf};

/// Uniform in [0, 1) from 53 bits.
#[inline]
pub fn unit(x: u64) -> f64 {
    (x >> 11) as f64 / (1u64 << 53) as f64
}

/// A request's draws, from its own stream (`Arrival::seed`), in the one
/// order both the request model and its line-level derivation take them:
/// first each lookup's item ([`next_item`], `lookups` times), then the
/// compute noise ([`compute_noise`]).
#[inline]
pub fn next_item(rng: &mut u64, items: &CdfSampler) -> u32 {
    items.sample(unit(splitmix(rng)))
}

/// A standard normal draw (Box–Muller) for the log-normal compute noise:
/// a request's cost is `per_request_ms × exp(σ·z)`.
#[inline]
pub fn compute_noise(rng: &mut u64) -> f64 {
    let (u1, u2) = (unit(splitmix(rng)).max(1e-300), unit(splitmix(rng)));
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// Generates the arrivals of a workload for a seed, in time order.
pub struct ArrivalGen {
    spec: WorkloadSpec,
    rng: ChaCha8Rng,
    t_ns: f64,
    end_ns: f64,
    next_id: u64,
    shard_cdf: CdfSampler,
    state: usize,
    state_end_ns: f64,
    seed: u64,
}

impl ArrivalGen {
    pub fn new(spec: &WorkloadSpec, seed: u64) -> Result<ArrivalGen> {
        spec.validate()?;
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let state_end_ns = match &spec.arrivals {
            Arrivals::Mmpp { dwell_ms, .. } => {
                -(1.0 - rng.random::<f64>()).ln() * dwell_ms[0] * 1e6
            }
            Arrivals::Poisson => f64::INFINITY,
            Arrivals::Log { requests: None, .. } => return Err(bad(Param::LogNotRead)),
            Arrivals::Log { .. } => f64::INFINITY,
        };
        Ok(ArrivalGen {
            shard_cdf: CdfSampler::new(zipf_cdf(spec.shards.count, spec.shards.popularity_zipf)),
            end_ns: spec.duration_s * 1e9,
            spec: spec.clone(),
            rng,
            t_ns: 0.0,
            next_id: 0,
            state: 0,
            state_end_ns,
            seed,
        })
    }

    fn rate_per_ns(&self) -> f64 {
        match &self.spec.arrivals {
            Arrivals::Poisson | Arrivals::Log { .. } => self.spec.qps / 1e9,
            Arrivals::Mmpp { rates, .. } => rates[self.state] / 1e9,
        }
    }
}

impl Iterator for ArrivalGen {
    type Item = Arrival;

    fn next(&mut self) -> Option<Arrival> {
        if let Arrivals::Log {
            requests: Some(log),
            ..
        } = &self.spec.arrivals
        {
            // The log's own times and keys; a request without a key draws
            // its shard from the workload's popularity.
            let r = log.requests.get(self.next_id as usize)?;
            let req = &self.spec.request;
            if r.arrival_ns as f64 >= self.end_ns {
                return None;
            }
            let count = self.spec.shards.count as u64;
            let shard = match (r.key, r.hash_ids.as_ref().and_then(|h| h.first())) {
                (Some(k), _) => (k % count) as u32,
                (None, Some(&h)) => {
                    let mut x = h;
                    (splitmix(&mut x) % count) as u32
                }
                (None, None) => self.shard_cdf.sample(self.rng.random::<f64>()),
            };
            let id = self.next_id;
            self.next_id += 1;
            let mut s = self.seed ^ id.wrapping_mul(0xD6E8_FEB8_6659_FD93);
            return Some(Arrival {
                id,
                arrival_ns: r.arrival_ns,
                shard,
                seed: splitmix(&mut s),
                input_tokens: r.input_tokens.unwrap_or(req.tokens),
                output_tokens: r.output_tokens.unwrap_or(req.output_tokens),
            });
        }
        loop {
            let gap = -(1.0 - self.rng.random::<f64>()).ln() / self.rate_per_ns();
            let t = self.t_ns + gap;
            if let Arrivals::Mmpp { dwell_ms, .. } = &self.spec.arrivals
                && t > self.state_end_ns
            {
                // Memoryless: restart the draw from the state change.
                self.t_ns = self.state_end_ns;
                self.state = (self.state + 1) % dwell_ms.len();
                let dwell = dwell_ms[self.state] * 1e6;
                self.state_end_ns = self.t_ns - (1.0 - self.rng.random::<f64>()).ln() * dwell;
                continue;
            }
            self.t_ns = t;
            break;
        }
        if self.t_ns >= self.end_ns {
            return None;
        }
        let shard = self.shard_cdf.sample(self.rng.random::<f64>());
        let id = self.next_id;
        self.next_id += 1;
        let mut s = self.seed ^ id.wrapping_mul(0xD6E8_FEB8_6659_FD93);
        Some(Arrival {
            id,
            arrival_ns: self.t_ns as u64,
            shard,
            seed: splitmix(&mut s),
            input_tokens: self.spec.request.tokens,
            output_tokens: self.spec.request.output_tokens,
        })
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn small() -> WorkloadSpec {
        toml::from_str(
            r#"
name = "t"
machine = "dgx-a100-2numa"
duration_s = 2.0
qps = 5000
arrivals = { process = "poisson" }
shards = { count = 8, popularity_zipf = 1.0, weights_gb = 14, state_mb = 512 }
request = { tokens = 2048, token_bytes = 4, batch = 16, compute = { batch_ms = 2, per_request_ms = 0.4, sigma = 0.1 }, features = { lookups = 16, item_kb = 64, items = 100000, resident = 80000, zipf = 0.9 } }
cache = { items_per_node = 20000 }
far_tier = { latency_ms = 5, bandwidth_gbps = 4 }
"#,
        )
        .unwrap()
    }

    #[test]
    fn poisson_count_and_shard_popularity() {
        let spec = small();
        let v: Vec<Arrival> = ArrivalGen::new(&spec, 1).unwrap().collect();
        // 10 000 expected; Poisson sd = 100.
        assert!((v.len() as f64 - 10_000.0).abs() < 400.0, "{}", v.len());
        assert!(v.windows(2).all(|w| w[0].arrival_ns <= w[1].arrival_ns));
        // Zipf(1) over 8: shard 0 gets 1/H(8) = 36.8%.
        let s0 = v.iter().filter(|a| a.shard == 0).count() as f64 / v.len() as f64;
        assert!((s0 - 0.368).abs() < 0.02, "{s0}");
        assert_eq!(v, ArrivalGen::new(&spec, 1).unwrap().collect::<Vec<_>>());
        assert_ne!(v[0].seed, v[1].seed);
    }

    /// A batch's draws sampled together are each request's own: the same
    /// items in the same order and the same noise, bit for bit, as
    /// [`WorkloadSpec::request_items`] one request at a time — with logged
    /// requests (their `hash_ids` the items) between drawn ones.
    #[test]
    fn a_batchs_items_are_each_requests_own() {
        let mut s = small();
        // Requests whose draws do not fill whole chunks of the sampler.
        s.request.features.lookups = 13;
        let log = crate::request_log::read(
            "{\"timestamp\": 0, \"input_length\": 10, \"output_length\": 1}\n\
             {\"timestamp\": 1, \"input_length\": 10, \"output_length\": 1}\n\
             {\"timestamp\": 2, \"input_length\": 10, \"output_length\": 1, \"hash_ids\": [3, 7, 100009]}\n\
             {\"timestamp\": 3, \"input_length\": 10, \"output_length\": 1}\n\
             {\"timestamp\": 4, \"input_length\": 10, \"output_length\": 1, \"hash_ids\": []}\n\
             {\"timestamp\": 5, \"input_length\": 10, \"output_length\": 1}\n"
                .as_bytes(),
            1.0,
        )
        .unwrap();
        s.arrivals = Arrivals::Log {
            log: "l.jsonl".into(),
            time_scale: 1.0,
            requests: Some(std::sync::Arc::new(log)),
        };
        let cdf = CdfSampler::new(zipf_cdf(100_000, 0.9));
        let batch: Vec<Arrival> = (0..6u64)
            .map(|id| Arrival {
                id,
                arrival_ns: id,
                shard: 0,
                seed: 0x1234_5678 ^ id.wrapping_mul(SPLITMIX_GAMMA),
                input_tokens: 10,
                output_tokens: 1,
            })
            .collect();
        let (mut want, mut want_spans) = (Vec::new(), Vec::new());
        for a in &batch {
            let z = s.request_items(a, &cdf, |i| want.push(i));
            want_spans.push((want.len(), z.to_bits()));
        }
        assert_eq!(&want[26..29], &[3, 7, 9], "the logged request's items");
        // Scratch holding an earlier batch's leftovers.
        let (mut us, mut items, mut spans) = (vec![0.5; 5], vec![9; 3], vec![(7, 1.0)]);
        s.batch_items(batch.iter(), &cdf, &mut us, &mut items, &mut spans);
        assert_eq!(items, want);
        let spans: Vec<_> = spans.iter().map(|&(e, z)| (e, z.to_bits())).collect();
        assert_eq!(spans, want_spans);
    }

    #[test]
    fn mmpp_mean_rate_is_the_dwell_weighted_mean() {
        let mut spec = small();
        spec.duration_s = 20.0;
        spec.arrivals = Arrivals::Mmpp {
            rates: vec![2000.0, 10000.0],
            dwell_ms: vec![300.0, 100.0],
        };
        let n = ArrivalGen::new(&spec, 3).unwrap().count() as f64;
        // (2000·0.3 + 10000·0.1) / 0.4 = 4000/s over 20 s = 80 000 (± state-switch noise).
        assert!((n / 80_000.0 - 1.0).abs() < 0.08, "{n}");
    }
}
