//! Library errors in the command line's words: the library crates name the
//! problem (a pinning, a time-series window, a task trace), never a flag;
//! here each is said with the flag that changes it, as the user typed it.

use lab::dependent::ReplayError;
use lab::prefetchers::PrefetchError;
use sim::EngineError;
use traces::{Format, Problem, TraceError};

/// A timing-engine error, with the flag that governs it.
pub fn engine(e: &EngineError) -> String {
    match e {
        EngineError::Unpinned { record, thread } => {
            format!("record {record}: trace thread {thread} has no --pin entry")
        }
        EngineError::NoSuchCore { core, cores } => {
            format!("--pin: core {core} does not exist (the machine has {cores})")
        }
        EngineError::CoreTaken { core } => format!("--pin: core {core} is given to two threads"),
        EngineError::TooManyWindows {
            max,
            window_ns,
            reached_ms,
        } => format!(
            "the time series needs more than {max} windows of {window_ns} ns (simulated time reached {reached_ms:.3} ms); raise --window-ns or --max-windows"
        ),
        EngineError::ZeroMlp => "--mlp must be at least 1".to_string(),
        EngineError::NoSuchLevel(level, n) => {
            format!("--prefetch-level {level}: the machine's cores have {n} private data levels")
        }
        EngineError::SampleShape(_)
        | EngineError::TooFewUnits { .. }
        | EngineError::SampleTooLarge { .. } => format!("--{e}"),
        other => other.to_string(),
    }
}

/// A prefetcher spec's error, said as `--prefetch SPEC: …` (a level the
/// engine refuses is `--prefetch-level`'s unless the spec named it).
pub fn prefetch(e: &PrefetchError) -> String {
    match e {
        PrefetchError::Engine {
            spec,
            error,
            from_spec: false,
        } => format!("--prefetch {spec:?}: {}", engine(error)),
        other => format!("--prefetch {other}"),
    }
}

/// A dependent replay's error, its prefetchers said as `--prefetch`.
pub fn replay(e: ReplayError) -> anyhow::Error {
    match e {
        ReplayError::Prefetch(p) => anyhow::anyhow!(prefetch(&p)),
        other => other.into(),
    }
}

/// A trace reader's error, with what to type instead where a flag helps.
pub fn trace(e: &TraceError) -> String {
    match &e.problem {
        Problem::TaskTrace(how) => {
            // A native task trace can also become a CSV one; a CSV one is.
            let convert = if how.contains("markers") {
                ", or convert it to a task CSV"
            } else {
                ""
            };
            format!(
                "{}: a task trace ({how}): run it with replay --machine M --workers N{convert}",
                e.location
            )
        }
        Problem::UnknownFormat => {
            let names = Format::names();
            format!("{e}; pass --format {}", names.join("|"))
        }
        _ => e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_are_named_here_and_only_here() {
        let e = EngineError::CoreTaken { core: 3 };
        assert!(
            !e.to_string().contains("--"),
            "the library names no flag: {e}"
        );
        assert_eq!(engine(&e), "--pin: core 3 is given to two threads");
        let t = TraceError::at_offset(0, 0, Problem::UnknownFormat);
        assert!(!t.to_string().contains("--"));
        assert!(
            trace(&t).ends_with("; pass --format native|lackey|csv|din|champsim|mldpc"),
            "{}",
            trace(&t)
        );
    }
}
