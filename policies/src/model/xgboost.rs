//! Import of XGBoost models saved as JSON (`booster.save_model("m.json")`,
//! XGBoost ≥ 1.0): `learner.gradient_booster.model.trees[]` with
//! `left_children`, `right_children`, `split_indices`, `split_conditions`
//! (a leaf's value is in `split_conditions` / `base_weights`), and
//! `learner.learner_model_param.base_score`. Objective `binary:logistic`:
//! p = sigmoid(logit(base_score) + Σ leaves). A node goes left when
//! `x[split_index] < split_condition`; missing values are not modelled.

use serde_json::Value;

use super::{Body, LEAF, Link, Model, Tree, VERSION};
use crate::error::{ModelError, PolicyError, XgboostProblem};

/// Most features a model may read (its feature names are allocated for
/// every index up to the largest a split uses).
const MAX_FEATURES: u32 = 1 << 16;

fn err(p: XgboostProblem) -> PolicyError {
    ModelError::Xgboost(p).into()
}

fn nums(v: &Value, key: &'static str) -> Result<Vec<f64>, PolicyError> {
    v.get(key)
        .and_then(Value::as_array)
        .ok_or_else(|| err(XgboostProblem::Lacks(key)))?
        .iter()
        .map(|x| {
            x.as_f64()
                .ok_or_else(|| err(XgboostProblem::NotANumber(key)))
        })
        .collect()
}

fn num_str(v: &Value) -> Option<f64> {
    match v {
        Value::String(s) => s.trim_matches(|c| c == '[' || c == ']').parse().ok(),
        other => other.as_f64(),
    }
}

pub fn import(v: &Value) -> Result<Model, PolicyError> {
    let learner = &v["learner"];
    let objective = learner["objective"]["name"]
        .as_str()
        .unwrap_or("binary:logistic");
    if objective != "binary:logistic" {
        return Err(err(XgboostProblem::Objective(objective.to_string())));
    }
    let base_score = num_str(&learner["learner_model_param"]["base_score"]).unwrap_or(0.5);
    if !(base_score > 0.0 && base_score < 1.0) {
        return Err(err(XgboostProblem::BaseScore(base_score)));
    }
    let trees_v = learner["gradient_booster"]["model"]["trees"]
        .as_array()
        .ok_or_else(|| err(XgboostProblem::NoTrees))?;
    let names: Vec<String> = learner["feature_names"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    if names.len() > MAX_FEATURES as usize {
        return Err(err(XgboostProblem::TooManyNames {
            names: names.len(),
            max: MAX_FEATURES,
        }));
    }
    let mut max_feature = 0u32;
    let mut trees = Vec::new();
    for (ti, t) in trees_v.iter().enumerate() {
        let left = nums(t, "left_children")?;
        let right = nums(t, "right_children")?;
        let feat = nums(t, "split_indices")?;
        let cond = nums(t, "split_conditions")?;
        let n = left.len();
        if [right.len(), feat.len(), cond.len()]
            .iter()
            .any(|&l| l != n)
            || n == 0
        {
            return Err(err(XgboostProblem::Lengths(ti)));
        }
        // XGBoost numbers nodes breadth-first-ish with children after parents.
        let mut tree = Tree {
            feature: vec![0; n],
            threshold: vec![0.0; n],
            left: vec![LEAF; n],
            right: vec![LEAF; n],
            value: vec![0.0; n],
        };
        for i in 0..n {
            if left[i] < 0.0 {
                tree.value[i] = cond[i];
            } else {
                if !(0.0..MAX_FEATURES as f64).contains(&feat[i]) {
                    return Err(err(XgboostProblem::SplitIndex {
                        tree: ti,
                        node: i,
                        index: feat[i],
                        max: MAX_FEATURES,
                    }));
                }
                tree.left[i] = left[i] as u32;
                tree.right[i] = right[i] as u32;
                tree.feature[i] = feat[i] as u32;
                tree.threshold[i] = cond[i];
                max_feature = max_feature.max(feat[i] as u32);
            }
        }
        trees.push(tree);
    }
    let features = if names.is_empty() {
        (0..=max_feature).map(|i| format!("f{i}")).collect()
    } else {
        names
    };
    let m = Model {
        format: "numasim-model".into(),
        version: VERSION,
        trainer: "xgboost".into(),
        features,
        body: Body::Trees {
            link: Link::Logistic,
            base: (base_score / (1.0 - base_score)).ln(),
            trees,
        },
    };
    m.check()
        .map_err(|e| err(XgboostProblem::Check(Box::new(e))))?;
    Ok(m)
}

#[cfg(test)]
mod tests {
    use super::super::Model;

    /// A hand-built two-tree model in XGBoost's JSON layout.
    const TWO_TREES: &str = r#"{
      "learner": {
        "feature_names": ["x0", "x1"],
        "learner_model_param": { "base_score": "5E-1", "num_feature": "2" },
        "objective": { "name": "binary:logistic" },
        "gradient_booster": { "model": { "trees": [
          { "left_children": [1, -1, -1], "right_children": [2, -1, -1],
            "split_indices": [0, 0, 0], "split_conditions": [0.5, -0.4, 0.6],
            "base_weights": [0, -0.4, 0.6] },
          { "left_children": [1, 3, -1, -1, -1], "right_children": [2, 4, -1, -1, -1],
            "split_indices": [1, 0, 0, 0, 0], "split_conditions": [2.0, 1.5, 0.3, -0.2, 0.1],
            "base_weights": [0, 0, 0.3, -0.2, 0.1] }
        ] } }
      },
      "version": [1, 7, 6]
    }"#;

    #[test]
    fn two_tree_model_matches_a_hand_computation() {
        let m = Model::from_json(TWO_TREES).unwrap();
        assert_eq!(m.features, vec!["x0", "x1"]);
        let sig = |z: f64| 1.0 / (1.0 + (-z).exp());
        // base_score 0.5 → margin 0. Tree 1: x0 < 0.5 → -0.4 else 0.6.
        // Tree 2: x1 < 2 → (x0 < 1.5 → -0.2 else 0.1) else 0.3.
        let cases = [
            ([0.0, 0.0], -0.4 - 0.2),
            ([1.0, 1.0], 0.6 - 0.2),
            ([2.0, 1.0], 0.6 + 0.1),
            ([0.2, 3.0], -0.4 + 0.3),
        ];
        for (x, margin) in cases {
            let (p, nodes) = m.predict(&x);
            assert!(
                (p - sig(margin)).abs() < 1e-12,
                "{x:?}: {p} vs {}",
                sig(margin)
            );
            assert!(nodes == 2 + 2 || nodes == 2 + 3, "{nodes}");
        }
    }

    #[test]
    fn a_huge_split_index_is_an_error_not_a_huge_allocation() {
        // Found by the model fuzz target: 244444444 feature names.
        let t = TWO_TREES
            .replace("\"feature_names\": [\"x0\", \"x1\"],", "")
            .replace("[1, 0, 0, 0, 0]", "[244444444, 0, 0, 0, 0]");
        let e = Model::from_json(&t).unwrap_err().to_string();
        assert!(e.contains("split index 244444444"), "{e}");
        let t = TWO_TREES.replace("[1, 0, 0, 0, 0]", "[-1, 0, 0, 0, 0]");
        assert!(Model::from_json(&t).is_err());
    }

    #[test]
    fn other_objectives_are_refused() {
        let t = TWO_TREES.replace("binary:logistic", "reg:squarederror");
        assert!(
            Model::from_json(&t)
                .unwrap_err()
                .to_string()
                .contains("not supported")
        );
    }
}
