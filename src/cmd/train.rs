//! `numasim train DATA.csv|DATA.npy --model tree|forest|gbdt|logistic|lstm --out MODEL.json`.
//!
//! A dataset split by time and a model trained and scored on it
//! (`lab::train`); prints precision, recall and ROC AUC on both parts.

use std::path::PathBuf;

use anyhow::{Result, bail};
use lab::train::TrainError;

use crate::output::write_file;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Dataset: CSV with a header, or .npy with NAME.columns.txt beside it.
    pub data: PathBuf,
    /// tree, forest, gbdt, logistic or lstm (a small LSTM over the history
    /// windows).
    #[arg(long, default_value = "gbdt")]
    pub model: String,
    /// Output model file (JSON).
    #[arg(long)]
    pub out: PathBuf,
    /// Boosting rounds (gbdt), trees (forest) or epochs (lstm).
    #[arg(long, default_value_t = 60)]
    pub rounds: usize,
    /// Seed (forest, lstm).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Share of rows (the latest in time) held out.
    #[arg(long, default_value_t = 0.2)]
    pub holdout: f64,
}

pub fn run(a: Args) -> Result<()> {
    let (times, d) = lab::train::read(&a.data)?;
    if !(a.holdout > 0.0 && a.holdout < 1.0) {
        bail!("--holdout must be in (0, 1)");
    }
    let t = lab::train::fit(&times, &d, &a.model, a.rounds, a.seed, a.holdout).map_err(
        |e| match e {
            TrainError::UnknownModel(m) => {
                anyhow::anyhow!("--model {m:?}: expected {}", lab::train::MODELS)
            }
            e => e.into(),
        },
    )?;
    for (name, s) in &t.scores {
        println!(
            "{name:>9}: {} rows ({} positive)  precision {:.3}  recall {:.3}  AUC {:.3}",
            s.n, s.positives, s.precision, s.recall, s.auc
        );
    }
    println!(
        "{} model, {} features, {} nodes evaluated per prediction on average",
        t.model.trainer,
        t.model.features.len(),
        t.nodes
    );
    write_file(&a.out, t.model.to_json().as_bytes())?;
    Ok(())
}
