//! `numasim train DATA.csv|DATA.npy --model tree|forest|gbdt|logistic --out MODEL.json`.
//!
//! Reads a dataset written by `numasim dataset` (or any CSV with a
//! `time_ns` column, feature columns and a 0/1 `label` column; or a `.npy`
//! matrix with its `.columns.txt`), splits it by
//! time — the earliest 80% of rows train, the latest 20% are held out, never
//! shuffled across time — trains, and prints precision, recall and ROC AUC
//! on both parts.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use policies::model::{self, train::Data};

use crate::output::write_file;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Dataset: CSV with a header, or .npy with NAME.columns.txt beside it.
    pub data: PathBuf,
    /// tree, forest, gbdt or logistic.
    #[arg(long, default_value = "gbdt")]
    pub model: String,
    /// Output model file (JSON).
    #[arg(long)]
    pub out: PathBuf,
    /// Boosting rounds (gbdt) or trees (forest).
    #[arg(long, default_value_t = 60)]
    pub rounds: usize,
    /// Seed (forest).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Share of rows (the latest in time) held out.
    #[arg(long, default_value_t = 0.2)]
    pub holdout: f64,
}

/// Reads a dataset (CSV with a header, or `.npy` with its `.columns.txt`):
/// columns other than time_ns, id and label are features.
pub fn read(path: &std::path::Path) -> Result<(Vec<u64>, Data)> {
    if crate::npy::is_npy(path) {
        let (names, a) = crate::npy::read(path)?;
        let rows = a.rows().into_iter().enumerate().map(|(k, r)| {
            let v = r.iter().map(|x| x.is_finite().then_some(*x)).collect();
            Ok((format!("row {k}"), v))
        });
        return assemble(path, &names, rows);
    }
    let mut rdr =
        csv::Reader::from_path(path).with_context(|| format!("{}: cannot open", path.display()))?;
    let header: Vec<String> = rdr
        .headers()
        .with_context(|| format!("{}: no header", path.display()))?
        .iter()
        .map(String::from)
        .collect();
    let rows = rdr.records().enumerate().map(|(k, rec)| {
        let rec = rec.with_context(|| format!("{}: record {k}", path.display()))?;
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
    path: &std::path::Path,
    header: &[String],
    rows: impl Iterator<Item = Result<(String, Vec<Option<f64>>)>>,
) -> Result<(Vec<u64>, Data)> {
    let col = |name: &str| {
        header
            .iter()
            .position(|h| h == name)
            .with_context(|| format!("{}: no {name} column", path.display()))
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
            cells.get(i).copied().flatten().with_context(|| {
                format!(
                    "{}: {at}: column {:?} is not a finite number",
                    path.display(),
                    header[i]
                )
            })
        };
        let y = num(label)?;
        if y != 0.0 && y != 1.0 {
            bail!("{}: {at}: label must be 0 or 1, found {y}", path.display());
        }
        times.push(num(time)? as u64);
        d.x.push(feats.iter().map(|&i| num(i)).collect::<Result<_>>()?);
        d.y.push(y == 1.0);
    }
    if d.y.len() < 10 {
        bail!(
            "{}: only {} rows; need at least 10",
            path.display(),
            d.y.len()
        );
    }
    Ok((times, d))
}

pub fn run(a: Args) -> Result<()> {
    let (times, d) = read(&a.data)?;
    if !(a.holdout > 0.0 && a.holdout < 1.0) {
        bail!("--holdout must be in (0, 1)");
    }
    // Split by time, not at random.
    let mut order: Vec<usize> = (0..d.y.len()).collect();
    order.sort_by_key(|&i| (times[i], i));
    let cut = ((1.0 - a.holdout) * order.len() as f64) as usize;
    let pick = |ix: &[usize]| Data {
        names: d.names.clone(),
        x: ix.iter().map(|&i| d.x[i].clone()).collect(),
        y: ix.iter().map(|&i| d.y[i]).collect(),
    };
    let (train, test) = (pick(&order[..cut]), pick(&order[cut..]));
    let m = match a.model.as_str() {
        "tree" => model::train::tree(&train),
        "forest" => model::train::forest(&train, a.rounds.max(1), a.seed),
        "gbdt" => model::train::gbdt(&train, a.rounds.max(1)),
        "logistic" => model::linfa_fit::logistic(&train)?,
        other => bail!("--model {other:?}: expected tree, forest, gbdt or logistic"),
    };
    for (name, part) in [("train", &train), ("held-out", &test)] {
        let p: Vec<f64> = part.x.iter().map(|x| m.predict(x).0).collect();
        let s = model::score(&p, &part.y);
        println!(
            "{name:>9}: {} rows ({} positive)  precision {:.3}  recall {:.3}  AUC {:.3}",
            s.n, s.positives, s.precision, s.recall, s.auc
        );
    }
    let nodes: u64 =
        test.x.iter().map(|x| m.predict(x).1 as u64).sum::<u64>() / test.x.len().max(1) as u64;
    println!(
        "{} model, {} features, {} nodes evaluated per prediction on average",
        m.trainer,
        m.features.len(),
        nodes
    );
    write_file(&a.out, m.to_json().as_bytes())?;
    Ok(())
}
