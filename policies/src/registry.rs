//! Policies by name: one list of entries per kind, each entry written once —
//! its name, its parameters, a one-line help and how to build it — in the
//! policy's own file. Everything else is generated from these lists: the
//! binary's `numasim policies` listing, its flags' help text, and the
//! "unknown name" errors.
//!
//! A spec names an entry and may carry colon-separated arguments after it
//! (`bind:1`, `ip-stride:2:1`, `learned:model.json:delta:2`); the entry's
//! `build` parses them. What a build may need beyond its arguments comes in
//! a [`Ctx`]: the machine, the seed of randomised policies, and — for
//! learned policies — a [`ModelLoader`] that the binary passes in, since
//! only the binary reads files.

use std::sync::{Arc, Mutex};

use sim::Machine;

use crate::error::{PolicyError, SpecProblem};
use crate::model::Model;

/// A policy spec split at its first colon.
#[derive(Clone, Copy, Debug)]
pub struct Spec<'a> {
    /// The whole spec, as given.
    pub full: &'a str,
    /// The entry's name: the spec up to its first colon.
    pub name: &'a str,
    /// What follows the first colon, if anything.
    pub rest: Option<&'a str>,
}

impl<'a> Spec<'a> {
    pub fn parse(full: &'a str) -> Spec<'a> {
        let (name, rest) = match full.split_once(':') {
            Some((n, r)) => (n, Some(r)),
            None => (full, None),
        };
        Spec { full, name, rest }
    }

    /// The error of this spec, a policy of `kind`.
    pub fn error(&self, kind: &'static str, problem: SpecProblem) -> PolicyError {
        PolicyError::Spec {
            kind,
            spec: self.full.to_string(),
            problem: Box::new(problem),
        }
    }

    /// The arguments as numbers (`stream:16:4` → `[16, 4]`).
    pub fn numbers(&self, kind: &'static str) -> Result<Vec<u64>, PolicyError> {
        let Some(rest) = self.rest else {
            return Ok(Vec::new());
        };
        rest.split(':')
            .map(|x| {
                x.parse::<u64>()
                    .map_err(|_| self.error(kind, SpecProblem::NotANumber(x.to_string())))
            })
            .collect()
    }

    /// Fails unless the spec has no arguments.
    pub fn no_arguments(&self, kind: &'static str) -> Result<(), PolicyError> {
        match self.rest {
            None => Ok(()),
            Some(_) => Err(self.error(kind, SpecProblem::NoArguments(self.name.to_string()))),
        }
    }
}

/// Reads a model file for a learned policy (the binary's: library crates
/// open no files).
pub trait ModelLoader {
    /// The model at `path` (as written in the spec), or an error that names
    /// the file.
    fn load(&self, path: &str) -> Result<Model, PolicyError>;
}

/// Wall-clock samples of a learned policy's real prediction time:
/// reported beside the results, never part of the simulation. The clock is
/// the binary's (library crates read none).
#[derive(Clone)]
pub struct Timer {
    /// A monotonic clock in ns (any epoch: only differences are used).
    pub clock: Arc<dyn Fn() -> u64 + Send + Sync>,
    pub samples: Arc<Mutex<Vec<u64>>>,
}

/// What building a policy may need besides its spec.
#[derive(Clone, Copy, Default)]
pub struct Ctx<'a> {
    /// The machine (placement checks its nodes).
    pub machine: Option<&'a Machine>,
    /// Seed of randomised policies.
    pub seed: u64,
    /// Cache line size (bytes) and cores, for prefetchers.
    pub line: u64,
    pub cores: usize,
    /// Reads model files for `learned:FILE` specs.
    pub loader: Option<&'a dyn ModelLoader>,
    /// Where a learned policy records its real prediction times.
    pub timer: Option<&'a Timer>,
}

impl<'a> Ctx<'a> {
    /// A context for `machine`: its line size and core count.
    pub fn for_machine(machine: &'a Machine) -> Ctx<'a> {
        Ctx {
            machine: Some(machine),
            line: machine.spec.line_size,
            cores: machine.cores(),
            ..Ctx::default()
        }
    }

    pub fn machine(&self, spec: &Spec) -> Result<&'a Machine, PolicyError> {
        self.machine.ok_or_else(|| PolicyError::NeedsMachine {
            spec: spec.full.to_string(),
        })
    }

    /// The model file `path` through the binary's loader.
    pub fn load(&self, spec: &Spec, path: &str) -> Result<Model, PolicyError> {
        match self.loader {
            Some(l) => l.load(path),
            None => Err(PolicyError::NoLoader {
                spec: spec.full.to_string(),
                path: path.to_string(),
            }),
        }
    }
}

/// One policy: written once, in its own file.
pub struct Entry<T: ?Sized + 'static> {
    /// What a spec starts with (`bind`).
    pub name: &'static str,
    /// The arguments' syntax after the name (`:N`, `[:D[:K]]`; empty: none).
    pub params: &'static str,
    /// One line: what it does.
    pub help: &'static str,
    pub build: fn(&Spec, &Ctx) -> Result<Box<T>, PolicyError>,
}

impl<T: ?Sized> Entry<T> {
    /// Name and parameters, as a user writes them (`bind:N`).
    pub fn syntax(&self) -> String {
        format!("{}{}", self.name, self.params)
    }
}

/// One registered policy: its kind (`scheduler`), name, the parameters'
/// syntax after the name (`:N`; empty: none) and its one-line help.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Listed {
    pub kind: &'static str,
    pub name: &'static str,
    pub parameters: &'static str,
    pub help: &'static str,
}

/// Every entry of one kind.
pub struct Registry<T: ?Sized + 'static> {
    /// The kind, singular, as errors name it (`scheduler`).
    pub kind: &'static str,
    /// The listing's heading (`schedulers`).
    pub heading: &'static str,
    pub entries: &'static [Entry<T>],
}

impl<T: ?Sized> Registry<T> {
    /// Builds the policy `spec` names.
    pub fn build(&self, spec: &str, ctx: &Ctx) -> Result<Box<T>, PolicyError> {
        let s = Spec::parse(spec.trim());
        match self.entries.iter().find(|e| e.name == s.name) {
            Some(e) => (e.build)(&s, ctx),
            None => Err(PolicyError::Unknown {
                kind: self.kind,
                name: spec.to_string(),
                known: self.syntax_list(),
            }),
        }
    }

    /// Every entry's syntax, comma-separated (`first-touch, interleave, bind:N`).
    pub fn syntax_list(&self) -> String {
        self.entries
            .iter()
            .map(Entry::syntax)
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Every entry as a value.
    pub fn listed(&self) -> Vec<Listed> {
        self.entries
            .iter()
            .map(|e| Listed {
                kind: self.kind,
                name: e.name,
                parameters: e.params,
                help: e.help,
            })
            .collect()
    }

    /// `(syntax, help)` of every entry.
    pub fn listing(&self) -> (&'static str, Vec<(String, &'static str)>) {
        (
            self.heading,
            self.entries.iter().map(|e| (e.syntax(), e.help)).collect(),
        )
    }
}

/// Declares a kind's modules (one file per policy) and its registry: a
/// policy is added with its file and one `module: [ENTRY]` line.
macro_rules! registry {
    (
        $(#[$meta:meta])*
        pub static $reg:ident: $t:ty = ($kind:literal, $heading:literal);
        $($module:ident: [$($entry:ident),+],)+
    ) => {
        $(pub mod $module;)+
        $(#[$meta])*
        pub static $reg: $crate::registry::Registry<$t> = $crate::registry::Registry {
            kind: $kind,
            heading: $heading,
            entries: &[$($($module::$entry),+),+],
        };
    };
}
pub(crate) use registry;
