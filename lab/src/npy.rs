//! Datasets as NumPy arrays: one `float64` C-order matrix in `NAME.npy`
//! (`numpy.load`), its column names one per line in `NAME.columns.txt`
//! beside it (the order of the CSV header).

use std::path::{Path, PathBuf};

use ndarray::Array2;
use ndarray_npy::{ReadNpyExt, WriteNpyExt};

/// A `.npy` dataset that cannot be made or read.
#[derive(Debug, thiserror::Error)]
pub enum NpyError {
    #[error("dataset rows of unequal length")]
    Ragged,
    #[error("cannot encode the array: {0}")]
    Encode(ndarray_npy::WriteNpyError),
    #[error("{path}: cannot open: {error}")]
    Open { path: String, error: std::io::Error },
    #[error("{path}: not a 2-D float64 .npy array: {error}")]
    Decode {
        path: String,
        error: ndarray_npy::ReadNpyError,
    },
    #[error(
        "{path}: cannot read the column names (numasim dataset writes them beside the .npy): {error}"
    )]
    Columns { path: String, error: std::io::Error },
    #[error("{path}: {names} column names for {cols} columns of {npy}")]
    ColumnCount {
        path: String,
        names: usize,
        cols: usize,
        npy: String,
    },
}

/// Whether `path` names a `.npy` file.
pub fn is_npy(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("npy"))
}

/// The column-name file beside `NAME.npy`: `NAME.columns.txt`.
pub fn columns_path(npy: &Path) -> PathBuf {
    npy.with_extension("columns.txt")
}

/// `rows` (each `names.len()` long) as `.npy` bytes, and the column file's text.
pub fn encode(names: &[String], rows: &[Vec<f64>]) -> Result<(Vec<u8>, String), NpyError> {
    let flat: Vec<f64> = rows.iter().flat_map(|r| r.iter().copied()).collect();
    let a =
        Array2::from_shape_vec((rows.len(), names.len()), flat).map_err(|_| NpyError::Ragged)?;
    let mut bytes = Vec::with_capacity(128 + 8 * a.len());
    a.write_npy(&mut bytes).map_err(NpyError::Encode)?;
    let mut text = names.join("\n");
    text.push('\n');
    Ok((bytes, text))
}

/// Reads `path` (a 2-D float64 array) and its column names.
pub fn read(path: &Path) -> Result<(Vec<String>, Array2<f64>), NpyError> {
    let shown = path.display().to_string();
    let f = std::fs::File::open(path).map_err(|error| NpyError::Open {
        path: shown.clone(),
        error,
    })?;
    let a =
        Array2::<f64>::read_npy(std::io::BufReader::new(f)).map_err(|error| NpyError::Decode {
            path: shown.clone(),
            error,
        })?;
    let cp = columns_path(path);
    let text = std::fs::read_to_string(&cp).map_err(|error| NpyError::Columns {
        path: cp.display().to_string(),
        error,
    })?;
    let names: Vec<String> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(String::from)
        .collect();
    if names.len() != a.ncols() {
        return Err(NpyError::ColumnCount {
            path: cp.display().to_string(),
            names: names.len(),
            cols: a.ncols(),
            npy: shown,
        });
    }
    Ok((names, a))
}
