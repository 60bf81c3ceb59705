//! Model files for learned policies (`learned:FILE`), read relative to a
//! base folder and noted in the run's input log.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use policies::PolicyError;
use policies::model::Model;
use policies::registry::{ModelLoader, Timer};

use crate::{InputLog, LabError};

/// Reads and checks a model file (numasim's format or XGBoost JSON).
pub fn read(path: &Path, log: &InputLog) -> Result<Model, LabError> {
    let text = std::fs::read_to_string(path).map_err(|error| LabError::Read {
        path: path.display().to_string(),
        what: "model",
        error,
    })?;
    log.note_file("model", path, text.as_bytes());
    Model::from_json(&text).map_err(|error| LabError::Model {
        path: path.display().to_string(),
        error,
    })
}

/// The one loader of `learned:FILE` models: paths relative to `base`,
/// each read noted in `log`.
pub struct FileLoader {
    pub base: PathBuf,
    pub log: InputLog,
}

impl FileLoader {
    /// Loads models relative to the working directory.
    pub fn cwd(log: &InputLog) -> FileLoader {
        FileLoader {
            base: PathBuf::new(),
            log: log.clone(),
        }
    }
}

impl ModelLoader for FileLoader {
    fn load(&self, path: &str) -> Result<Model, PolicyError> {
        read(&self.base.join(path), &self.log)
            .map_err(|e| PolicyError::Load(std::sync::Arc::new(e)))
    }
}

/// A fresh timer: its samples are the real prediction times of the policy
/// built with it, on a monotonic clock that starts with it (only
/// differences are used; reported beside results, never simulated).
pub fn timer() -> Timer {
    let start = Instant::now();
    Timer {
        clock: Arc::new(move || start.elapsed().as_nanos() as u64),
        samples: Arc::new(Mutex::new(Vec::new())),
    }
}
