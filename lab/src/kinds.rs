//! One experiment type for every kind of experiment file
//! ([`AnyExperiment`]): the schema's `[workload]` decides which.

use std::path::Path;

use serde::Deserialize;

use crate::LabError;
use crate::experiment::{Experiment, Meta};
use crate::tasks::TaskExperiment;

/// An experiment file of either kind. The schema decides, in this one
/// place: a `[workload]` that names a recorded `trace` is a task-trace
/// experiment ([`TaskExperiment`]: rows of scheduler, placement and
/// prefetch); any other is the request model's ([`Experiment`], which
/// also runs at line level).
pub enum AnyExperiment {
    Requests(Box<Experiment>),
    Tasks(Box<TaskExperiment>),
}

impl AnyExperiment {
    /// Parses an experiment's `text` as if read from `path` (relative
    /// paths in it resolve against `path`'s folder).
    pub fn parse_file_text(path: &Path, text: &str) -> Result<AnyExperiment, LabError> {
        AnyExperiment::parse_file_text_with(path, text, None)
    }

    /// [`AnyExperiment::parse_file_text`] with policies `custom` supplies
    /// beside the registries (schedulers, and request experiments' preloads).
    pub fn parse_file_text_with(
        path: &Path,
        text: &str,
        custom: Option<std::sync::Arc<dyn crate::custom::CustomPolicies>>,
    ) -> Result<AnyExperiment, LabError> {
        #[derive(Deserialize)]
        struct Head {
            workload: Option<toml::Table>,
        }
        let traced = toml::from_str::<Head>(text)
            .ok()
            .and_then(|h| h.workload)
            .is_some_and(|w| w.contains_key("trace"));
        if !traced {
            return Ok(AnyExperiment::Requests(Box::new(
                Experiment::parse_file_text_with(path, text, custom)?,
            )));
        }
        let origin = path.display().to_string();
        let mut t: TaskExperiment = traces::config::parse_toml(text)
            .map_err(|error| LabError::ExperimentToml { origin, error })?;
        t.base = path.parent().map(Path::to_path_buf).unwrap_or_default();
        t.custom = custom;
        Ok(AnyExperiment::Tasks(Box::new(t)))
    }

    /// Reads and parses the experiment file at `path`; also returns its
    /// text (which a manifest records).
    pub fn load(path: &Path) -> Result<(AnyExperiment, String), LabError> {
        let text = std::fs::read_to_string(path).map_err(|error| LabError::Read {
            path: path.display().to_string(),
            what: "experiment",
            error,
        })?;
        Ok((AnyExperiment::parse_file_text(path, &text)?, text))
    }

    /// The `[experiment]` table.
    pub fn meta(&mut self) -> &mut Meta {
        match self {
            AnyExperiment::Requests(e) => &mut e.experiment,
            AnyExperiment::Tasks(t) => &mut t.experiment,
        }
    }
}
