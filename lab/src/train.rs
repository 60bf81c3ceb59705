//! Training a predictor on a dataset (`numasim dataset`'s CSV or `.npy`,
//! or any CSV with a `time_ns` column, feature columns and a 0/1 `label`
//! column), split by time — the earliest rows train, the latest are held
//! out, never shuffled across time — and scored (precision, recall, ROC
//! AUC) on both parts.

use std::path::Path;

use policies::model::{self, Model, train::Data};

use crate::npy::{self, NpyError};

/// What can stop training.
#[derive(Debug, thiserror::Error)]
pub enum TrainError {
    #[error("{path}: cannot open: {error}")]
    Open { path: String, error: csv::Error },
    #[error("{path}: no header: {error}")]
    Header { path: String, error: csv::Error },
    #[error("{path}: record {record}: {error}")]
    Record {
        path: String,
        record: usize,
        error: csv::Error,
    },
    #[error(transparent)]
    Npy(#[from] NpyError),
    #[error("{path}: no {name} column")]
    NoColumn { path: String, name: &'static str },
    #[error("{path}: {at}: column {column:?} is not a finite number")]
    NotFinite {
        path: String,
        at: String,
        column: String,
    },
    #[error("{path}: {at}: label must be 0 or 1, found {value}")]
    Label {
        path: String,
        at: String,
        value: f64,
    },
    #[error("{path}: only {rows} rows; need at least 10")]
    TooFew { path: String, rows: usize },
    #[error("model {0:?}: expected {MODELS}")]
    UnknownModel(String),
    #[error(transparent)]
    Fit(#[from] policies::PolicyError),
}

/// The model kinds [`fit`] trains.
pub const MODELS: &str = "tree, forest, gbdt, logistic or lstm";

type Result<T> = std::result::Result<T, TrainError>;

/// Reads a dataset (CSV with a header, or `.npy` with its `.columns.txt`):
/// the rows' times and the training data (columns other than `time_ns`,
/// `id` and `label` are features).
pub fn read(path: &Path) -> Result<(Vec<u64>, Data)> {
    let p = || path.display().to_string();
    if npy::is_npy(path) {
        let (names, a) = npy::read(path)?;
        let rows = a.rows().into_iter().enumerate().map(|(k, r)| {
            let v = r.iter().map(|x| x.is_finite().then_some(*x)).collect();
            Ok((format!("row {k}"), v))
        });
        return assemble(path, &names, rows);
    }
    let mut rdr =
        csv::Reader::from_path(path).map_err(|error| TrainError::Open { path: p(), error })?;
    let header: Vec<String> = rdr
        .headers()
        .map_err(|error| TrainError::Header { path: p(), error })?
        .iter()
        .map(String::from)
        .collect();
    let rows = rdr.records().enumerate().map(|(k, rec)| {
        let rec = rec.map_err(|error| TrainError::Record {
            path: p(),
            record: k,
            error,
        })?;
        let line = rec.position().map_or(0, |p| p.line());
        let v = rec
            .iter()
            .map(|c| c.trim().parse::<f64>().ok().filter(|x| x.is_finite()))
            .collect();
        Ok((format!("line {line}, record {k}"), v))
    });
    assemble(path, &header, rows)
}

/// Times and training data from named columns and rows of cells (`None`:
/// not a finite number), each row with its location for errors.
fn assemble(
    path: &Path,
    header: &[String],
    rows: impl Iterator<Item = Result<(String, Vec<Option<f64>>)>>,
) -> Result<(Vec<u64>, Data)> {
    let p = || path.display().to_string();
    let col = |name: &'static str| {
        header
            .iter()
            .position(|h| h == name)
            .ok_or(TrainError::NoColumn { path: p(), name })
    };
    let (time, label) = (col("time_ns")?, col("label")?);
    let feats: Vec<usize> = (0..header.len())
        .filter(|&i| i != time && i != label && header[i] != "id")
        .collect();
    let mut d = Data {
        names: feats.iter().map(|&i| header[i].clone()).collect(),
        ..Default::default()
    };
    let mut times = Vec::new();
    for row in rows {
        let (at, cells) = row?;
        let num = |i: usize| -> Result<f64> {
            cells
                .get(i)
                .copied()
                .flatten()
                .ok_or_else(|| TrainError::NotFinite {
                    path: p(),
                    at: at.clone(),
                    column: header[i].clone(),
                })
        };
        let y = num(label)?;
        if y != 0.0 && y != 1.0 {
            return Err(TrainError::Label {
                path: p(),
                at,
                value: y,
            });
        }
        times.push(num(time)? as u64);
        d.x.push(feats.iter().map(|&i| num(i)).collect::<Result<_>>()?);
        d.y.push(y == 1.0);
    }
    if d.y.len() < 10 {
        return Err(TrainError::TooFew {
            path: p(),
            rows: d.y.len(),
        });
    }
    Ok((times, d))
}

/// A trained model and its scores.
pub struct Trained {
    pub model: Model,
    /// (part name, score) for the training part and the held-out part.
    pub scores: Vec<(&'static str, model::Scores)>,
    /// Tree nodes evaluated per held-out prediction, on average.
    pub nodes: u64,
}

/// Trains a `kind` model (one of [`MODELS`]; `rounds` boosting rounds or
/// trees, `seed` for the forest) on the earliest `1 − holdout` of the rows
/// by time, and scores it on both parts.
pub fn fit(
    times: &[u64],
    d: &Data,
    kind: &str,
    rounds: usize,
    seed: u64,
    holdout: f64,
) -> Result<Trained> {
    // Split by time, not at random.
    let mut order: Vec<usize> = (0..d.y.len()).collect();
    order.sort_by_key(|&i| (times[i], i));
    let cut = ((1.0 - holdout) * order.len() as f64) as usize;
    let pick = |ix: &[usize]| Data {
        names: d.names.clone(),
        x: ix.iter().map(|&i| d.x[i].clone()).collect(),
        y: ix.iter().map(|&i| d.y[i]).collect(),
    };
    let (train, test) = (pick(&order[..cut]), pick(&order[cut..]));
    let m = match kind {
        "tree" => model::train::tree(&train),
        "forest" => model::train::forest(&train, rounds.max(1), seed),
        "gbdt" => model::train::gbdt(&train, rounds.max(1)),
        "logistic" => model::linfa_fit::logistic(&train)?,
        "lstm" => model::lstm_fit::train(
            &train,
            model::lstm_fit::Fit {
                epochs: rounds.max(1),
                seed,
                ..model::lstm_fit::Fit::default()
            },
        ),
        other => return Err(TrainError::UnknownModel(other.to_string())),
    };
    let scores = [("train", &train), ("held-out", &test)]
        .into_iter()
        .map(|(name, part)| {
            let p: Vec<f64> = part.x.iter().map(|x| m.predict(x).0).collect();
            (name, model::score(&p, &part.y))
        })
        .collect();
    let nodes =
        test.x.iter().map(|x| m.predict(x).1 as u64).sum::<u64>() / test.x.len().max(1) as u64;
    Ok(Trained {
        model: m,
        scores,
        nodes,
    })
}
