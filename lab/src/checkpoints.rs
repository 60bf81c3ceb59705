//! Checkpoint files of a timing replay: where in the trace they are taken
//! and resumed ([`Plan`]), and the files themselves, written whole or not
//! at all (temporary file + rename) and read with every check of
//! [`sim::checkpoint::read`] ([`sim::checkpoint`] has the format).

use std::ops::Range;
use std::path::{Path, PathBuf};

use sim::checkpoint::{self, CheckpointError, Header};

/// A checkpoint file that cannot be written, read, or used.
#[derive(Debug, thiserror::Error)]
pub enum CheckpointFileError {
    #[error("{path}: {error}")]
    Io { path: String, error: std::io::Error },
    #[error("{path}: {error}")]
    Bad {
        path: String,
        error: CheckpointError,
    },
    #[error("checkpoint at record {at}: the trace has only {records} records")]
    PastEnd { at: u64, records: u64 },
    #[error(
        "checkpoint at record {at}: it must come after the checkpoint resumed from (record {from})"
    )]
    BeforeResume { at: u64, from: u64 },
}

/// Where a replay saves and resumes.
#[derive(Clone, Debug, Default)]
pub struct Plan {
    /// Save the state after this many records into this file.
    pub save: Option<(PathBuf, u64)>,
    /// Resume from this file (its records are read, checked and skipped).
    pub from: Option<PathBuf>,
}

impl Plan {
    /// Saves into `save` after `at` records (when both are given), resumes from `from`.
    pub fn new(save: &Option<PathBuf>, at: Option<u64>, from: &Option<PathBuf>) -> Plan {
        Plan {
            save: save.clone().zip(at),
            from: from.clone(),
        }
    }
}

/// `records` of a batch whose first record is record `start`, cut at the
/// record indices `at` (a cut at `c` ends one range before record `c`).
pub fn cuts(start: u64, records: usize, at: &[u64]) -> Vec<Range<usize>> {
    let mut points: Vec<usize> = at
        .iter()
        .filter(|&&c| c > start && c < start + records as u64)
        .map(|&c| (c - start) as usize)
        .collect();
    points.sort_unstable();
    points.dedup();
    let mut out = Vec::with_capacity(points.len() + 1);
    let mut from = 0;
    for p in points.into_iter().chain([records]) {
        out.push(from..p);
        from = p;
    }
    out
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> CheckpointFileError + '_ {
    move |error| CheckpointFileError::Io {
        path: path.display().to_string(),
        error,
    }
}

/// Reads and checks a checkpoint file: its header and the engine's state.
/// Its first bytes are checked before the rest is read, so another file
/// (a trace given in its place, a device) is refused without reading it.
pub fn load(path: &Path) -> Result<(Header, Vec<u8>), CheckpointFileError> {
    use std::io::Read;
    let mut file = std::fs::File::open(path).map_err(io(path))?;
    let mut bytes = Vec::new();
    (&mut file)
        .take(checkpoint::MAGIC.len() as u64)
        .read_to_end(&mut bytes)
        .map_err(io(path))?;
    if bytes != checkpoint::MAGIC {
        return Err(bad(path, CheckpointError::Magic));
    }
    file.read_to_end(&mut bytes).map_err(io(path))?;
    let (header, state) = checkpoint::read(&bytes).map_err(|error| bad(path, error))?;
    Ok((header, state.to_vec()))
}

/// `error` about the checkpoint at `path`.
pub fn bad(path: &Path, error: CheckpointError) -> CheckpointFileError {
    CheckpointFileError::Bad {
        path: path.display().to_string(),
        error,
    }
}

/// Writes a checkpoint whole or not at all.
pub fn save(path: &Path, header: &Header, state: &[u8]) -> Result<(), CheckpointFileError> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    std::fs::write(&tmp, checkpoint::write(header, state)).map_err(io(&tmp))?;
    std::fs::rename(&tmp, path).map_err(io(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Cuts by hand: none inside, one inside, at the edges, repeated.
    #[test]
    fn batches_are_cut_at_the_checkpoints() {
        assert_eq!(cuts(0, 10, &[]), vec![0..10]);
        assert_eq!(cuts(100, 10, &[105]), vec![0..5, 5..10]);
        assert_eq!(cuts(100, 10, &[100, 110, 5, 500]), vec![0..10]);
        assert_eq!(cuts(100, 10, &[107, 102, 107]), vec![0..2, 2..7, 7..10]);
    }
}
