//! Model files: numasim's own JSON (`"format": "numasim-model"`) or an
//! XGBoost JSON dump, told apart by their keys, parsed and checked.

use super::{Model, VERSION, xgboost};
use crate::error::PolicyError;

impl Model {
    /// Parses and checks a model file.
    pub fn from_json(text: &str) -> Result<Model, PolicyError> {
        let v: serde_json::Value = serde_json::from_str(text)
            .map_err(|e| PolicyError(format!("model is not JSON: {e}")))?;
        if v.get("learner").is_some() {
            return xgboost::import(&v);
        }
        let m: Model = serde_json::from_value(v).map_err(|e| PolicyError(format!("model: {e}")))?;
        if m.format != "numasim-model" {
            return Err(PolicyError(format!(
                "not a numasim model (format {:?})",
                m.format
            )));
        }
        if m.version > VERSION {
            return Err(PolicyError(format!(
                "model format version {} is newer than supported ({VERSION})",
                m.version
            )));
        }
        m.check()?;
        Ok(m)
    }
}
