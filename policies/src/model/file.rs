//! Model files: numasim's own JSON (`"format": "numasim-model"`) or an
//! XGBoost JSON dump, told apart by their keys, parsed and checked.

use super::{Model, VERSION, xgboost};
use std::sync::Arc;

use crate::error::{ModelError, PolicyError};

impl Model {
    /// Parses and checks a model file.
    pub fn from_json(text: &str) -> Result<Model, PolicyError> {
        let v: serde_json::Value =
            serde_json::from_str(text).map_err(|e| ModelError::NotJson(Arc::new(e)))?;
        if v.get("learner").is_some() {
            return xgboost::import(&v);
        }
        let m: Model = serde_json::from_value(v).map_err(|e| ModelError::Schema(Arc::new(e)))?;
        if m.format != "numasim-model" {
            return Err(ModelError::NotNumasim(m.format).into());
        }
        if m.version > VERSION {
            return Err(ModelError::TooNew {
                found: m.version,
                supported: VERSION,
            }
            .into());
        }
        m.check()?;
        Ok(m)
    }
}
