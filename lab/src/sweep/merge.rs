//! A sweep's folder: where each point runs (`points/<i>/`), what the
//! folder remembers of its sweep (`sweep-points.json`, so a merge needs
//! only the folder), and the merge of the finished points' tables into
//! one ([`merge`]).

use std::path::{Path, PathBuf};

use serde_json::json;

use super::Sweep;

/// What a sweep folder remembers of its sweep.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub struct SweepRecord {
    pub sweep: PathBuf,
    pub keys: Vec<String>,
    pub cells: Vec<Vec<String>>,
}

impl SweepRecord {
    /// The record of `s`, read from `file`.
    pub fn of(s: &Sweep, file: &Path) -> SweepRecord {
        SweepRecord {
            sweep: std::path::absolute(file).unwrap_or(file.to_path_buf()),
            keys: s.keys.clone(),
            cells: (0..s.points.len()).map(|i| s.cells(i)).collect(),
        }
    }
}

/// What can stop a merge.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    #[error("{path}: cannot read (not a sweep folder?): {error}")]
    NoRecord { path: String, error: std::io::Error },
    #[error("{path}: cannot read: {error}")]
    Read { path: String, error: std::io::Error },
    #[error("{path}: not a sweep record: {error}")]
    Record {
        path: String,
        error: serde_json::Error,
    },
    #[error("{path}: {error}")]
    Csv { path: String, error: csv::Error },
    #[error("{path}: not JSON: {error}")]
    Json {
        path: String,
        error: serde_json::Error,
    },
}

/// Point `i`'s folder under the sweep's output folder.
pub fn point_dir(out: &Path, i: usize) -> PathBuf {
    out.join("points").join(i.to_string())
}

/// Point `i`'s values, `key = value, …`.
pub fn describe(s: &Sweep, i: usize) -> String {
    s.keys
        .iter()
        .zip(s.cells(i))
        .map(|(k, v)| format!("{k} = {v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A point's values as a JSON object, key by key.
pub fn values_json(keys: &[String], cells: &[String]) -> serde_json::Value {
    keys.iter()
        .zip(cells)
        .map(|(k, v)| (k.clone(), json!(v)))
        .collect::<serde_json::Map<_, _>>()
        .into()
}

/// A merged sweep: `sweep.csv`'s bytes, `sweep.json`, and the points not
/// finished.
pub struct Merged {
    pub csv: Vec<u8>,
    pub json: serde_json::Value,
    pub points: usize,
    pub missing: Vec<usize>,
}

/// Every finished point's `compare.csv` lines behind its grid values, in
/// point order, read from the sweep folder `out`.
pub fn merge(out: &Path) -> Result<Merged, MergeError> {
    let rec_path = out.join("sweep-points.json");
    let shown = |p: &Path| p.display().to_string();
    let text = std::fs::read_to_string(&rec_path).map_err(|error| MergeError::NoRecord {
        path: shown(&rec_path),
        error,
    })?;
    let rec: SweepRecord = serde_json::from_str(&text).map_err(|error| MergeError::Record {
        path: shown(&rec_path),
        error,
    })?;
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut header_written = false;
    let mut missing = Vec::new();
    let mut points = Vec::new();
    for (i, cells) in rec.cells.iter().enumerate() {
        let dir = point_dir(out, i);
        let csv_path = dir.join("compare.csv");
        if !dir.exists() {
            missing.push(i);
            continue;
        }
        let csv_err = |error| MergeError::Csv {
            path: shown(&csv_path),
            error,
        };
        let mut r = csv::Reader::from_path(&csv_path).map_err(csv_err)?;
        if !header_written {
            let mut h: Vec<String> = rec.keys.clone();
            h.extend(r.headers().map_err(csv_err)?.iter().map(String::from));
            w.write_record(&h).map_err(csv_err)?;
            header_written = true;
        }
        for line in r.records() {
            let line = line.map_err(csv_err)?;
            let mut v: Vec<String> = cells.clone();
            v.extend(line.iter().map(String::from));
            w.write_record(&v).map_err(csv_err)?;
        }
        let cj_path = dir.join("compare.json");
        let cj = std::fs::read_to_string(&cj_path).map_err(|error| MergeError::Read {
            path: shown(&cj_path),
            error,
        })?;
        let cj: serde_json::Value =
            serde_json::from_str(&cj).map_err(|error| MergeError::Json {
                path: shown(&cj_path),
                error,
            })?;
        points.push(json!({
            "point": i,
            "values": values_json(&rec.keys, cells),
            "rows": cj["rows"],
        }));
    }
    let csv = w.into_inner().map_err(|e| MergeError::Csv {
        path: "sweep.csv".into(),
        error: e.into_error().into(),
    })?;
    Ok(Merged {
        csv,
        json: json!({ "sweep": rec.sweep, "keys": rec.keys, "points": points }),
        points: rec.cells.len(),
        missing,
    })
}
