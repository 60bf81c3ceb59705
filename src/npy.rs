//! Datasets as NumPy arrays: one `float64` C-order matrix in `NAME.npy`
//! (`numpy.load`), its column names one per line in `NAME.columns.txt`
//! beside it (the order of the CSV header).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use ndarray::Array2;
use ndarray_npy::{ReadNpyExt, WriteNpyExt};

use crate::output::write_file;

/// Whether `path` names a `.npy` file.
pub fn is_npy(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("npy"))
}

/// The column-name file beside `NAME.npy`: `NAME.columns.txt`.
pub fn columns_path(npy: &Path) -> PathBuf {
    npy.with_extension("columns.txt")
}

/// Writes `rows` (each `names.len()` long) as `path` and its column file,
/// each atomically.
pub fn write(path: &Path, names: &[String], rows: &[Vec<f64>]) -> Result<()> {
    let cols = names.len();
    let flat: Vec<f64> = rows.iter().flat_map(|r| r.iter().copied()).collect();
    let a = Array2::from_shape_vec((rows.len(), cols), flat)
        .context("dataset rows of unequal length")?;
    let mut bytes = Vec::with_capacity(128 + 8 * a.len());
    a.write_npy(&mut bytes)
        .with_context(|| format!("{}: cannot encode", path.display()))?;
    // The names first: the array, the main output, appears last.
    let mut text = names.join("\n");
    text.push('\n');
    write_file(&columns_path(path), text.as_bytes())?;
    write_file(path, &bytes)
}

/// Reads `path` (a 2-D float64 array) and its column names.
pub fn read(path: &Path) -> Result<(Vec<String>, Array2<f64>)> {
    let f =
        std::fs::File::open(path).with_context(|| format!("{}: cannot open", path.display()))?;
    let a = Array2::<f64>::read_npy(std::io::BufReader::new(f))
        .map_err(|e| anyhow::anyhow!("{}: not a 2-D float64 .npy array: {e}", path.display()))?;
    let cp = columns_path(path);
    let text = std::fs::read_to_string(&cp).with_context(|| {
        format!(
            "{}: cannot read the column names (numasim dataset writes them beside the .npy)",
            cp.display()
        )
    })?;
    let names: Vec<String> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(String::from)
        .collect();
    if names.len() != a.ncols() {
        bail!(
            "{}: {} column names for {} columns of {}",
            cp.display(),
            names.len(),
            a.ncols(),
            path.display()
        );
    }
    Ok((names, a))
}
