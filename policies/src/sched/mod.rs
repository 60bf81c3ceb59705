//! Request schedulers (dispatchers): one file each, registered below. The
//! same trait and names serve the request-level model and tasks on the
//! line-level model.

use sim::policy::Scheduler;

use crate::registry::registry;

registry! {
    /// Every scheduler, by name.
    pub static SCHEDULERS: dyn Scheduler = ("scheduler", "schedulers");
    static_shard: [ENTRY],
    round_robin: [ENTRY],
    least_loaded: [ENTRY],
    least_utilized: [ENTRY],
    numa_weighted: [ENTRY],
    numa_weighted_ewma: [ENTRY],
    power_of_two: [ENTRY],
    locality: [ENTRY],
}

/// Work at a worker: requests queued or running.
pub(crate) fn backlog(w: &sim::policy::WorkerView) -> usize {
    w.outstanding
}

#[cfg(test)]
pub(crate) mod tests {
    use sim::policy::{RequestView, WorkerView};

    use crate::registry::Ctx;

    pub fn worker(id: usize, node: u32, queued: usize, util: f64, lat: f64) -> WorkerView {
        WorkerView {
            id,
            node,
            queued,
            busy: queued > 0,
            outstanding: queued,
            idle_fraction: (1.0 - queued as f64 / 16.0).max(0.0),
            utilization: util,
            stall_ms: lat,
            stall_ewma_ms: lat / 2.0,
        }
    }

    pub fn request(key: u32, data_node: u32, home_worker: usize) -> RequestView {
        RequestView {
            id: 7,
            key,
            data_node,
            home_worker,
            now_ns: 0,
        }
    }

    #[test]
    fn every_name_resolves() {
        let reg = &super::SCHEDULERS;
        for e in reg.entries {
            assert_eq!(reg.build(e.name, &Ctx::default()).unwrap().name(), e.name);
        }
        let err = reg
            .build("fastest", &Ctx::default())
            .err()
            .unwrap()
            .to_string();
        assert!(
            err.starts_with("unknown scheduler \"fastest\"; expected one of static, round-robin"),
            "{err}"
        );
        assert!(reg.build("static:3", &Ctx::default()).is_err());
    }
}
