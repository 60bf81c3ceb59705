//! Recorded request logs: when each request of a production inference
//! service arrived (and, where the log has them, its key, its token counts
//! and its prompt's block hashes), read in the published layouts of the
//! public traces, the layout told by the first line:
//!
//! - the Azure LLM inference trace: `TIMESTAMP,ContextTokens,GeneratedTokens`,
//!   timestamps `YYYY-MM-DD HH:MM:SS[.fffffff]`;
//! - BurstGPT: `Timestamp,Model,Request tokens,Response tokens,...`,
//!   timestamps in seconds;
//! - Mooncake: JSON lines with `timestamp` (ms), `input_length`,
//!   `output_length` and `hash_ids`;
//! - a plain CSV: `arrival_s` or `arrival_ms`, optional `key` and `tokens`.
//!
//! Arrivals are kept relative to the first request, scaled by `time_scale`
//! (0.5 replays the log twice as fast), in ns within the time horizon
//! (`crate::horizon`). A log out of time order, a negative or garbled time
//! is an error naming the line. A log is held in memory, so its size is
//! bounded ([`MAX_LOG_REQUESTS`], [`MAX_LOG_HASH_IDS`]).

use std::io::BufRead;

use crate::error::{LogRule, Problem, TraceError};

/// Most requests a log may hold (about 2 GiB of requests at most).
pub const MAX_LOG_REQUESTS: usize = 1 << 25;

/// Most Mooncake `hash_ids` a log may hold in all (1 GiB).
pub const MAX_LOG_HASH_IDS: usize = 1 << 27;

/// Most tokens a request may have, in or out (the workload's own too).
pub const MAX_TOKENS: u64 = 10_000_000;

/// Most feature lookups a request may make (a logged request's blocks
/// too).
pub const MAX_LOOKUPS: u64 = 100_000;

/// The layouts a log may be in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    Azure,
    BurstGpt,
    Mooncake,
    Plain,
}

impl LogFormat {
    pub fn name(self) -> &'static str {
        match self {
            LogFormat::Azure => "azure",
            LogFormat::BurstGpt => "burstgpt",
            LogFormat::Mooncake => "mooncake",
            LogFormat::Plain => "plain",
        }
    }
}

/// One logged request.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LoggedRequest {
    /// Since the first request, scaled (ns).
    pub arrival_ns: u64,
    /// A plain log's `key` column.
    pub key: Option<u64>,
    /// Prompt tokens (Azure ContextTokens, BurstGPT Request tokens,
    /// Mooncake input_length, a plain log's tokens).
    pub input_tokens: Option<u32>,
    /// Generated tokens, where logged.
    pub output_tokens: Option<u32>,
    /// Mooncake's prompt block hashes, where the line has them.
    pub hash_ids: Option<Vec<u64>>,
}

/// A whole log.
#[derive(Clone, Debug, PartialEq)]
pub struct RequestLog {
    pub format: LogFormat,
    pub requests: Vec<LoggedRequest>,
}

fn err(line: u64, record: u64, rule: LogRule) -> TraceError {
    TraceError::at_line(line, record, Problem::Log(rule))
}

/// A time as read (ns since the log's own epoch), before it is made
/// relative to the first request.
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd)]
enum Stamp {
    Ns(i128),
}

/// The layout a log's first line says it is in, if it is a request log
/// at all (for `trace info`, which takes any trace).
pub fn sniff(first_line: &str) -> Option<LogFormat> {
    let head = first_line.trim_start_matches('\u{feff}').trim();
    if head.starts_with('{') {
        return mooncake(head).is_ok().then_some(LogFormat::Mooncake);
    }
    let header: Vec<String> = head.split(',').map(|c| c.trim().to_string()).collect();
    Csv::of(&header).map(|c| c.format())
}

/// Reads a log from `r`, its layout told by the first line; arrivals
/// relative to the first request, multiplied by `time_scale`.
pub fn read(r: impl BufRead, time_scale: f64) -> Result<RequestLog, TraceError> {
    if !(time_scale.is_finite() && time_scale > 0.0) {
        return Err(err(0, 0, LogRule::TimeScale(time_scale)));
    }
    let mut lines = r.lines();
    let Some(first) = lines.next() else {
        return Err(err(1, 0, LogRule::NoRequests));
    };
    let first = first.map_err(|e| TraceError::at_line(1, 0, Problem::Io(e)))?;
    let head = first.trim_start_matches('\u{feff}').trim();
    let mut out = Vec::new();
    let mut ids = 0usize;
    let mut stamps: Vec<(Stamp, u64)> = Vec::new();
    let format;
    if head.starts_with('{') {
        format = LogFormat::Mooncake;
        let rest = lines.enumerate().map(|(i, l)| (i as u64 + 2, l));
        for (line, l) in std::iter::once((1, Ok(head.to_string()))).chain(rest) {
            let record = out.len() as u64;
            let l = l.map_err(|e| TraceError::at_line(line, record, Problem::Io(e)))?;
            if l.trim().is_empty() {
                continue;
            }
            let (stamp, req) = mooncake(l.trim()).map_err(|r| err(line, record, r))?;
            ids += req.hash_ids.as_ref().map_or(0, Vec::len);
            if ids > MAX_LOG_HASH_IDS {
                return Err(err(line, record, LogRule::TooManyHashIds(MAX_LOG_HASH_IDS)));
            }
            keep(&mut out, &mut stamps, stamp, req, line)?;
        }
    } else {
        let header: Vec<String> = head.split(',').map(|c| c.trim().to_string()).collect();
        let layout = Csv::of(&header).ok_or_else(|| err(1, 0, LogRule::UnknownLayout))?;
        format = layout.format();
        for (i, l) in lines.enumerate() {
            let line = i as u64 + 2;
            let record = out.len() as u64;
            let l = l.map_err(|e| TraceError::at_line(line, record, Problem::Io(e)))?;
            if l.trim().is_empty() {
                continue;
            }
            let cells: Vec<&str> = l.split(',').map(str::trim).collect();
            if cells.len() != header.len() {
                return Err(err(
                    line,
                    record,
                    LogRule::Fields {
                        found: cells.len(),
                        expected: header.len(),
                    },
                ));
            }
            let (stamp, req) = layout.row(&cells).map_err(|r| err(line, record, r))?;
            keep(&mut out, &mut stamps, stamp, req, line)?;
        }
    }
    let Some(&(Stamp::Ns(t0), _)) = stamps.first() else {
        return Err(err(1, 0, LogRule::NoRequests));
    };
    for (i, (req, &(Stamp::Ns(t), line))) in out.iter_mut().zip(&stamps).enumerate() {
        let ns = ((t - t0) as f64 * time_scale).round();
        let ns = if ns < u64::MAX as f64 {
            ns as u64
        } else {
            u64::MAX
        };
        req.arrival_ns = crate::horizon::check("arrival", ns)
            .map_err(|p| TraceError::at_line(line, i as u64, Problem::PastHorizon(p)))?;
    }
    Ok(RequestLog {
        format,
        requests: out,
    })
}

/// Appends a request after checking its time against the previous one.
fn keep(
    out: &mut Vec<LoggedRequest>,
    stamps: &mut Vec<(Stamp, u64)>,
    stamp: Stamp,
    req: LoggedRequest,
    line: u64,
) -> Result<(), TraceError> {
    let record = out.len() as u64;
    if out.len() >= MAX_LOG_REQUESTS {
        return Err(err(
            line,
            record,
            LogRule::TooManyRequests(MAX_LOG_REQUESTS),
        ));
    }
    if let Some(&(prev, _)) = stamps.last()
        && stamp < prev
    {
        let show = |Stamp::Ns(n): Stamp| format!("{:.9} s", n as f64 / 1e9);
        return Err(err(
            line,
            record,
            LogRule::Unsorted {
                at: show(stamp),
                previous: show(prev),
            },
        ));
    }
    stamps.push((stamp, line));
    out.push(req);
    Ok(())
}

/// The CSV layouts, with their columns' positions.
enum Csv {
    Azure {
        t: usize,
        c: usize,
        g: usize,
    },
    Burst {
        t: usize,
        q: usize,
        p: usize,
    },
    Plain {
        t: usize,
        ms: bool,
        key: Option<usize>,
        tokens: Option<usize>,
    },
}

impl Csv {
    /// The layout a CSV header names, if any.
    fn of(header: &[String]) -> Option<Csv> {
        let col = |name: &str| header.iter().position(|c| c.eq_ignore_ascii_case(name));
        if let (Some(t), Some(c), Some(g)) = (
            col("TIMESTAMP").filter(|_| col("ContextTokens").is_some()),
            col("ContextTokens"),
            col("GeneratedTokens"),
        ) {
            Some(Csv::Azure { t, c, g })
        } else if let (Some(t), Some(q), Some(p)) = (
            col("Timestamp").filter(|_| col("Model").is_some()),
            col("Request tokens"),
            col("Response tokens"),
        ) {
            Some(Csv::Burst { t, q, p })
        } else {
            col("arrival_s").or(col("arrival_ms")).map(|t| Csv::Plain {
                t,
                ms: col("arrival_s").is_none(),
                key: col("key"),
                tokens: col("tokens"),
            })
        }
    }

    fn format(&self) -> LogFormat {
        match self {
            Csv::Azure { .. } => LogFormat::Azure,
            Csv::Burst { .. } => LogFormat::BurstGpt,
            Csv::Plain { .. } => LogFormat::Plain,
        }
    }

    fn row(&self, cells: &[&str]) -> Result<(Stamp, LoggedRequest), LogRule> {
        match *self {
            Csv::Azure { t, c, g } => Ok((
                Stamp::Ns(date_ns(cells[t])?),
                LoggedRequest {
                    input_tokens: Some(count(cells[c], "ContextTokens")?),
                    output_tokens: Some(count(cells[g], "GeneratedTokens")?),
                    ..LoggedRequest::default()
                },
            )),
            Csv::Burst { t, q, p } => Ok((
                Stamp::Ns(seconds(cells[t], "Timestamp", 1e9)?),
                LoggedRequest {
                    input_tokens: Some(count(cells[q], "Request tokens")?),
                    output_tokens: Some(count(cells[p], "Response tokens")?),
                    ..LoggedRequest::default()
                },
            )),
            Csv::Plain { t, ms, key, tokens } => {
                let (column, scale) = if ms {
                    ("arrival_ms", 1e6)
                } else {
                    ("arrival_s", 1e9)
                };
                Ok((
                    Stamp::Ns(seconds(cells[t], column, scale)?),
                    LoggedRequest {
                        key: key.map(|k| whole(cells[k], "key")).transpose()?,
                        input_tokens: tokens.map(|k| count(cells[k], "tokens")).transpose()?,
                        ..LoggedRequest::default()
                    },
                ))
            }
        }
    }
}

/// A non-negative decimal number of `scale`-ns units as ns.
fn seconds(text: &str, column: &'static str, scale: f64) -> Result<i128, LogRule> {
    let x: f64 = text.parse().map_err(|_| LogRule::Number {
        column,
        text: text.to_string(),
    })?;
    if !x.is_finite() {
        return Err(LogRule::Number {
            column,
            text: text.to_string(),
        });
    }
    if x < 0.0 {
        return Err(LogRule::Negative {
            column,
            value: text.to_string(),
        });
    }
    // Past 2^100 ns the horizon refuses it anyway; keep the arithmetic finite.
    Ok((x * scale).round().min(2f64.powi(100)) as i128)
}

fn whole(text: &str, column: &'static str) -> Result<u64, LogRule> {
    if let Some(rest) = text.strip_prefix('-')
        && rest.parse::<u64>().is_ok()
    {
        return Err(LogRule::Negative {
            column,
            value: text.to_string(),
        });
    }
    text.parse().map_err(|_| LogRule::Number {
        column,
        text: text.to_string(),
    })
}

/// A token count, at most [`MAX_TOKENS`].
fn count(text: &str, column: &'static str) -> Result<u32, LogRule> {
    tokens(whole(text, column)?, column)
}

fn tokens(n: u64, column: &'static str) -> Result<u32, LogRule> {
    if n > MAX_TOKENS {
        return Err(LogRule::TooManyTokens {
            column,
            found: n,
            max: MAX_TOKENS,
        });
    }
    Ok(n as u32)
}

/// `YYYY-MM-DD HH:MM:SS[.fraction]` (UTC) as ns since 1970.
fn date_ns(text: &str) -> Result<i128, LogRule> {
    let bad = || LogRule::Timestamp(text.to_string());
    let (date, time) = text
        .split_once(' ')
        .or_else(|| text.split_once('T'))
        .ok_or_else(bad)?;
    let d: Vec<&str> = date.split('-').collect();
    let (hms, frac) = time.split_once('.').unwrap_or((time, ""));
    let t: Vec<&str> = hms.split(':').collect();
    if d.len() != 3 || t.len() != 3 || frac.len() > 9 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    let num = |s: &str, lo: i64, hi: i64| -> Result<i64, LogRule> {
        match s.parse::<i64>() {
            Ok(v) if (lo..=hi).contains(&v) && s.bytes().all(|b| b.is_ascii_digit()) => Ok(v),
            _ => Err(bad()),
        }
    };
    let (y, m, day) = (num(d[0], 1, 9999)?, num(d[1], 1, 12)?, num(d[2], 1, 31)?);
    let (h, mi, s) = (num(t[0], 0, 23)?, num(t[1], 0, 59)?, num(t[2], 0, 60)?);
    let frac_ns = if frac.is_empty() {
        0
    } else {
        frac.parse::<i64>().map_err(|_| bad())? * 10i64.pow(9 - frac.len() as u32)
    };
    let days = days_from_civil(y, m, day);
    Ok(((days * 86_400 + h * 3600 + mi * 60 + s) as i128) * 1_000_000_000 + frac_ns as i128)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's
/// `days_from_civil`).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// One Mooncake line.
fn mooncake(text: &str) -> Result<(Stamp, LoggedRequest), LogRule> {
    #[derive(serde::Deserialize)]
    struct Line {
        timestamp: serde_json::Number,
        #[serde(default)]
        input_length: Option<u32>,
        #[serde(default)]
        output_length: Option<u32>,
        #[serde(default)]
        hash_ids: Option<Vec<u64>>,
    }
    let l: Line = serde_json::from_str(text).map_err(|e| LogRule::Json(e.to_string()))?;
    for (column, n) in [
        ("input_length", l.input_length),
        ("output_length", l.output_length),
    ] {
        tokens(n.unwrap_or(0) as u64, column)?;
    }
    if let Some(h) = &l.hash_ids
        && h.len() as u64 > MAX_LOOKUPS
    {
        return Err(LogRule::TooManyBlocks {
            found: h.len(),
            max: MAX_LOOKUPS,
        });
    }
    let ts = l.timestamp.to_string();
    Ok((
        Stamp::Ns(seconds(&ts, "timestamp", 1e6)?),
        LoggedRequest {
            input_tokens: l.input_length,
            output_tokens: l.output_length,
            hash_ids: l.hash_ids,
            ..LoggedRequest::default()
        },
    ))
}

/// What `trace info` says of a log.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct LogStats {
    pub format: LogFormat,
    pub requests: usize,
    /// First to last arrival (s).
    pub span_s: f64,
    /// Requests over the span (requests/s; 0 for a single request).
    pub mean_qps: f64,
    /// The most requests in one second (counted from the first arrival).
    pub peak_qps: u64,
    /// Mean input and generated tokens of the requests that log them.
    pub mean_input_tokens: Option<f64>,
    pub mean_output_tokens: Option<f64>,
    /// Requests that give their prompt's blocks (Mooncake `hash_ids`), and
    /// the distinct blocks among them.
    pub with_blocks: usize,
    pub distinct_blocks: usize,
}

impl RequestLog {
    pub fn stats(&self) -> LogStats {
        let n = self.requests.len();
        let last = self.requests.last().map_or(0, |r| r.arrival_ns);
        let span_s = last as f64 / 1e9;
        let mut peak = 0u64;
        let mut run = 0u64;
        let mut second = 0u64;
        for r in &self.requests {
            let s = r.arrival_ns / 1_000_000_000;
            if s != second {
                second = s;
                run = 0;
            }
            run += 1;
            peak = peak.max(run);
        }
        let mean = |f: fn(&LoggedRequest) -> Option<u32>| {
            let (sum, k) = self
                .requests
                .iter()
                .filter_map(f)
                .fold((0u64, 0u64), |(s, k), x| (s + x as u64, k + 1));
            (k > 0).then(|| sum as f64 / k as f64)
        };
        let mut blocks: Vec<u64> = Vec::new();
        let mut with_blocks = 0;
        for r in &self.requests {
            if let Some(h) = &r.hash_ids {
                with_blocks += 1;
                blocks.extend_from_slice(h);
            }
        }
        blocks.sort_unstable();
        blocks.dedup();
        LogStats {
            format: self.format,
            requests: n,
            span_s,
            mean_qps: if span_s > 0.0 { n as f64 / span_s } else { 0.0 },
            peak_qps: peak,
            mean_input_tokens: mean(|r| r.input_tokens),
            mean_output_tokens: mean(|r| r.output_tokens),
            with_blocks,
            distinct_blocks: blocks.len(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<RequestLog, TraceError> {
        read(text.as_bytes(), 1.0)
    }

    fn at(log: &RequestLog) -> Vec<u64> {
        log.requests.iter().map(|r| r.arrival_ns).collect()
    }

    #[test]
    fn each_layout_gives_its_arrivals_relative_to_the_first() {
        // Hand-computed: 18:15:46.6805900 → +0.1234567 s → +1 min 0.5 s.
        let azure = "TIMESTAMP,ContextTokens,GeneratedTokens\n\
                     2023-11-16 18:15:46.6805900,374,44\n\
                     2023-11-16 18:15:46.8040467,396,109\n\
                     2023-11-16 18:16:47.1805900,879,20\n";
        let a = parse(azure).unwrap();
        assert_eq!(a.format, LogFormat::Azure);
        assert_eq!(at(&a), vec![0, 123_456_700, 60_500_000_000]);
        assert_eq!(a.requests[2].input_tokens, Some(879));
        assert_eq!(a.requests[1].output_tokens, Some(109));
        // Across a month's end (and a leap day).
        let b = parse("TIMESTAMP,ContextTokens,GeneratedTokens\n2024-02-28 23:59:59,1,1\n2024-03-01 00:00:01,1,1\n").unwrap();
        assert_eq!(at(&b), vec![0, (86_400 + 2) * 1_000_000_000]);
        let burst = "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n\
                     5,ChatGPT,472,18,490,Conversation log\n\
                     45,ChatGPT,1087,251,1338,Conversation log\n\
                     45.5,GPT-4,417,276,693,API log\n";
        let g = parse(burst).unwrap();
        assert_eq!(g.format, LogFormat::BurstGpt);
        assert_eq!(at(&g), vec![0, 40_000_000_000, 40_500_000_000]);
        assert_eq!(g.requests[0].input_tokens, Some(472));
        let moon = "{\"timestamp\": 0, \"input_length\": 6955, \"output_length\": 52, \"hash_ids\": [46, 47, 48]}\n\
                    {\"timestamp\": 27482, \"input_length\": 6472, \"output_length\": 26, \"hash_ids\": [46, 47, 2353]}\n\n\
                    {\"timestamp\": 30535, \"input_length\": 12, \"output_length\": 1, \"hash_ids\": []}\n";
        let m = parse(moon).unwrap();
        assert_eq!(m.format, LogFormat::Mooncake);
        assert_eq!(at(&m), vec![0, 27_482_000_000, 30_535_000_000]);
        assert_eq!(m.requests[1].hash_ids, Some(vec![46, 47, 2353]));
        let plain = parse("arrival_ms,key,tokens\n10,3,100\n10.25,4,7\n12,3,9\n").unwrap();
        assert_eq!(plain.format, LogFormat::Plain);
        assert_eq!(at(&plain), vec![0, 250_000, 2_000_000]);
        assert_eq!(plain.requests[1].key, Some(4));
        let s = parse("arrival_s\n1\n1.5\n").unwrap();
        assert_eq!(at(&s), vec![0, 500_000_000]);
        // time_scale 0.5: twice as fast.
        let h = read("arrival_s\n1\n1.5\n3\n".as_bytes(), 0.5).unwrap();
        assert_eq!(at(&h), vec![0, 250_000_000, 1_000_000_000]);
    }

    #[test]
    fn stats_count_the_busiest_second() {
        let l = parse("arrival_s\n0\n0.1\n0.2\n1.5\n2.0\n4\n").unwrap();
        let s = l.stats();
        assert_eq!((s.requests, s.peak_qps), (6, 3));
        assert_eq!(s.span_s, 4.0);
        assert_eq!(s.mean_qps, 1.5);
        assert_eq!((s.mean_input_tokens, s.with_blocks), (None, 0));
        let m = parse("{\"timestamp\": 0, \"input_length\": 10, \"hash_ids\": [1, 2]}\n{\"timestamp\": 5, \"input_length\": 20, \"hash_ids\": [2, 3]}\n").unwrap().stats();
        assert_eq!(
            (m.mean_input_tokens, m.mean_output_tokens),
            (Some(15.0), None)
        );
        assert_eq!((m.with_blocks, m.distinct_blocks), (2, 3));
    }

    #[test]
    fn sniff_tells_a_log_from_other_first_lines() {
        assert_eq!(
            sniff("TIMESTAMP,ContextTokens,GeneratedTokens"),
            Some(LogFormat::Azure)
        );
        assert_eq!(
            sniff("Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type"),
            Some(LogFormat::BurstGpt)
        );
        assert_eq!(
            sniff("{\"timestamp\": 1, \"hash_ids\": []}"),
            Some(LogFormat::Mooncake)
        );
        assert_eq!(sniff("arrival_ms,key"), Some(LogFormat::Plain));
        assert_eq!(sniff("task,op,addr,size,gap_ns,arrival_ns,key"), None);
        assert_eq!(sniff("I  0400d7d4,8"), None);
        assert_eq!(sniff("{\"traceEvents\": []}"), None);
    }

    #[test]
    fn bad_logs_are_errors_naming_the_line() {
        for (text, want) in [
            (
                "arrival_s\n2\n1\n",
                "line 3, record 1: arrival 1.000000000 s is before the previous request's 2.000000000 s",
            ),
            (
                "arrival_s\n-1\n",
                "line 2, record 0: arrival_s -1 is negative",
            ),
            (
                "arrival_s\n1\nabc\n",
                "line 3, record 1: arrival_s \"abc\" is not a number",
            ),
            (
                "arrival_s,key\n1\n",
                "line 2, record 0: row has 1 fields, the header has 2",
            ),
            ("time,x\n1,2\n", "not a request log"),
            (
                "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-13-01 00:00:00,1,1\n",
                "line 2, record 0: bad timestamp \"2023-13-01 00:00:00\"",
            ),
            (
                "{\"timestamp\": 1}\n{\"ts\": 2}\n",
                "line 2, record 1: not a JSON object with a numeric timestamp",
            ),
            ("arrival_s\n", "the log has no requests"),
            (
                "arrival_s\n0\n1e8\n",
                "line 3, record 1: arrival 100000000000000000 ns is past the time horizon",
            ),
            ("arrival_ms,key\n1,-4\n", "key -4 is negative"),
            (
                "arrival_ms,tokens\n1,10000001\n",
                "tokens 10000001 is more than the 10000000 a request may have",
            ),
        ] {
            let e = parse(text).unwrap_err().to_string();
            assert!(e.contains(want), "{text:?}: {e}");
        }
        assert!(read("arrival_s\n1\n".as_bytes(), 0.0).is_err());
    }
}
