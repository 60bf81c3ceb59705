//! Policies a front end supplies by name beside the registries — Python's
//! `py:NAME` schedulers and preload predictors. `lab` knows no naming convention: the source is
//! asked first for every row's scheduler and answers `None` for a name
//! that is not its own. Each run gets its own policy (as the registries
//! build one per run), so runs in parallel share no state.

use std::fmt::Debug;

use policies::PolicyError;
use policies::registry::Timer;
use sim::policy::{Preload, Scheduler};

/// A source of policies by name.
pub trait CustomPolicies: Send + Sync + Debug {
    /// A fresh scheduler for `spec`, or `None` if `spec` is not this
    /// source's.
    fn scheduler(&self, spec: &str) -> Option<Result<Box<dyn Scheduler>, PolicyError>>;

    /// A fresh preload for `spec`, or `None` if `spec` is not this
    /// source's; it measures each prediction's real time with `timer`
    /// (reported beside the results, never simulated).
    fn preload(
        &self,
        _spec: &str,
        _timer: Option<&Timer>,
    ) -> Option<Result<Box<dyn Preload>, PolicyError>> {
        None
    }
}
