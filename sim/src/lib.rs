//! # sim — numasim's machine model
//!
//! Deterministic and pure: no file I/O, no wall-clock reads, no global state.
//! Same records and seed ⇒ same results, on any machine.
//!
//! - [`geometry`]: cache geometry in cachegrind's `SIZE,ASSOC,LINE` form.
//! - [`cachegrind`]: the cachegrind-exact I1/D1/LL model.
//! - [`cache`]: general set-associative caches (LRU, tree-PLRU, SRRIP,
//!   random), write-back and dirty state.
//! - [`hierarchy`]: a cache-only I1/D1/LL hierarchy on [`cache`] with
//!   write-back accounting.
//! - [`machine`]: the NUMA machine description (nodes, caches, channels,
//!   links as a `petgraph` graph; routes and distances derived), [`presets`].
//! - [`timing`]: the discrete-event timing model; [`queue`] (FCFS channels
//!   and links), [`directory`] (MESI sharers), [`results`] (plain result
//!   types).
//! - [`policy`]: every policy trait and what each policy sees.
//! - [`serve`]: the request-level model; [`prefetch`]: prefetch accounting.
//! - [`estimate`]: confidence intervals of a sampled run's metrics;
//!   [`checkpoint`]: a timing run's state saved and resumed.

pub mod cache;
pub mod cachegrind;
pub mod checkpoint;
pub mod directory;
pub mod estimate;
mod events;
pub mod frames;
pub mod geometry;
pub mod hierarchy;
mod latency;
pub mod machine;
pub mod policy;
pub mod prefetch;
pub mod presets;
pub mod queue;
pub mod ranges;
pub mod results;
pub mod serve;
pub mod signals;
pub mod spec;
pub mod tasks;
pub mod timing;
pub mod tlb;

pub use cache::{Cache, Replacement};
pub use cachegrind::{Cachegrind, CgConfig, Events};
pub use geometry::Geometry;
pub use machine::{Machine, MachineError};
pub use policy::{PageView, Placement};
pub use results::Summary;
pub use timing::{Config, Engine, EngineError, Pin};
