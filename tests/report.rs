//! `report.html`: one self-contained page per result folder — checked as
//! text (tables, inline plots, the manifest; no scripts, no external
//! references) and in a real browser: headless Chromium loads it with no
//! console message and screenshots it. Without Chromium the browser part
//! skips loudly (`NUMASIM_REQUIRE_BROWSER=1`, set by `.ci/run`, makes that
//! a failure).

mod common;

use std::path::Path;

fn chromium() -> Option<&'static str> {
    ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|b| {
            std::process::Command::new(b)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        })
}

/// Static checks: every `http` is an SVG/XML namespace, nothing is fetched.
fn self_contained(html: &str) {
    for bad in [
        "<script", "<link", "<img", "<iframe", "src=", "url(", "@import",
    ] {
        assert!(!html.contains(bad), "report.html contains {bad}");
    }
    for (i, _) in html.match_indices("http") {
        let around = &html[i.saturating_sub(7)..(i + 40).min(html.len())];
        assert!(
            around.contains("xmlns") || around.contains("www.w3.org"),
            "an external reference: {around}"
        );
    }
}

/// Loads `page` in headless Chromium: (console lines, DOM, screenshot bytes).
fn browse(browser: &str, page: &Path, shot: &Path) -> (Vec<String>, String, u64) {
    let url = format!("file://{}", page.display());
    let common_args = [
        "--headless",
        "--no-sandbox",
        "--disable-background-networking",
        "--disable-gpu",
        "--hide-scrollbars",
        "--enable-logging=stderr",
        "--v=0",
    ];
    let run = |extra: &[&str]| {
        let o = std::process::Command::new(browser)
            .args(common_args)
            .args(extra)
            .arg(&url)
            .output()
            .expect("chromium runs");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        o
    };
    let o = run(&["--dump-dom"]);
    let console: Vec<String> = String::from_utf8_lossy(&o.stderr)
        .lines()
        .filter(|l| l.contains("CONSOLE") || l.contains("Failed to load resource"))
        .map(String::from)
        .collect();
    let dom = String::from_utf8_lossy(&o.stdout).into_owned();
    run(&[
        "--window-size=1300,2400",
        &format!("--screenshot={}", shot.display()),
    ]);
    let bytes = std::fs::metadata(shot).map_or(0, |m| m.len());
    (console, dom, bytes)
}

#[test]
fn compare_and_sweep_reports_are_self_contained_and_load_cleanly() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("cmp");
    common::ok(&[
        "compare",
        &common::root("scenarios/fidelity-ladder.toml"),
        "--duration",
        "0.05s",
        "--seeds",
        "1",
        "--out",
        out.to_str().unwrap(),
        "--report",
    ]);
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    self_contained(&html);
    assert!(html.contains("<h2>Comparison (compare.csv)</h2>"));
    for row in ["static", "least-loaded", "numa-ewma", "locality"] {
        assert!(html.contains(&format!("<td>{row}</td>")), "{row}");
    }
    assert_eq!(
        html.matches("<svg").count(),
        3,
        "histogram, CDF, monitoring chart"
    );
    assert!(html.contains("<h2>Manifest (manifest.json)</h2>"));
    // A sweep's page plots the metric against the swept parameter.
    let s = tmp.path().join("s.toml");
    std::fs::write(
        &s,
        format!(
            "[sweep]\nexperiment = \"{}\"\nrows = [\"static\", \"numa_aware\"]\n[grid]\n\"workload.qps\" = [3000.0, 5000.0]\n\"workload.duration_s\" = [0.3]\n",
            common::root("scenarios/seed-inference.toml")
        ),
    )
    .unwrap();
    let sw = tmp.path().join("sw");
    common::ok(&[
        "sweep",
        s.to_str().unwrap(),
        "--out",
        sw.to_str().unwrap(),
        "--report",
    ]);
    let sweep_html = std::fs::read_to_string(sw.join("report.html")).unwrap();
    self_contained(&sweep_html);
    assert!(sweep_html.contains("tp99_ms vs workload.qps"));
    assert!(sweep_html.contains("<h2>Sweep (sweep.csv)</h2>"));
    // `report DIR` on a replay folder: the summary and the time series.
    let t = tmp.path().join("t.nst");
    common::ok(&[
        "trace",
        "gen",
        "random",
        "-n",
        "20000",
        "-o",
        t.to_str().unwrap(),
    ]);
    let rp = tmp.path().join("rp");
    common::ok(&[
        "replay",
        t.to_str().unwrap(),
        "--machine",
        "xeon-2s",
        "--out",
        rp.to_str().unwrap(),
    ]);
    common::ok(&["report", rp.to_str().unwrap()]);
    let rp_html = std::fs::read_to_string(rp.join("report.html")).unwrap();
    self_contained(&rp_html);
    assert!(
        rp_html.contains("mean access latency per window")
            && rp_html.contains("Summary (summary.json)")
    );
    // --report without --out is one line.
    let e = common::one_line_error(&common::numasim(&[
        "bench",
        "--scenario",
        "static",
        "--duration",
        "0.1s",
        "--report",
    ]));
    assert!(e.contains("--report needs --out"), "{e}");

    let Some(browser) = chromium() else {
        if std::env::var("NUMASIM_REQUIRE_BROWSER").is_ok_and(|v| v == "1") {
            panic!("chromium is required (NUMASIM_REQUIRE_BROWSER=1): apt-get install chromium");
        }
        eprintln!(
            "\n*** SKIPPED the browser check of report.html: chromium not installed (apt-get install chromium) ***\n"
        );
        return;
    };
    for (page, shot) in [
        (out.join("report.html"), tmp.path().join("cmp.png")),
        (sw.join("report.html"), tmp.path().join("sw.png")),
    ] {
        let (console, dom, bytes) = browse(browser, &page, &shot);
        assert!(console.is_empty(), "console: {console:?}");
        assert!(
            dom.contains("<table>") && dom.contains("<svg"),
            "the DOM has the table and plots"
        );
        assert!(bytes > 20_000, "a screenshot with content: {bytes} bytes");
    }
}
