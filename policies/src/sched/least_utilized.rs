//! `least-utilized`: [`LeastLoaded`] balancing on the averaged utilisation
//! instead of outstanding work (ties: less outstanding work). That signal
//! lags by its averaging window, so every request dispatched within it goes
//! to the same worker; it is kept to show that effect.

use sim::policy::Scheduler;

use super::least_loaded::LeastLoaded;
use crate::error::PolicyError;
use crate::registry::{Ctx, Entry, Spec};

/// Registry entry.
pub const ENTRY: Entry<dyn Scheduler> = Entry {
    name: "least-utilized",
    params: "",
    help: "the worker with the lowest averaged CPU utilisation (a lagging signal: herds requests)",
    build,
};

fn build(spec: &Spec, _ctx: &Ctx) -> Result<Box<dyn Scheduler>, PolicyError> {
    spec.no_arguments("scheduler")?;
    Ok(Box::new(LeastLoaded {
        by_utilization: true,
    }))
}
