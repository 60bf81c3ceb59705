//! `scenarios/seed-article.toml`: the article's table (issue 28, item 6).
//! The `ai_predict` row's model is reproduced here by the documented
//! commands on a separate seed; then the table is rerun and checked
//! against the article's figures — TP99 127 / 98 / 68 ms within 15 %
//! each, TP50 within 10 % across those rows, the cold start's 300 ms within
//! 15 % — and the table in docs/workload.md ("The article's table") is
//! checked to be this command's output, line for line. The warm start's
//! 70 ms is not reached (a finding, stated there); the test pins that the
//! warm-up still removes the cliff.

mod common;

use common::{ok, root};

/// The article's TP99 (ms) per row.
const ARTICLE: [(&str, f64); 3] = [
    ("static", 127.0),
    ("dynamic_lb", 98.0),
    ("ai_predict", 68.0),
];

#[test]
fn the_article_table_is_reproduced_within_fifteen_percent() {
    let dir = tempfile::tempdir().unwrap();
    let exp = root("scenarios/seed-article.toml");
    common::assert_model_reproduced(
        dir.path(),
        &exp,
        "numa_aware",
        "scenarios/models/seed-article-gbdt.json",
    );
    let out = dir.path().join("o");
    ok(&["compare", &exp, "--out", out.to_str().unwrap()]);
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("compare.json")).unwrap()).unwrap();
    let rows = v["rows"].as_array().unwrap();
    let row = |name: &str| rows.iter().find(|r| r["row"] == name).unwrap();
    let num = |name: &str, k: &str| row(name)[k].as_f64().unwrap();

    for (name, article) in ARTICLE {
        let tp99 = num(name, "tp99_ms");
        let off = tp99 / article - 1.0;
        assert!(
            off.abs() <= 0.15,
            "{name}: TP99 {tp99:.1} ms is {:+.1} % from the article's {article}",
            off * 100.0
        );
    }
    let tp50: Vec<f64> = ARTICLE.iter().map(|(n, _)| num(n, "tp50_ms")).collect();
    let (lo, hi) = tp50
        .iter()
        .fold((f64::MAX, 0.0f64), |(l, h), &x| (l.min(x), h.max(x)));
    assert!(hi / lo - 1.0 <= 0.10, "TP50s {tp50:?} spread beyond 10 %");
    let cold = num("move_cold", "first_after_move_ms");
    assert!(
        (cold / 300.0 - 1.0).abs() <= 0.15,
        "cold start {cold:.1} ms against the article's 300"
    );
    // The finding: the warm start is an ordinary request, well under the
    // article's 70 ms, but the cliff is gone.
    let warm = num("move_warm", "first_after_move_ms");
    assert!(
        warm < 2.0 * num("move_warm", "tp50_ms") && warm < cold / 4.0,
        "warm start {warm:.1} ms (cold {cold:.1})"
    );

    // The documented table is this output.
    let doc = std::fs::read_to_string(root("docs/workload.md")).unwrap();
    for r in rows {
        let name = r["row"].as_str().unwrap();
        let f = |k: &str| r[k].as_f64().unwrap();
        let star = if r["upper_bound"].as_bool().unwrap() {
            "*"
        } else {
            ""
        };
        let article = ARTICLE
            .iter()
            .find(|(n, _)| *n == name)
            .map_or("—".to_string(), |(_, a)| {
                format!("{a:.0} ({:+.1} %)", (f("tp99_ms") / a - 1.0) * 100.0)
            });
        let first = match f("first_after_move_ms") {
            x if x > 0.0 => format!("{x:.1}"),
            _ => "—".into(),
        };
        let line = format!(
            "| {name}{star} | {:.1} | {:.1} | {:.1} | {article} | {:.1} % | {first} |",
            f("tp50_ms"),
            f("tp90_ms"),
            f("tp99_ms"),
            f("spike_share") * 100.0,
        );
        assert!(
            doc.contains(&line),
            "docs/workload.md lacks the line\n{line}"
        );
    }
}
