//! `report.html`: one self-contained page for a result folder — its
//! tables, its plots inline (the SVGs the run wrote, plus the sweep's
//! metric against the swept parameter and a replay's per-window series),
//! and the manifest. No scripts, no external URLs: it opens offline, from
//! a mail attachment or a CI artifact. Deterministic, like every output.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::plots::PlotError;

/// What can stop a report.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("{0}: not a result folder")]
    NotAFolder(String),
    #[error("{path}: cannot read: {error}")]
    Read { path: String, error: std::io::Error },
    #[error("{path}: {error}")]
    Csv { path: String, error: csv::Error },
    #[error("{path}: {error}")]
    Json {
        path: String,
        error: serde_json::Error,
    },
    #[error(transparent)]
    Plot(#[from] PlotError),
}

type Result<T> = std::result::Result<T, ReportError>;

fn read_err(p: &Path) -> impl FnOnce(std::io::Error) -> ReportError + '_ {
    move |error| ReportError::Read {
        path: p.display().to_string(),
        error,
    }
}

fn csv_err(p: &Path) -> impl FnOnce(csv::Error) -> ReportError + '_ {
    move |error| ReportError::Csv {
        path: p.display().to_string(),
        error,
    }
}

/// Most lines of a CSV shown as a table (the rest are counted).
const MAX_ROWS: usize = 300;

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// (header, the first `cap` rows, the row count) of a CSV file.
fn read_csv_capped(path: &Path, cap: usize) -> Result<(Vec<String>, Vec<Vec<String>>, usize)> {
    let mut r = csv::Reader::from_path(path).map_err(csv_err(path))?;
    let header = r
        .headers()
        .map_err(csv_err(path))?
        .iter()
        .map(String::from)
        .collect();
    let mut rows = Vec::new();
    let mut n = 0;
    for rec in r.records() {
        let rec = rec.map_err(csv_err(path))?;
        if n < cap {
            rows.push(rec.iter().map(String::from).collect());
        }
        n += 1;
    }
    Ok((header, rows, n))
}

/// (header, rows) of a CSV file the report plots (ours, bounded).
fn read_csv(path: &Path) -> Result<(Vec<String>, Vec<Vec<String>>)> {
    let (h, r, _) = read_csv_capped(path, usize::MAX)?;
    Ok((h, r))
}

fn table(html: &mut String, title: &str, header: &[String], rows: &[Vec<String>], total: usize) {
    let _ = writeln!(
        html,
        "<h2>{}</h2>\n<div class=\"scroll\"><table>\n<tr>",
        esc(title)
    );
    for h in header {
        let _ = write!(html, "<th>{}</th>", esc(h));
    }
    html.push_str("</tr>\n");
    for r in rows {
        html.push_str("<tr>");
        for c in r {
            let num = c.parse::<f64>().is_ok();
            let _ = write!(
                html,
                "<td{}>{}</td>",
                if num { " class=\"n\"" } else { "" },
                esc(c)
            );
        }
        html.push_str("</tr>\n");
    }
    html.push_str("</table></div>\n");
    if total > rows.len() {
        let _ = writeln!(
            html,
            "<p class=\"note\">first {} of {total} lines</p>",
            rows.len()
        );
    }
}

fn figure(html: &mut String, caption: &str, svg: &str) {
    // An inline SVG document: drop its XML prolog, if any.
    let body = svg.find("<svg").map_or(svg, |i| &svg[i..]);
    let _ = writeln!(
        html,
        "<figure>{body}<figcaption>{}</figcaption></figure>",
        esc(caption)
    );
}

/// The sweep's TP99 against its first numeric grid key, one line per row
/// (and per value of the other keys).
fn sweep_plot(dir: &Path) -> Result<Option<String>> {
    let p = dir.join("sweep-points.json");
    let rec: serde_json::Value = match std::fs::read_to_string(&p) {
        Ok(t) => serde_json::from_str(&t).map_err(|error| ReportError::Json {
            path: p.display().to_string(),
            error,
        })?,
        Err(_) => return Ok(None),
    };
    let keys: Vec<String> = rec["keys"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|k| k.as_str().map(String::from))
        .collect();
    let (header, rows) = read_csv(&dir.join("sweep.csv"))?;
    let col = |name: &str| header.iter().position(|h| h == name);
    let Some(metric) = ["tp99_ms", "tp99_us"]
        .iter()
        .find_map(|m| col(m).map(|c| (c, *m)))
    else {
        return Ok(None);
    };
    let Some(row_col) = col("row") else {
        return Ok(None);
    };
    let xk = (0..keys.len()).find(|&k| rows.iter().all(|r| r[k].parse::<f64>().is_ok()));
    let mut series: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
    for (i, r) in rows.iter().enumerate() {
        let others: Vec<String> = (0..keys.len())
            .filter(|&k| Some(k) != xk)
            .map(|k| format!("{}={}", keys[k], r[k]))
            .collect();
        let name = std::iter::once(r[row_col].clone())
            .chain(others)
            .collect::<Vec<_>>()
            .join(" ");
        let x = xk.map_or(i as f64, |k| r[k].parse().unwrap_or(0.0));
        let y: f64 = r[metric.0].parse().unwrap_or(0.0);
        match series.iter_mut().find(|s| s.0 == name) {
            Some(s) => s.1.push((x, y)),
            None => series.push((name, vec![(x, y)])),
        }
    }
    let x_desc = xk.map_or("point".to_string(), |k| keys[k].clone());
    let svg = crate::plots::lines_svg(
        &format!("{} vs {x_desc}", metric.1),
        &x_desc,
        metric.1,
        &series,
    )?;
    Ok(Some(svg))
}

/// A replay's per-window mean latency and memory reads.
fn timeseries_plot(dir: &Path) -> Result<Option<String>> {
    let p = dir.join("timeseries.csv");
    if !p.exists() {
        return Ok(None);
    }
    let (header, rows) = read_csv(&p)?;
    let col = |name: &str| header.iter().position(|h| h == name);
    let (Some(t), Some(lat)) = (col("window_start_ns"), col("mean_latency_ns")) else {
        return Ok(None);
    };
    let pts: Vec<(f64, f64)> = rows
        .iter()
        .filter_map(|r| Some((r[t].parse::<f64>().ok()? / 1e3, r[lat].parse::<f64>().ok()?)))
        .collect();
    let svg = crate::plots::lines_svg(
        "mean access latency per window",
        "simulated time (µs)",
        "mean latency (ns)",
        &[("mean latency".to_string(), pts)],
    )?;
    Ok(Some(svg))
}

/// `report.html` of what the result folder `dir` holds (the caller writes it).
pub fn render(dir: &Path) -> Result<String> {
    if !dir.is_dir() {
        return Err(ReportError::NotAFolder(dir.display().to_string()));
    }
    let manifest = std::fs::read_to_string(dir.join("manifest.json")).ok();
    let command = manifest
        .as_deref()
        .and_then(|m| serde_json::from_str::<serde_json::Value>(m).ok())
        .and_then(|m| {
            let a: Vec<String> = m["arguments"]
                .as_array()?
                .iter()
                .filter_map(|x| x.as_str().map(String::from))
                .collect();
            Some(format!("numasim {}", a.join(" ")))
        })
        .unwrap_or_else(|| dir.display().to_string());
    let mut html = String::new();
    let _ = write!(
        html,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>numasim report: {t}</title>\n<style>\
         body{{font-family:sans-serif;margin:1.5em;max-width:1400px}}\
         table{{border-collapse:collapse;font-size:13px}}\
         th,td{{border:1px solid #ccc;padding:2px 6px}}th{{background:#eee;position:sticky;top:0}}\
         td.n{{text-align:right;font-variant-numeric:tabular-nums}}\
         .scroll{{overflow-x:auto}}figure{{margin:1em 0}}figcaption{{color:#555}}\
         pre{{background:#f6f6f6;padding:8px;overflow-x:auto}}.note{{color:#777}}\
         </style></head><body>\n<h1>numasim report</h1>\n<p><code>{t}</code></p>\n",
        t = esc(&command)
    );
    let tables = |html: &mut String, files: &[(&str, &str)]| -> Result<()> {
        for (file, title) in files {
            let p = dir.join(file);
            if p.exists() {
                let (h, r, n) = read_csv_capped(&p, MAX_ROWS)?;
                table(html, title, &h, &r, n);
            }
        }
        Ok(())
    };
    // The run's table, its plots, then the longer per-window and per-task tables.
    tables(
        &mut html,
        &[
            ("compare.csv", "Comparison (compare.csv)"),
            ("sweep.csv", "Sweep (sweep.csv)"),
            ("validate.csv", "Simulated vs live (validate.csv)"),
        ],
    )?;
    let mut plots = Vec::new();
    if let Some(svg) = sweep_plot(dir)? {
        plots.push(("TP99 against the swept parameter, per row".to_string(), svg));
    }
    if let Some(svg) = timeseries_plot(dir)? {
        plots.push(("per-window time series (timeseries.csv)".to_string(), svg));
    }
    let mut svgs: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(read_err(dir))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "svg"))
        .collect();
    svgs.sort();
    for p in svgs {
        let svg = std::fs::read_to_string(&p).map_err(read_err(&p))?;
        plots.push((
            p.file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned(),
            svg,
        ));
    }
    if !plots.is_empty() {
        html.push_str("<h2>Plots</h2>\n");
        for (caption, svg) in &plots {
            figure(&mut html, caption, svg);
        }
    }
    tables(
        &mut html,
        &[
            ("monitor.csv", "Monitoring windows (monitor.csv)"),
            ("tasks.csv", "Tasks (tasks.csv)"),
            ("requests.csv", "Requests (requests.csv)"),
            ("timeseries.csv", "Time series (timeseries.csv)"),
        ],
    )?;
    if let Ok(s) = std::fs::read_to_string(dir.join("summary.json")) {
        let _ = writeln!(
            html,
            "<h2>Summary (summary.json)</h2>\n<pre>{}</pre>",
            esc(&s)
        );
    }
    if let Some(m) = &manifest {
        let _ = writeln!(
            html,
            "<h2>Manifest (manifest.json)</h2>\n<pre>{}</pre>",
            esc(m)
        );
    }
    html.push_str("</body></html>\n");
    Ok(html)
}
