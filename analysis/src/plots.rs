//! SVG plots of comparison results (plotters, SVG backend; no fonts or
//! system libraries needed): latency histograms overlaid and CDFs.

use plotters::prelude::*;

const COLORS: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
];

/// A plot that could not be drawn: the drawing backend's error, kept
/// whole (said after "plot: ", not repeated as a cause).
#[derive(Debug, thiserror::Error)]
#[error("plot: {0}")]
pub struct PlotError(Box<dyn std::error::Error + Send + Sync>);

fn err(e: impl std::error::Error + Send + Sync + 'static) -> PlotError {
    PlotError(Box::new(e))
}

/// A legend entry: a short line in the series' colour.
fn legend_mark(c: RGBColor) -> impl Fn((i32, i32)) -> PathElement<(i32, i32)> {
    move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(2))
}

/// The series legend, boxed, at `pos`.
fn draw_legend<'a, DB: DrawingBackend + 'a, CT: CoordTranslate>(
    chart: &mut ChartContext<'a, DB, CT>,
    pos: SeriesLabelPosition,
) -> Result<(), PlotError>
where
    DB::ErrorType: 'static,
{
    chart
        .configure_series_labels()
        .position(pos)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(err)
}

/// The x range (in units of 10⁶ ticks: ms of ns, µs of ps) covering every
/// series' latencies, with margins.
fn latency_range(series: &[(String, Vec<u64>)]) -> (f64, f64) {
    let all = || series.iter().flat_map(|(_, v)| v.iter().copied());
    let max = all().max().unwrap_or(1).max(1) as f64 / 1e6;
    let min = all().min().unwrap_or(1).max(1) as f64 / 1e6;
    ((min * 0.9).max(1e-3), max * 1.1)
}

/// Overlaid latency histograms (log-spaced bins on a log axis, in `unit`:
/// 10⁶ of the latencies' ticks), one line per series, as an SVG document.
pub fn histogram_svg(
    title: &str,
    unit: &str,
    series: &[(String, Vec<u64>)],
) -> Result<String, PlotError> {
    let (lo, hi) = latency_range(series);
    let bins = 60usize;
    let edge = |i: usize| lo * (hi / lo).powf(i as f64 / bins as f64);
    let mut hist = Vec::new();
    let mut ymax = 0.0f64;
    for (_, v) in series {
        let mut h = vec![0.0f64; bins];
        for &x in v {
            let ms = x as f64 / 1e6;
            let i = (((ms / lo).ln() / (hi / lo).ln()) * bins as f64)
                .floor()
                .clamp(0.0, bins as f64 - 1.0) as usize;
            h[i] += 1.0;
        }
        let n = v.len().max(1) as f64;
        for c in &mut h {
            *c /= n;
            ymax = ymax.max(*c);
        }
        hist.push(h);
    }
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (900, 500)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 20))
            .margin(15)
            .x_label_area_size(40)
            .y_label_area_size(60)
            .build_cartesian_2d((lo..hi).log_scale(), 0.0..ymax * 1.05)
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc(format!("latency ({unit}, log scale)"))
            .y_desc("share of requests")
            .draw()
            .map_err(err)?;
        for (k, ((name, _), h)) in series.iter().zip(&hist).enumerate() {
            let c = COLORS[k % COLORS.len()];
            let pts: Vec<(f64, f64)> = (0..bins)
                .map(|i| ((edge(i) * edge(i + 1)).sqrt(), h[i]))
                .collect();
            chart
                .draw_series(LineSeries::new(pts, c.stroke_width(2)))
                .map_err(err)?
                .label(name.clone())
                .legend(legend_mark(c));
        }
        draw_legend(&mut chart, SeriesLabelPosition::MiddleRight)?;
        root.present().map_err(err)?;
    }
    Ok(out)
}

/// Latency CDFs (log axis, in `unit`: 10⁶ of the latencies' ticks), one
/// line per series, as an SVG document.
pub fn cdf_svg(
    title: &str,
    unit: &str,
    series: &[(String, Vec<u64>)],
) -> Result<String, PlotError> {
    let (lo, hi) = latency_range(series);
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (900, 500)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 20))
            .margin(15)
            .x_label_area_size(40)
            .y_label_area_size(60)
            .build_cartesian_2d((lo..hi).log_scale(), 0.0..1.0)
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc(format!("latency ({unit}, log scale)"))
            .y_desc("fraction of requests ≤ latency")
            .draw()
            .map_err(err)?;
        for (k, (name, v)) in series.iter().enumerate() {
            let c = COLORS[k % COLORS.len()];
            let mut s = v.clone();
            s.sort_unstable();
            let n = s.len().max(1);
            // 400 points along the distribution keep the SVG small.
            let step = (n / 400).max(1);
            let pts: Vec<(f64, f64)> = (0..n)
                .step_by(step)
                .chain(std::iter::once(n - 1))
                .map(|i| ((s[i] as f64 / 1e6).max(lo), (i + 1) as f64 / n as f64))
                .collect();
            chart
                .draw_series(LineSeries::new(pts, c.stroke_width(2)))
                .map_err(err)?
                .label(name.clone())
                .legend(legend_mark(c));
        }
        draw_legend(&mut chart, SeriesLabelPosition::LowerRight)?;
        root.present().map_err(err)?;
    }
    Ok(out)
}

/// Mean latency vs working-set size, simulated beside live, as an SVG:
/// `points` are (working-set bytes, simulated ns, live ns).
pub fn pairs_svg(title: &str, points: &[(u64, f64, f64)]) -> Result<String, PlotError> {
    let mut pts = points.to_vec();
    pts.sort_by_key(|p| p.0);
    let xmin = pts.first().map_or(1.0, |p| p.0 as f64).max(1.0) / 1.5;
    let xmax = pts.last().map_or(2.0, |p| p.0 as f64).max(2.0) * 1.5;
    let ymax = pts.iter().map(|p| p.1.max(p.2)).fold(1.0f64, f64::max) * 1.2;
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (900, 500)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 20))
            .margin(15)
            .x_label_area_size(40)
            .y_label_area_size(60)
            .build_cartesian_2d((xmin..xmax).log_scale(), 0.0..ymax)
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc("working set (bytes, log scale)")
            .y_desc("mean latency (ns)")
            .draw()
            .map_err(err)?;
        for (k, (name, sel)) in [("simulated", 0usize), ("live", 1)].into_iter().enumerate() {
            let c = COLORS[k];
            let series: Vec<(f64, f64)> = pts
                .iter()
                .map(|p| (p.0 as f64, if sel == 0 { p.1 } else { p.2 }))
                .collect();
            chart
                .draw_series(LineSeries::new(series.clone(), c.stroke_width(2)))
                .map_err(err)?
                .label(name)
                .legend(legend_mark(c));
            chart
                .draw_series(series.into_iter().map(|p| Circle::new(p, 4, c.filled())))
                .map_err(err)?;
        }
        draw_legend(&mut chart, SeriesLabelPosition::MiddleRight)?;
        root.present().map_err(err)?;
    }
    Ok(out)
}

/// The monitoring chart: four panels over simulated time sharing the x
/// axis — prediction accuracy and hit rates (%), TP99 (ms), memory bandwidth
/// (GB/s) — one colour per row; hit rates dashed (preload) and dotted
/// (feature cache). Rows without predictions have no accuracy line.
pub fn monitor_svg(
    title: &str,
    rows: &[(String, Vec<crate::monitor::MonitorPoint>)],
) -> Result<String, PlotError> {
    use crate::monitor::MonitorPoint;
    type Pick = fn(&MonitorPoint) -> Option<f64>;
    let xmax = rows.iter().map(|(_, p)| p.len()).max().unwrap_or(1).max(1) as f64;
    let panels: [(&str, Vec<(Pick, u8)>); 4] = [
        (
            "prediction accuracy (%)",
            vec![(|p| p.prediction_accuracy.map(|x| 100.0 * x), 0)],
        ),
        (
            "hit rate (%): preload dashed, feature cache dotted",
            vec![
                (|p| p.preload_hit_rate.map(|x| 100.0 * x), 1),
                (|p| p.feature_hit_rate.map(|x| 100.0 * x), 2),
            ],
        ),
        (
            "TP99 (ms)",
            vec![(|p| (p.requests > 0).then_some(p.tp99_ms), 0)],
        ),
        (
            "memory bandwidth (GB/s)",
            vec![(|p| Some(p.memory_gbps), 0)],
        ),
    ];
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (900, 1000)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let root = root.titled(title, ("sans-serif", 20)).map_err(err)?;
        let areas = root.split_evenly((4, 1));
        for (area, (desc, picks)) in areas.iter().zip(&panels) {
            let ymax = rows
                .iter()
                .flat_map(|(_, pts)| {
                    pts.iter()
                        .flat_map(|p| picks.iter().filter_map(move |(f, _)| f(p)))
                })
                .fold(0.0f64, f64::max);
            let ymax = if ymax > 0.0 { ymax * 1.1 } else { 1.0 };
            let mut chart = ChartBuilder::on(area)
                .margin(10)
                .x_label_area_size(30)
                .y_label_area_size(60)
                .build_cartesian_2d(0.0..xmax, 0.0..ymax)
                .map_err(err)?;
            chart
                .configure_mesh()
                .x_desc("simulated time (s)")
                .y_desc(*desc)
                .draw()
                .map_err(err)?;
            let mut labelled = false;
            for (k, (name, pts)) in rows.iter().enumerate() {
                let c = COLORS[k % COLORS.len()];
                let mut row_labelled = false;
                for &(f, dash) in picks {
                    let line: Vec<(f64, f64)> = pts
                        .iter()
                        .filter_map(|p| f(p).map(|y| (p.second as f64 + 0.5, y)))
                        .collect();
                    if line.is_empty() {
                        continue;
                    }
                    let style = c.stroke_width(2);
                    let drawn = match dash {
                        0 => chart.draw_series(LineSeries::new(line, style)),
                        1 => chart.draw_series(DashedLineSeries::new(line, 8, 5, style)),
                        _ => chart.draw_series(DashedLineSeries::new(line, 2, 4, style)),
                    }
                    .map_err(err)?;
                    // One legend entry per row: its first line in the panel.
                    if !row_labelled {
                        row_labelled = true;
                        labelled = true;
                        drawn.label(name.clone()).legend(legend_mark(c));
                    }
                }
            }
            if labelled {
                draw_legend(&mut chart, SeriesLabelPosition::MiddleRight)?;
            }
        }
        root.present().map_err(err)?;
    }
    Ok(out)
}

/// Lines of (x, y) points, one per series, as an SVG document: the sweep
/// report's metric against a swept parameter.
pub fn lines_svg(
    title: &str,
    x_desc: &str,
    y_desc: &str,
    series: &[(String, Vec<(f64, f64)>)],
) -> Result<String, PlotError> {
    let all = || series.iter().flat_map(|(_, v)| v.iter().copied());
    let (mut xmin, mut xmax) =
        all().fold((f64::MAX, f64::MIN), |(a, b), p| (a.min(p.0), b.max(p.0)));
    if xmin.partial_cmp(&xmax) != Some(std::cmp::Ordering::Less) {
        (xmin, xmax) = (xmin.min(0.0) - 1.0, xmax.max(0.0) + 1.0);
    }
    let pad = (xmax - xmin) * 0.05;
    let ymax = all().map(|p| p.1).fold(0.0f64, f64::max).max(1e-9) * 1.15;
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (900, 500)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 20))
            .margin(15)
            .x_label_area_size(40)
            .y_label_area_size(60)
            .build_cartesian_2d((xmin - pad)..(xmax + pad), 0.0..ymax)
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc(x_desc)
            .y_desc(y_desc)
            .draw()
            .map_err(err)?;
        for (k, (name, pts)) in series.iter().enumerate() {
            let c = COLORS[k % COLORS.len()];
            let mut pts = pts.clone();
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            chart
                .draw_series(LineSeries::new(pts.clone(), c.stroke_width(2)))
                .map_err(err)?
                .label(name.as_str())
                .legend(legend_mark(c));
            chart
                .draw_series(pts.into_iter().map(|p| Circle::new(p, 4, c.filled())))
                .map_err(err)?;
        }
        draw_legend(&mut chart, SeriesLabelPosition::UpperLeft)?;
        root.present().map_err(err)?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn svgs_are_documents_with_one_line_per_series() {
        let a: Vec<u64> = (1..2000).map(|i| i * 50_000).collect();
        let b: Vec<u64> = a.iter().map(|x| x * 2).collect();
        let series = vec![("a".to_string(), a), ("b".to_string(), b)];
        for svg in [
            histogram_svg("h", "ms", &series).unwrap(),
            cdf_svg("c", "ms", &series).unwrap(),
        ] {
            assert!(svg.starts_with("<svg"), "{}", &svg[..40]);
            assert!(svg.trim_end().ends_with("</svg>"));
            // Each series is a polyline in its own colour (plus its legend mark).
            for color in ["#1F77B4", "#FF7F0E"] {
                let lines = svg
                    .lines()
                    .filter(|l| l.contains("<polyline") && l.contains(color))
                    .count();
                assert_eq!(lines, 2, "{color}: series and legend");
            }
        }
    }

    #[test]
    fn monitor_chart_has_four_panels_and_skips_missing_accuracy() {
        use crate::monitor::MonitorPoint;
        let pt = |s: u64, acc: Option<f64>| MonitorPoint {
            second: s,
            requests: 10,
            tp50_ms: 1.0,
            tp99_ms: 2.0 + s as f64,
            prediction_accuracy: acc,
            preload_hit_rate: acc,
            feature_hit_rate: Some(0.5),
            memory_gbps: 3.0,
            far_gbps: 0.0,
        };
        let rows = vec![
            (
                "learned".to_string(),
                (0..5).map(|s| pt(s, Some(0.8))).collect(),
            ),
            ("static".to_string(), (0..5).map(|s| pt(s, None)).collect()),
        ];
        let svg = monitor_svg("m", &rows).unwrap();
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        for desc in [
            "prediction accuracy (%)",
            "TP99 (ms)",
            "memory bandwidth (GB/s)",
        ] {
            assert!(svg.contains(desc), "{desc}");
        }
        // Solid lines (accuracy, TP99, bandwidth) plus legend marks: the
        // learned row has one more panel with a line than the static row.
        let solid = |c: &str| {
            svg.lines()
                .filter(|l| l.contains("<polyline") && l.contains(c))
                .count()
        };
        let (a, b) = (solid("#1F77B4"), solid("#FF7F0E"));
        assert!(a >= b + 2, "learned {a} vs static {b} polylines");
    }
}
