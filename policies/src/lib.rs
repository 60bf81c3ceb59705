//! # policies — implementations of `sim`'s policy traits
//!
//! Each policy is one file, registered by name in its kind's `mod.rs`, so an
//! experiment or a flag can name it (`--placement migrate:64`). Adding a
//! policy never edits the engine.
//!
//! - [`placement`]: page placement — `first-touch`, `interleave`, `bind:N`,
//!   `migrate:K` (first touch, then migrate a page to a node that has
//!   accessed it remotely K times).
//! - [`sched`]: request schedulers — `static`, `round-robin`, `least-loaded`,
//!   `numa-weighted`(`-ewma`), `power-of-two`, `locality`.
//! - [`warmup`]: `none`, `sequential`.
//! - [`prefetch`]: cache prefetchers — `next-line`, `ip-stride`, `stream`, `delta`.
//! - [`preload`]: request-level preload — `none`, `always`, learned models.
//! - [`model`]: learned predictors (tree, forest, GBDT, logistic; XGBoost import).
//!
//! ⚑ Policies see only what a real system could observe at that moment.

pub mod error;
pub mod model;
pub mod placement;
pub mod prefetch;
pub mod preload;
pub mod registry;
pub mod sched;
pub mod warmup;

pub use error::PolicyError;
pub use registry::Listed;

/// Every kind's `(heading, [(syntax, help)])`, in the order `numasim
/// policies` prints them.
pub fn listing() -> Vec<(&'static str, Vec<(String, &'static str)>)> {
    vec![
        sched::SCHEDULERS.listing(),
        placement::PLACEMENTS.listing(),
        prefetch::PREFETCHERS.listing(),
        warmup::WARMUPS.listing(),
        preload::PRELOADS.listing(),
    ]
}

/// Every registered policy, kind by kind in [`listing`]'s order, as
/// values (for front ends other than the CLI: Python's `numasim.policies()`).
pub fn entries() -> Vec<Listed> {
    let mut v = sched::SCHEDULERS.listed();
    v.extend(placement::PLACEMENTS.listed());
    v.extend(prefetch::PREFETCHERS.listed());
    v.extend(warmup::WARMUPS.listed());
    v.extend(preload::PRELOADS.listed());
    v
}
