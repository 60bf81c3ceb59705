//! Sweep files (`docs/sweep.md`): an experiment and a grid of overrides,
//! expanded into points, each the experiment's text with its overrides
//! applied. Pure functions of the files' text, so a Slurm array task and a
//! local run build the same point from the same index.
//!
//! Grid keys are dotted paths into the experiment file: `workload.qps`,
//! `experiment.seeds`, `row.<name>.<field>` (one row, by name) and
//! `rows.<field>` (every row). Points are the product of the `[grid]` lists
//! in file order, the last key varying fastest, or an explicit `points`
//! list of tables.
//!
//! Errors are typed ([`SweepError`], [`ApplyError`]) and say the sweep
//! file or key, never a flag.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::InputLog;

pub mod merge;

/// A sweep file that cannot be read or expanded.
#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    #[error("{path}: cannot read the sweep file: {error}")]
    Read { path: String, error: std::io::Error },
    #[error("{origin}: {error}")]
    Toml {
        origin: String,
        error: traces::config::ConfigError,
    },
    #[error("{origin}: sweep.experiment {experiment}: cannot read: {error}")]
    ReadExperiment {
        origin: String,
        experiment: String,
        error: std::io::Error,
    },
    #[error("{origin}: {problem}")]
    Shape { origin: String, problem: Shape },
    #[error("{origin}: {error}")]
    Point {
        origin: String,
        error: Box<PointError>,
    },
}

/// What is wrong with a sweep's grid or points.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Shape {
    #[error("give [grid] or points, not both")]
    GridAndPoints,
    #[error("a sweep needs a [grid] (or a points list)")]
    Neither,
    #[error("grid.{0}: a table; write dotted paths quoted, \"{0}.field\" = [..]")]
    GridTable(String),
    #[error("grid.\"{0}\": expected a non-empty list of values")]
    NotAList(String),
    #[error("the grid has more than {MAX_POINTS} points")]
    GridTooBig,
    #[error("points is empty")]
    NoPoints,
    #[error("more than {MAX_POINTS} points")]
    TooManyPoints,
    #[error("points[{point}] sets {have:?}; every point must set {want:?}")]
    PointKeys {
        point: usize,
        have: Vec<String>,
        want: Vec<String>,
    },
}

/// A point whose overrides do not apply.
#[derive(Debug, thiserror::Error)]
#[error("point {point}: {error}")]
pub struct PointError {
    pub point: usize,
    pub error: ApplyError,
}

/// Rows or overrides that do not apply to an experiment's text.
#[derive(Debug, thiserror::Error)]
pub enum ApplyError {
    #[error("{path}: not TOML: {error}")]
    NotToml {
        path: String,
        error: toml::de::Error,
    },
    #[error("rows: the experiment has no [[row]]")]
    NoRows,
    #[error("rows: the experiment has no row {0:?}")]
    NoRow(String),
    #[error("key \"{key}\": {problem}")]
    Key { key: String, problem: KeyProblem },
    #[error("the experiment does not serialise: {0}")]
    Serialise(toml::ser::Error),
}

/// Why a dotted key cannot be set.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum KeyProblem {
    #[error("an empty path segment")]
    EmptySegment,
    #[error("write row.<name>.<field>")]
    RowPath,
    #[error("write rows.<field>")]
    RowsPath,
    #[error("the experiment has no row {0:?} (after sweep.rows)")]
    NoRow(String),
    #[error("the experiment has no [[row]]")]
    NoRows,
    #[error("not a table")]
    RowNotATable,
    #[error("{0} is not a table")]
    NotATable(String),
    #[error("the experiment has no table {0}")]
    NoTable(String),
}

/// A `KEY=VALUE` override without its `=`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0:?}: expected KEY=VALUE (e.g. workload.qps=3000)")]
pub struct OverrideError(pub String);

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SweepHead {
    /// The experiment file, relative to the sweep file's folder (or, when
    /// not found there, to the current directory).
    experiment: PathBuf,
    /// A subset of the experiment's rows, by name.
    #[serde(default)]
    rows: Option<Vec<String>>,
    /// `flow` (default) or `lines`: the model each point runs on.
    #[serde(default)]
    fidelity: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SweepFile {
    sweep: SweepHead,
    #[serde(default)]
    grid: Option<toml::Table>,
    #[serde(default)]
    points: Option<Vec<toml::Table>>,
}

/// A parsed sweep: the experiment's path and text, the grid keys (file
/// order) and every point's values.
#[derive(Debug)]
pub struct Sweep {
    pub experiment: PathBuf,
    pub text: String,
    pub fidelity: Option<String>,
    rows: Option<Vec<String>>,
    pub keys: Vec<String>,
    pub points: Vec<Vec<toml::Value>>,
    /// The sweep file and experiment it read (each point's run keeps its own).
    pub inputs: InputLog,
}

/// Most points a sweep may have.
pub const MAX_POINTS: usize = 100_000;

/// The grid's keys in the order the file writes them (a TOML table does
/// not keep it: each key is found after the `[grid]` header).
fn file_order(text: &str, keys: &mut [String]) {
    let grid_at = text.find("[grid]").unwrap_or(0);
    let pos = |k: &str| {
        let quoted = [format!("\"{k}\""), format!("'{k}'")];
        quoted
            .iter()
            .filter_map(|q| text[grid_at..].find(q.as_str()))
            .min()
            .unwrap_or(usize::MAX)
    };
    keys.sort_by_key(|k| (pos(k), k.clone()));
}

impl Sweep {
    /// Reads a sweep file and its experiment.
    pub fn load(path: &Path) -> Result<Sweep, SweepError> {
        let text = std::fs::read_to_string(path).map_err(|error| SweepError::Read {
            path: path.display().to_string(),
            error,
        })?;
        let s = Sweep::parse(&text, path)?;
        s.inputs.note_file("sweep", path, text.as_bytes());
        Ok(s)
    }

    /// Parses a sweep file's `text` (read from `path`).
    pub fn parse(text: &str, path: &Path) -> Result<Sweep, SweepError> {
        let origin = path.display().to_string();
        let shape = |problem| SweepError::Shape {
            origin: origin.clone(),
            problem,
        };
        let f: SweepFile = traces::config::parse_toml(text).map_err(|error| SweepError::Toml {
            origin: origin.clone(),
            error,
        })?;
        let near = path
            .parent()
            .unwrap_or(Path::new("."))
            .join(&f.sweep.experiment);
        let experiment = if near.exists() {
            near
        } else {
            f.sweep.experiment.clone()
        };
        let exp_text =
            std::fs::read_to_string(&experiment).map_err(|error| SweepError::ReadExperiment {
                origin: origin.clone(),
                experiment: experiment.display().to_string(),
                error,
            })?;
        let inputs = InputLog::default();
        inputs.note_file("experiment", &experiment, exp_text.as_bytes());
        let (keys, points) = match (&f.grid, &f.points) {
            (Some(_), Some(_)) => return Err(shape(Shape::GridAndPoints)),
            (None, None) => return Err(shape(Shape::Neither)),
            (Some(grid), None) => {
                let mut keys: Vec<String> = grid.keys().cloned().collect();
                file_order(text, &mut keys);
                let mut lists = Vec::new();
                for k in &keys {
                    match &grid[k] {
                        toml::Value::Array(v) if !v.is_empty() => lists.push(v.clone()),
                        toml::Value::Table(_) => return Err(shape(Shape::GridTable(k.clone()))),
                        _ => return Err(shape(Shape::NotAList(k.clone()))),
                    }
                }
                let n = lists
                    .iter()
                    .try_fold(1usize, |n, l| n.checked_mul(l.len()))
                    .filter(|&n| n <= MAX_POINTS)
                    .ok_or_else(|| shape(Shape::GridTooBig))?;
                let points = (0..n)
                    .map(|mut i| {
                        let mut p = vec![toml::Value::Boolean(false); lists.len()];
                        for (j, l) in lists.iter().enumerate().rev() {
                            p[j] = l[i % l.len()].clone();
                            i /= l.len();
                        }
                        p
                    })
                    .collect();
                (keys, points)
            }
            (None, Some(list)) => {
                let Some(first) = list.first() else {
                    return Err(shape(Shape::NoPoints));
                };
                let mut keys: Vec<String> = first.keys().cloned().collect();
                file_order(text, &mut keys);
                if list.len() > MAX_POINTS {
                    return Err(shape(Shape::TooManyPoints));
                }
                let mut points = Vec::new();
                for (i, p) in list.iter().enumerate() {
                    let mut have: Vec<String> = p.keys().cloned().collect();
                    have.sort();
                    let mut want: Vec<String> = keys.clone();
                    want.sort();
                    if have != want {
                        return Err(shape(Shape::PointKeys {
                            point: i,
                            have,
                            want,
                        }));
                    }
                    points.push(keys.iter().map(|k| p[k].clone()).collect());
                }
                (keys, points)
            }
        };
        let s = Sweep {
            experiment,
            text: exp_text,
            fidelity: f.sweep.fidelity,
            rows: f.sweep.rows,
            keys,
            points,
            inputs,
        };
        // Every point must apply cleanly: fail before anything runs.
        for i in 0..s.points.len() {
            s.point_text(i).map_err(|error| SweepError::Point {
                origin: origin.clone(),
                error: Box::new(error),
            })?;
        }
        Ok(s)
    }

    /// The experiment text of point `i`: the rows subset, then the overrides.
    pub fn point_text(&self, i: usize) -> Result<String, PointError> {
        apply(
            &self.text,
            &self.experiment,
            self.rows.as_deref(),
            &self.overrides(i),
        )
        .map_err(|error| PointError { point: i, error })
    }

    /// Point `i`'s overrides: (dotted key, value) in grid order.
    pub fn overrides(&self, i: usize) -> Vec<(String, toml::Value)> {
        self.keys
            .iter()
            .cloned()
            .zip(self.points[i].iter().cloned())
            .collect()
    }

    /// The subset of the experiment's rows the sweep runs (all when `None`).
    pub fn rows(&self) -> Option<&[String]> {
        self.rows.as_deref()
    }

    /// Point `i`'s values as CSV cells (strings bare, the rest as TOML).
    pub fn cells(&self, i: usize) -> Vec<String> {
        self.points[i]
            .iter()
            .map(|v| match v {
                toml::Value::String(s) => s.clone(),
                other => other.to_string(),
            })
            .collect()
    }
}

/// An experiment's `text` (read from `path`) with only the rows `keep`
/// (all when `None`), then each dotted override set: what a sweep point
/// runs, and what `compare --rows --set` runs.
pub fn apply(
    text: &str,
    path: &Path,
    keep: Option<&[String]>,
    overrides: &[(String, toml::Value)],
) -> Result<String, ApplyError> {
    let mut t: toml::Table = toml::from_str(text).map_err(|error| ApplyError::NotToml {
        path: path.display().to_string(),
        error,
    })?;
    if let Some(keep) = keep {
        let Some(toml::Value::Array(rows)) = t.get_mut("row") else {
            return Err(ApplyError::NoRows);
        };
        for name in keep {
            if !rows.iter().any(|r| row_name(r) == Some(name)) {
                return Err(ApplyError::NoRow(name.clone()));
            }
        }
        rows.retain(|r| row_name(r).is_some_and(|n| keep.iter().any(|k| k == n)));
    }
    for (k, v) in overrides {
        set(&mut t, k, v.clone()).map_err(|problem| ApplyError::Key {
            key: k.clone(),
            problem,
        })?;
    }
    toml::to_string(&t).map_err(ApplyError::Serialise)
}

/// `KEY=VALUE` as a dotted key and a TOML value (`3000.0`, `"xeon-2s"`,
/// `[1, 2]`); a value that is not TOML is taken as a bare string.
pub fn parse_override(s: &str) -> Result<(String, toml::Value), OverrideError> {
    let (k, v) = s
        .split_once('=')
        .ok_or_else(|| OverrideError(s.to_string()))?;
    let value = toml::from_str::<toml::Table>(&format!("v = {v}"))
        .ok()
        .and_then(|mut t| t.remove("v"))
        .unwrap_or_else(|| toml::Value::String(v.to_string()));
    Ok((k.trim().to_string(), value))
}

fn row_name(r: &toml::Value) -> Option<&String> {
    match r.get("name") {
        Some(toml::Value::String(s)) => Some(s),
        _ => None,
    }
}

/// Sets dotted `path` in `t` to `v`.
fn set(t: &mut toml::Table, path: &str, v: toml::Value) -> Result<(), KeyProblem> {
    let parts: Vec<&str> = path.split('.').collect();
    if parts.iter().any(|p| p.is_empty()) {
        return Err(KeyProblem::EmptySegment);
    }
    match parts[0] {
        "row" => {
            let (Some(name), true) = (parts.get(1), parts.len() >= 3) else {
                return Err(KeyProblem::RowPath);
            };
            let rows = rows_mut(t)?;
            let Some(r) = rows
                .iter_mut()
                .find(|r| row_name(r).is_some_and(|n| n == name))
            else {
                return Err(KeyProblem::NoRow(name.to_string()));
            };
            set_in(table_mut(r)?, &parts[2..], v)
        }
        "rows" => {
            if parts.len() < 2 {
                return Err(KeyProblem::RowsPath);
            }
            for r in rows_mut(t)? {
                set_in(table_mut(r)?, &parts[1..], v.clone())?;
            }
            Ok(())
        }
        _ => set_in(t, &parts, v),
    }
}

fn rows_mut(t: &mut toml::Table) -> Result<&mut Vec<toml::Value>, KeyProblem> {
    match t.get_mut("row") {
        Some(toml::Value::Array(rows)) => Ok(rows),
        _ => Err(KeyProblem::NoRows),
    }
}

fn table_mut(v: &mut toml::Value) -> Result<&mut toml::Table, KeyProblem> {
    v.as_table_mut().ok_or(KeyProblem::RowNotATable)
}

fn set_in(t: &mut toml::Table, parts: &[&str], v: toml::Value) -> Result<(), KeyProblem> {
    let (last, inner) = parts.split_last().expect("non-empty");
    let mut at = t;
    for (depth, p) in inner.iter().enumerate() {
        at = match at.get_mut(*p) {
            Some(toml::Value::Table(x)) => x,
            Some(_) => return Err(KeyProblem::NotATable(inner[..=depth].join("."))),
            None => return Err(KeyProblem::NoTable(inner[..=depth].join("."))),
        };
    }
    at.insert((*last).to_string(), v);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const EXP: &str = "[experiment]\nname = \"e\"\nseeds = [1]\n\n[workload]\nqps = 10.0\nshards = { count = 8 }\n\n[[row]]\nname = \"a\"\nscheduler = \"static\"\n\n[[row]]\nname = \"b\"\nscheduler = \"least-loaded\"\n";

    fn sweep(body: &str) -> Result<Sweep, SweepError> {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("e.toml"), EXP).unwrap();
        let p = dir.path().join("s.toml");
        Sweep::parse(&format!("[sweep]\nexperiment = \"e.toml\"\n{body}"), &p)
    }

    #[test]
    fn the_grid_is_a_product_in_file_order_last_key_fastest() {
        let s = sweep(
            "[grid]\n\"workload.qps\" = [1.0, 2.0]\n\"experiment.seeds\" = [[1], [2], [3]]\n",
        )
        .unwrap();
        assert_eq!(s.keys, ["workload.qps", "experiment.seeds"]);
        assert_eq!(s.points.len(), 6);
        assert_eq!(s.cells(0), ["1.0", "[1]"]);
        assert_eq!(s.cells(1), ["1.0", "[2]"]);
        assert_eq!(s.cells(5), ["2.0", "[3]"]);
        let t: toml::Table = toml::from_str(&s.point_text(4).unwrap()).unwrap();
        assert_eq!(t["workload"]["qps"].as_float(), Some(2.0));
        assert_eq!(
            t["workload"]["shards"]["count"].as_integer(),
            Some(8),
            "the rest kept"
        );
        assert_eq!(
            t["experiment"]["seeds"].as_array().unwrap()[0].as_integer(),
            Some(2)
        );
    }

    #[test]
    fn rows_are_chosen_and_set_by_name_or_all_at_once() {
        let s = sweep("rows = [\"b\"]\n[grid]\n\"row.b.scheduler\" = [\"locality\"]\n\"rows.placement\" = [\"bind:1\"]\n").unwrap();
        let t: toml::Table = toml::from_str(&s.point_text(0).unwrap()).unwrap();
        let rows = t["row"].as_array().unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0]["scheduler"].as_str(), Some("locality"));
        assert_eq!(rows[0]["placement"].as_str(), Some("bind:1"));
    }

    #[test]
    fn explicit_points_and_bad_sweeps_are_one_message_each() {
        let s = sweep("[[points]]\n\"workload.qps\" = 5.0\n[[points]]\n\"workload.qps\" = 7.0\n")
            .unwrap();
        assert_eq!(s.points.len(), 2);
        assert_eq!(s.cells(1), ["7.0"]);
        for (body, want) in [
            (
                "[grid]\n\"workload.nothing.x\" = [1]\n",
                "no table workload.nothing",
            ),
            (
                "[grid]\n\"row.zz.scheduler\" = [\"static\"]\n",
                "no row \"zz\"",
            ),
            (
                "rows = [\"q\"]\n[grid]\n\"workload.qps\" = [1.0]\n",
                "no row \"q\"",
            ),
            ("[grid]\n\"workload.qps\" = []\n", "non-empty list"),
            (
                "[grid]\nworkload.qps = [1.0]\n",
                "write dotted paths quoted",
            ),
            ("", "needs a [grid]"),
            ("[grid]\n\"a\" = [1]\n[[points]]\n\"a\" = 1\n", "not both"),
        ] {
            let e = sweep(body).unwrap_err().to_string();
            assert!(e.contains(want), "{body:?}: {e}");
        }
    }
}
