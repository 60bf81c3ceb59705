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

pub mod cache;
pub mod cachegrind;
pub mod geometry;
pub mod hierarchy;

pub use cache::{Cache, Replacement};
pub use cachegrind::{Cachegrind, CgConfig, Events};
pub use geometry::Geometry;
