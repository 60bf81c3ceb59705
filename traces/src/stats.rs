//! `trace info`'s summary of a trace: records by kind and thread, the
//! footprint in lines and pages, the address range, and how many records
//! carry a PC, a gap or a time.

use std::collections::{BTreeMap, HashSet};

use crate::error::TraceError;
use crate::record::{Batch, Kind, Timing};
use crate::source::RecordSource;

/// Summary statistics of a trace.
#[derive(Default, serde::Serialize)]
pub struct TraceStats {
    pub records: u64,
    pub by_kind: BTreeMap<&'static str, u64>,
    pub by_thread: BTreeMap<u32, u64>,
    pub footprint_lines: u64,
    pub footprint_pages: u64,
    pub line: u64,
    pub page: u64,
    pub min_addr: Option<String>,
    pub max_addr: Option<String>,
    pub with_pc: u64,
    pub with_gap: u64,
    pub with_time: u64,
}

impl TraceStats {
    /// `trace info`'s text for the trace at `file` (`format`, `bytes`
    /// long, its `checksum`).
    pub fn render(&self, file: &str, format: &str, bytes: u64, checksum: &str) -> String {
        use std::fmt::Write as _;
        let st = self;
        let mut s = String::new();
        let _ = writeln!(s, "file:        {file}");
        let _ = writeln!(s, "format:      {format} ({bytes} bytes)");
        let _ = writeln!(s, "checksum:    {checksum}");
        let _ = writeln!(s, "records:     {}", st.records);
        for (k, n) in &st.by_kind {
            let _ = writeln!(s, "  {k:<10} {n}");
        }
        let _ = writeln!(s, "threads:     {}", st.by_thread.len());
        for (t, n) in st.by_thread.iter().take(32) {
            let _ = writeln!(s, "  thread {t:<4} {n}");
        }
        if st.by_thread.len() > 32 {
            let _ = writeln!(s, "  ... {} more threads", st.by_thread.len() - 32);
        }
        let _ = writeln!(
            s,
            "footprint:   {} lines of {} B ({} KiB), {} pages of {} B ({} KiB)",
            st.footprint_lines,
            st.line,
            st.footprint_lines * st.line / 1024,
            st.footprint_pages,
            st.page,
            st.footprint_pages * st.page / 1024
        );
        if let (Some(lo), Some(hi)) = (&st.min_addr, &st.max_addr) {
            let _ = writeln!(s, "addresses:   {lo} .. {hi}");
        }
        let _ = writeln!(s, "with pc:     {}", st.with_pc);
        let _ = writeln!(
            s,
            "with gap_ns: {}, with time_ns: {}",
            st.with_gap, st.with_time
        );
        s
    }
}

/// Scans every record of `src` with lines of `line` and pages of `page`
/// bytes (powers of two), calling `on_batch` after each batch.
pub fn scan(
    src: &mut dyn RecordSource,
    line: u64,
    page: u64,
    mut on_batch: impl FnMut(),
) -> Result<TraceStats, TraceError> {
    let mut st = TraceStats {
        line,
        page,
        ..Default::default()
    };
    for k in Kind::ALL {
        st.by_kind.insert(k.name(), 0);
    }
    let (lb, pb) = (line.trailing_zeros(), page.trailing_zeros());
    let mut lines = HashSet::new();
    let mut pages = HashSet::new();
    let (mut lo, mut hi) = (u64::MAX, 0u64);
    let mut batch = Batch::new(src.fields());
    loop {
        batch.clear();
        if src.fill(&mut batch)? == 0 {
            break;
        }
        for r in batch.iter() {
            st.records += 1;
            *st.by_kind.entry(r.kind.name()).or_default() += 1;
            *st.by_thread.entry(r.thread).or_default() += 1;
            let end = r.addr.saturating_add(r.size as u64 - 1);
            for l in (r.addr >> lb)..=(end >> lb) {
                lines.insert(l);
            }
            for p in (r.addr >> pb)..=(end >> pb) {
                pages.insert(p);
            }
            lo = lo.min(r.addr);
            hi = hi.max(end);
            st.with_pc += r.pc().is_some() as u64;
            match r.timing() {
                Timing::Gap(_) => st.with_gap += 1,
                Timing::At(_) => st.with_time += 1,
                Timing::None => {}
            }
        }
        on_batch();
    }
    st.footprint_lines = lines.len() as u64;
    st.footprint_pages = pages.len() as u64;
    if st.records > 0 {
        st.min_addr = Some(format!("{lo:#x}"));
        st.max_addr = Some(format!("{hi:#x}"));
    }
    Ok(st)
}
