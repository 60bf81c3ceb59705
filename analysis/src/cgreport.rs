//! The human summary of a cache replay, in cachegrind's own layout and terms.

use std::fmt::Write;

use sim::cachegrind::{CgConfig, Events};
use sim::hierarchy::Writebacks;

/// Formats `n` with thousands separators, as cachegrind does (`1,234,567`).
pub fn commas(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn pct(num: u64, den: u64) -> f64 {
    if den == 0 {
        0.0
    } else {
        100.0 * num as f64 / den as f64
    }
}

/// Renders the cachegrind-style report (geometry lines, then the event table).
pub fn render(cfg: &CgConfig, e: &Events, writebacks: Option<&Writebacks>) -> String {
    let mut s = String::new();
    for (name, g) in [("I1", &cfg.i1), ("D1", &cfg.d1), ("LL", &cfg.ll)] {
        let _ = writeln!(
            s,
            "{name} cache:         {} B, {} B, {}-way associative",
            g.size, g.line, g.assoc
        );
    }
    let d_refs = e.dr + e.dw;
    let d1 = e.d1mr + e.d1mw;
    let lld = e.dlmr + e.dlmw;
    let ll_refs = e.i1mr + d1;
    let ll_rd_refs = e.i1mr + e.d1mr;
    let ll_miss = e.ilmr + lld;
    let ll_rd_miss = e.ilmr + e.dlmr;
    let w = commas(e.ir.max(d_refs).max(ll_refs)).len().max(5);
    let w2 = commas(e.dr.max(ll_rd_refs)).len();
    let w3 = commas(e.dw).len();
    let _ = writeln!(s);
    let _ = writeln!(s, "I   refs:      {:>w$}", commas(e.ir));
    let _ = writeln!(s, "I1  misses:    {:>w$}", commas(e.i1mr));
    let _ = writeln!(s, "LLi misses:    {:>w$}", commas(e.ilmr));
    let _ = writeln!(s, "I1  miss rate: {:>w$.2}%", pct(e.i1mr, e.ir));
    let _ = writeln!(s, "LLi miss rate: {:>w$.2}%", pct(e.ilmr, e.ir));
    let _ = writeln!(s);
    let row = |s: &mut String, label: &str, t: u64, r: u64, wr: u64| {
        let _ = writeln!(
            s,
            "{label}{:>w$}  ({:>w2$} rd   + {:>w3$} wr)",
            commas(t),
            commas(r),
            commas(wr)
        );
    };
    row(&mut s, "D   refs:      ", d_refs, e.dr, e.dw);
    row(&mut s, "D1  misses:    ", d1, e.d1mr, e.d1mw);
    row(&mut s, "LLd misses:    ", lld, e.dlmr, e.dlmw);
    let rate = |s: &mut String, label: &str, t: f64, r: f64, wr: f64| {
        let _ = writeln!(
            s,
            "{label}{:>w$.1}% ({:>w2$.1}%     + {:>w3$.1}%  )",
            t, r, wr
        );
    };
    rate(
        &mut s,
        "D1  miss rate: ",
        pct(d1, d_refs),
        pct(e.d1mr, e.dr),
        pct(e.d1mw, e.dw),
    );
    rate(
        &mut s,
        "LLd miss rate: ",
        pct(lld, d_refs),
        pct(e.dlmr, e.dr),
        pct(e.dlmw, e.dw),
    );
    let _ = writeln!(s);
    row(&mut s, "LL refs:       ", ll_refs, ll_rd_refs, e.d1mw);
    row(&mut s, "LL misses:     ", ll_miss, ll_rd_miss, e.dlmw);
    rate(
        &mut s,
        "LL miss rate:  ",
        pct(ll_miss, e.ir + d_refs),
        pct(ll_rd_miss, e.ir + e.dr),
        pct(e.dlmw, e.dw),
    );
    if let Some(wb) = writebacks {
        let _ = writeln!(s);
        let _ = writeln!(s, "D1  writebacks:{:>w$}", commas(wb.d1_writebacks));
        let _ = writeln!(s, "LL  writebacks:{:>w$}", commas(wb.ll_writebacks));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commas_group_by_thousands() {
        assert_eq!(commas(0), "0");
        assert_eq!(commas(999), "999");
        assert_eq!(commas(1000), "1,000");
        assert_eq!(commas(116262), "116,262");
        assert_eq!(commas(1234567), "1,234,567");
    }

    #[test]
    fn report_uses_cachegrind_totals() {
        // The counts cachegrind printed for a small program on this VM
        // (summary: 116262 1251 1232 25525 1118 976 10566 373 349).
        let e = Events {
            ir: 116262,
            i1mr: 1251,
            ilmr: 1232,
            dr: 25525,
            d1mr: 1118,
            dlmr: 976,
            dw: 10566,
            d1mw: 373,
            dlmw: 349,
        };
        let r = render(&CgConfig::default(), &e, None);
        // Cachegrind's own derived lines for those counts:
        assert!(
            r.contains("D   refs:       36,091  (25,525 rd   + 10,566 wr)"),
            "{r}"
        );
        assert!(
            r.contains("LL refs:         2,742  ( 2,369 rd   +    373 wr)"),
            "{r}"
        );
        assert!(
            r.contains("LL misses:       2,557  ( 2,208 rd   +    349 wr)"),
            "{r}"
        );
        assert!(r.contains("I1  miss rate:    1.08%"), "{r}");
        assert!(
            r.contains("D1  miss rate:     4.1% (   4.4%     +    3.5%  )"),
            "{r}"
        );
    }
}
