//! CSV output through `csv` + serde: row structs serialize their fields,
//! and numbers that a table rounds go through the fixed-decimal
//! serializers here (`#[serde(serialize_with = "table::f3")]`), so a
//! table's bytes do not depend on float printing.

use serde::{Serialize, Serializer};

/// A table that could not be written.
#[derive(Debug, thiserror::Error)]
#[error("csv: {0}")]
pub struct TableError(#[from] csv::Error);

/// Rows as CSV, the header from the row struct's field names (also when
/// there are no rows: then from `T::default()`).
pub fn to_csv<T: Serialize + Default>(rows: &[T]) -> Result<String, TableError> {
    let mut w = csv::Writer::from_writer(Vec::new());
    if rows.is_empty() {
        w.serialize(T::default())?;
        let bytes = w
            .into_inner()
            .map_err(|e| TableError(e.into_error().into()))?;
        let text = String::from_utf8_lossy(&bytes);
        return Ok(text
            .lines()
            .next()
            .map_or(String::new(), |h| format!("{h}\n")));
    }
    for r in rows {
        w.serialize(r)?;
    }
    into_string(w)
}

/// A header and rows of fields already formatted (tables whose columns
/// depend on the machine).
pub fn records_to_csv(header: &[String], rows: &[Vec<String>]) -> Result<String, TableError> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(header)?;
    for r in rows {
        w.write_record(r)?;
    }
    into_string(w)
}

fn into_string(w: csv::Writer<Vec<u8>>) -> Result<String, TableError> {
    let bytes = w
        .into_inner()
        .map_err(|e| TableError(e.into_error().into()))?;
    Ok(String::from_utf8(bytes).expect("csv of UTF-8 fields is UTF-8"))
}

macro_rules! fixed {
    ($($name:ident $opt:ident $n:literal),+) => {$(
        #[doc = concat!("`f64` with ", $n, " decimals.")]
        pub fn $name<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
            s.collect_str(&format_args!("{v:.*}", $n))
        }
        #[doc = concat!("`Option<f64>` with ", $n, " decimals; empty when `None`.")]
        pub fn $opt<S: Serializer>(v: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
            match v {
                Some(v) => s.collect_str(&format_args!("{v:.*}", $n)),
                None => s.serialize_str(""),
            }
        }
    )+};
}
fixed!(f2 opt_f2 2, f3 opt_f3 3, f4 opt_f4 4, f5 opt_f5 5, f6 opt_f6 6);

/// `bool` as `1` / `0`.
pub fn bit<S: Serializer>(v: &bool, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u8(*v as u8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize, Default)]
    struct R {
        name: String,
        #[serde(serialize_with = "f3")]
        x: f64,
        #[serde(serialize_with = "opt_f2")]
        y: Option<f64>,
        #[serde(serialize_with = "bit")]
        b: bool,
    }

    #[test]
    fn fixed_decimals_empty_options_and_headers_without_rows() {
        let rows = [
            R {
                name: "a,b".into(),
                x: 1.0,
                y: None,
                b: true,
            },
            R {
                name: "c".into(),
                x: 2.0 / 3.0,
                y: Some(0.125),
                b: false,
            },
        ];
        assert_eq!(
            to_csv(&rows).unwrap(),
            "name,x,y,b\n\"a,b\",1.000,,1\nc,0.667,0.12,0\n"
        );
        assert_eq!(to_csv::<R>(&[]).unwrap(), "name,x,y,b\n");
    }
}
