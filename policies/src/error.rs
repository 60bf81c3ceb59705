//! The error of every policy operation: a name that does not resolve, bad
//! parameters, a model that does not load.

/// A policy that cannot be built (the message says why, naming the spec or file).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct PolicyError(pub String);
