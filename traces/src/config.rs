//! Reading the TOML files numasim is configured with (experiments,
//! workloads, machines). TOML allows `nan` and `inf`, and no field of
//! numasim means either, so every float of a file is checked before the
//! file is deserialized: one place, for every file kind.

use serde::de::DeserializeOwned;

/// A configuration file that cannot be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ConfigError {
    /// Not TOML, or not of the expected shape (the parser's error, shown on
    /// one line).
    #[error("{}", one_line(.0))]
    Toml(Box<toml::de::Error>),
    /// A float that is NaN or infinite.
    #[error("{field} = {value}: a number here must be finite")]
    NonFinite { field: String, value: f64 },
}

/// A parser error on one line (its message spans several, with the line
/// it points at).
pub fn one_line(e: &toml::de::Error) -> String {
    e.to_string().trim().replace('\n', " ")
}

/// Parses `text` as TOML into `T`, refusing non-finite floats anywhere.
pub fn parse_toml<T: DeserializeOwned>(text: &str) -> Result<T, ConfigError> {
    let toml = |e: toml::de::Error| ConfigError::Toml(Box::new(e));
    let table: toml::Table = toml::from_str(text).map_err(toml)?;
    check_finite(&table, "")?;
    // From the text again, not the table: shape errors keep their line and column.
    toml::from_str(text).map_err(toml)
}

/// The first non-finite float under `table`, by its dotted path.
fn check_finite(table: &toml::Table, prefix: &str) -> Result<(), ConfigError> {
    for (k, v) in table {
        let path = if prefix.is_empty() {
            k.clone()
        } else {
            format!("{prefix}.{k}")
        };
        check_value(v, &path)?;
    }
    Ok(())
}

fn check_value(v: &toml::Value, path: &str) -> Result<(), ConfigError> {
    match v {
        toml::Value::Float(x) if !x.is_finite() => Err(ConfigError::NonFinite {
            field: path.to_string(),
            value: *x,
        }),
        toml::Value::Table(t) => check_finite(t, path),
        toml::Value::Array(a) => a
            .iter()
            .enumerate()
            .try_for_each(|(i, x)| check_value(x, &format!("{path}[{i}]"))),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize, Debug)]
    #[allow(dead_code)]
    struct T {
        a: f64,
        b: Vec<S>,
    }
    #[derive(serde::Deserialize, Debug)]
    #[allow(dead_code)]
    struct S {
        x: f64,
    }

    #[test]
    fn non_finite_floats_are_refused_with_their_path() {
        assert!(parse_toml::<T>("a = 1.5\nb = [{ x = 2.0 }]").is_ok());
        let err = |text: &str| parse_toml::<T>(text).unwrap_err().to_string();
        assert_eq!(
            err("a = nan\nb = []"),
            "a = NaN: a number here must be finite"
        );
        assert_eq!(
            err("a = 1.0\nb = [{ x = 1.0 }, { x = -inf }]"),
            "b[1].x = -inf: a number here must be finite"
        );
        // Also where the field is unknown to the type: the file is wrong either way.
        assert!(err("a = 1.0\nb = []\n[extra]\ny = inf").contains("extra.y = inf"));
        assert!(
            err("a = ").starts_with("TOML parse error"),
            "{}",
            err("a = ")
        );
    }
}
