//! The error of every policy operation: a name that does not resolve, a
//! spec whose arguments do not fit, a model that does not load or fit.
//! Typed: each variant is one problem, and its words come from its
//! fields.

use std::sync::Arc;

/// A policy that cannot be built.
#[derive(Debug, Clone, thiserror::Error)]
pub enum PolicyError {
    /// A name no entry of the registry has.
    #[error("unknown {kind} {name:?}; expected one of {known}")]
    Unknown {
        kind: &'static str,
        name: String,
        known: String,
    },
    /// A spec whose arguments do not fit its entry.
    #[error("{kind} {spec:?}: {problem}")]
    Spec {
        kind: &'static str,
        spec: String,
        problem: Box<SpecProblem>,
    },
    #[error("{spec:?} needs a machine")]
    NeedsMachine { spec: String },
    #[error("{spec:?}: no model loader here to read {path:?}")]
    NoLoader { spec: String, path: String },
    /// A model file that is not a model numasim reads.
    #[error(transparent)]
    Model(#[from] ModelError),
    /// A model whose features are not those the policy computes.
    #[error("{file}: the model's features are not {expected}")]
    Features { file: String, expected: Features },
    /// A model the loader could not read (its error, in its words).
    #[error("{0}")]
    Load(Arc<dyn std::error::Error + Send + Sync>),
    /// A model path the built-in scenario does not carry.
    #[error("the built-in scenario has no model {path:?} (only {only})")]
    NoBuiltIn { path: String, only: &'static str },
}

/// What is wrong with a spec's arguments.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SpecProblem {
    #[error("{0:?} is not a number")]
    NotANumber(String),
    #[error("{0} takes no arguments")]
    NoArguments(String),
    #[error("at most {count} numbers, {names}")]
    TooManyNumbers { count: &'static str, names: String },
    /// A parameter outside its range.
    #[error("{param} must be {range}")]
    Range { param: &'static str, range: Bound },
    #[error("the only parameter is :mem")]
    OnlyMem,
    #[error("{name} needs a model file, {syntax}")]
    NeedsModel {
        name: &'static str,
        syntax: &'static str,
    },
    #[error("a learned filter cannot wrap another")]
    NestedFilter,
    #[error("node {node} has no memory (memory nodes: {memory:?})")]
    NoMemory { node: u32, memory: Vec<u32> },
    #[error("{name} needs a number, e.g. {name}:{example}")]
    NeedsNumber { name: String, example: &'static str },
    #[error("window {0:?} is not a number of ms from 0 to 3600000")]
    Window(String),
    /// A per-stride lookahead table that does not parse.
    #[error(
        "{0} (expected [:c=C]:S=A[:S=A...], C 1..=8, strides S ascending in lines, lookaheads A 1..=64)"
    )]
    StrideTable(&'static str),
}

/// The features a policy computes, which its model must read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Features {
    /// The prefetch filter's (`policies::prefetch::learned`): its feature
    /// names for a history of two accesses, as the pattern to follow.
    PrefetchFilter(Vec<String>),
    /// The request model's decision features (`policies::preload::learned`).
    Decision,
}

impl std::fmt::Display for Features {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Features::PrefetchFilter(two) => write!(
                f,
                "the prefetch filter's (for a history of H accesses: {}); train it on `numasim dataset TRACE`",
                two.join(",").replace("_1", "_H-1")
            ),
            Features::Decision => write!(
                f,
                "a set of the request model's decision features (remote_shard, outstanding, then {}_K per past batch K; numasim dataset writes them)",
                sim::policy::GROUPS.join("_K, ")
            ),
        }
    }
}

/// A model file that is not a model numasim reads.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ModelError {
    #[error("model is not JSON: {0}")]
    NotJson(Arc<serde_json::Error>),
    #[error("model: {0}")]
    Schema(Arc<serde_json::Error>),
    #[error("not a numasim model (format {0:?})")]
    NotNumasim(String),
    #[error("model format version {found} is newer than supported ({supported})")]
    TooNew { found: u32, supported: u32 },
    #[error("tree arrays must be non-empty and of equal length")]
    TreeArrays,
    #[error("node {0}: children must come after it and exist")]
    Children(usize),
    #[error("node {node}: feature {feature} out of range")]
    FeatureRange { node: usize, feature: u32 },
    #[error("tree {index}: {error}")]
    Tree {
        index: usize,
        error: Box<ModelError>,
    },
    #[error("logistic model: mean, scale and weights need one entry per feature")]
    LogisticShape,
    #[error("logistic model: scales must be finite and non-zero")]
    LogisticScale,
    #[error(
        "lstm model: steps of equal width over existing columns, one mean and scale per feature, and w, b, out_w sized by hidden (1 to 1024)"
    )]
    LstmShape,
    #[error("XGBoost model: {0}")]
    Xgboost(XgboostProblem),
    /// Fitting a model failed (`what` was being built).
    #[error("{what}: {error}")]
    Fit {
        what: &'static str,
        error: Arc<dyn std::error::Error + Send + Sync>,
    },
}

/// What is wrong with an XGBoost JSON dump.
#[derive(Debug, Clone, thiserror::Error)]
pub enum XgboostProblem {
    #[error("tree lacks {0}")]
    Lacks(&'static str),
    #[error("{0} holds a non-number")]
    NotANumber(&'static str),
    #[error("objective {0:?} is not supported (binary:logistic only)")]
    Objective(String),
    #[error("base_score {0} must be in (0, 1)")]
    BaseScore(f64),
    #[error("no gradient_booster.model.trees")]
    NoTrees,
    #[error("{names} feature names: a model may have at most {max}")]
    TooManyNames { names: usize, max: u32 },
    #[error("tree {0}: arrays of different lengths")]
    Lengths(usize),
    #[error(
        "tree {tree}, node {node}: split index {index} is not one of the {max} features a model may have"
    )]
    SplitIndex {
        tree: usize,
        node: usize,
        index: f64,
        max: u32,
    },
    #[error("{0}")]
    Check(Box<ModelError>),
}

/// The range a parameter must lie in, as the syntax writes it: `1..=64`,
/// `at most 1048576`, `a probability in [0, 1)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bound {
    Within { min: u64, max: u64 },
    AtMost(u64),
    Probability,
}

impl std::fmt::Display for Bound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Bound::Within { min, max } => write!(f, "{min}..={max}"),
            Bound::AtMost(max) => write!(f, "at most {max}"),
            Bound::Probability => f.write_str("a probability in [0, 1)"),
        }
    }
}
