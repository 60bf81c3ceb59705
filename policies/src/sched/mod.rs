//! Request schedulers (dispatchers), registered by name.

mod least_loaded;
mod locality;
mod numa_weighted;
mod power_of_two;
mod round_robin;
mod static_shard;

pub use least_loaded::LeastLoaded;
pub use locality::Locality;
pub use numa_weighted::NumaWeighted;
pub use power_of_two::PowerOfTwo;
pub use round_robin::RoundRobin;
pub use static_shard::Static;

use sim::serve::Scheduler;

use crate::PolicyError;

/// Names accepted by [`create`], with what they mean.
pub const NAMES: &[(&str, &str)] = &[
    (
        "static",
        "a shard's requests always go to the shard's worker (data bound to compute)",
    ),
    ("round-robin", "workers in turn"),
    (
        "least-loaded",
        "the worker with the least outstanding work (the seed's \"dynamic load balancing\": by CPU load, blind to where data lives)",
    ),
    (
        "least-utilized",
        "the worker with the lowest averaged CPU utilisation (a lagging signal: herds requests)",
    ),
    (
        "numa-weighted",
        "highest (1 / (last batch's memory stall ms + 1)) × CPU idle fraction (the seed's dispatcher)",
    ),
    (
        "numa-weighted-ewma",
        "as numa-weighted, with the stall averaged over recent batches (EWMA)",
    ),
    (
        "power-of-two",
        "two workers at random, the one with less queued work",
    ),
    (
        "locality",
        "the least-queued worker on the node that holds the shard's data",
    ),
];

/// Builds a scheduler; `seed` feeds the randomised ones.
pub fn create(name: &str, seed: u64) -> Result<Box<dyn Scheduler>, PolicyError> {
    Ok(match name {
        "static" => Box::new(Static),
        "round-robin" => Box::new(RoundRobin::default()),
        "least-loaded" => Box::new(LeastLoaded {
            by_utilization: false,
        }),
        "least-utilized" => Box::new(LeastLoaded {
            by_utilization: true,
        }),
        "numa-weighted" => Box::new(NumaWeighted { ewma: false }),
        "numa-weighted-ewma" => Box::new(NumaWeighted { ewma: true }),
        "power-of-two" => Box::new(PowerOfTwo::new(seed)),
        "locality" => Box::new(Locality),
        _ => {
            let names: Vec<&str> = NAMES.iter().map(|(n, _)| *n).collect();
            return Err(PolicyError(format!(
                "unknown scheduler {name:?}; expected one of {}",
                names.join(", ")
            )));
        }
    })
}

/// Work at a worker: requests queued or running.
pub(crate) fn backlog(w: &sim::serve::WorkerView) -> usize {
    w.outstanding
}

#[cfg(test)]
pub(crate) mod tests {
    use sim::serve::{RequestView, WorkerView};

    pub fn worker(id: usize, node: u32, queued: usize, util: f64, lat: f64) -> WorkerView {
        WorkerView {
            id,
            node,
            queued,
            busy: queued > 0,
            outstanding: queued,
            idle_fraction: (1.0 - queued as f64 / 16.0).max(0.0),
            utilization: util,
            mem_latency_ms: lat,
            mem_latency_ewma_ms: lat / 2.0,
        }
    }

    pub fn request(shard: u32, shard_node: u32, shard_worker: usize) -> RequestView {
        RequestView {
            id: 7,
            shard,
            shard_node,
            shard_worker,
            now_ns: 0,
        }
    }

    #[test]
    fn every_name_resolves() {
        for (n, _) in super::NAMES {
            assert_eq!(super::create(n, 1).unwrap().name(), *n);
        }
        assert!(super::create("fastest", 1).is_err());
    }
}
