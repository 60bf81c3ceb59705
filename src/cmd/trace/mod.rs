//! `numasim trace gen|convert|info` (and `prefetch`, in [`prefetch`]).

pub mod prefetch;

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use serde_json::json;
use traces::synth::{GenConfig, Generator, Pattern};
use traces::{Fields, Format, RecordSource};

use crate::input::{open_trace, parse_format, trace_err};
use crate::output::AtomicFile;
use crate::progress::Progress;

#[derive(Subcommand, Debug)]
pub enum TraceCmd {
    /// Generate a synthetic trace (seeded, reproducible).
    Gen(GenArgs),
    /// Convert a trace between formats (output format from OUT's extension).
    Convert(ConvertArgs),
    /// Summarise a trace: records by kind and thread, footprint, address
    /// range; a task trace's tasks; a request log's requests, span, mean
    /// and peak QPS.
    Info(InfoArgs),
    /// Run a prefetcher over an ML Prefetching Competition load trace and
    /// write its prefetch file (`instr_id hexaddr` per line).
    Prefetch(prefetch::PrefetchArgs),
}

/// An output format (`traces::registry::writers`).
pub type OutFormat = &'static traces::sink::Writer;

fn parse_out_format(s: &str) -> Result<OutFormat, String> {
    traces::registry::writer_named(s).ok_or_else(|| {
        format!(
            "unknown output format {s:?}; expected {}",
            traces::registry::writer_names()
        )
    })
}

fn to_help() -> String {
    let names: Vec<&str> = traces::registry::writers().map(|w| w.name).collect();
    format!(
        "Output format ({}), overriding the extension",
        names.join(", ")
    )
}

/// The output format named by a file's extension.
pub fn out_format_of(path: &Path) -> Result<OutFormat> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    traces::registry::writer_for(&name).with_context(|| {
        format!(
            "{}: cannot tell the output format from the extension ({}); pass --to",
            path.display(),
            traces::registry::writer_extensions()
        )
    })
}

/// Streams every record of `src` into `out`; returns the record count.
/// Nothing is left at `out` unless the whole stream was written.
pub fn write_trace(
    src: &mut dyn RecordSource,
    src_name: &Path,
    out: &Path,
    format: OutFormat,
    meta: serde_json::Value,
    on_batch: impl FnMut(),
) -> Result<u64> {
    let mut file = AtomicFile::create(out)?;
    let n =
        traces::sink::copy(src, format, file.writer(), &meta, on_batch).map_err(|e| match e {
            traces::sink::CopyError::Read(e) => trace_err(src_name, e),
            traces::sink::CopyError::Write(e) => {
                anyhow::anyhow!("{}: write failed: {e}", out.display())
            }
        })?;
    file.commit()?;
    Ok(n)
}

/// `trace gen tasks`' defaults, written once in `traces`.
static SERVICE: std::sync::LazyLock<traces::tasks::ServiceGen> =
    std::sync::LazyLock::new(traces::tasks::ServiceGen::default);

#[derive(Args, Debug)]
pub struct GenArgs {
    /// Pattern: sequential, stride, random, chase (pointer chase), zipf,
    /// producer-consumer, false-sharing, interleaved (--streams strided
    /// streams in turn), gapped (a strided stream with random skips:
    /// --skip-lines, --skip-prob), or tasks (an inference-like
    /// service as a task trace, .csv or .nst: --keys, --items, --lookups, --qps,
    /// --background-every ...).
    pub pattern: String,
    /// Output file; format from its extension (`--to` lists the formats).
    #[arg(short, long)]
    pub out: PathBuf,
    #[arg(long, value_parser = parse_out_format, help = to_help())]
    pub to: Option<OutFormat>,
    /// Records to generate.
    #[arg(short = 'n', long, default_value_t = 1_000_000)]
    pub count: u64,
    /// Bytes of address space covered (K/M/G suffixes), per thread for sequential/stride.
    #[arg(long, default_value = "64M", value_parser = crate::input::parse_size)]
    pub footprint: u64,
    /// Bytes per access.
    #[arg(long, default_value_t = 8)]
    pub size: u16,
    /// Step in bytes for `stride`.
    #[arg(long, default_value_t = 64)]
    pub stride: u64,
    /// Threads (records interleave round-robin).
    #[arg(long, default_value_t = 1)]
    pub threads: u32,
    /// Fraction of accesses that are stores.
    #[arg(long, default_value_t = 0.0)]
    pub write_ratio: f64,
    /// Zipf exponent for `zipf`.
    #[arg(long, default_value_t = 1.0)]
    pub zipf_s: f64,
    /// First address of the footprint (hex with 0x, or decimal).
    #[arg(long, default_value = "0x10000000", value_parser = parse_addr)]
    pub base: u64,
    /// Compute gap in ns to attach to every record (closed-loop timing).
    #[arg(long, conflicts_with = "rate")]
    pub gap_ns: Option<u64>,
    /// Open-loop Poisson issue at this mean rate per thread (accesses per µs),
    /// stamped as time_ns.
    #[arg(long)]
    pub rate: Option<f64>,
    /// `stride`: wrap modulo the footprint (an odd stride in lines then
    /// visits every line of a power-of-two footprint once per pass) instead
    /// of restarting at its first address.
    #[arg(long)]
    pub modular: bool,
    /// `sequential` / `stride`: walk from the footprint's end downwards.
    #[arg(long)]
    pub backward: bool,
    /// `interleaved`: streams per thread, each over its share of the footprint.
    #[arg(long, default_value_t = 2)]
    pub streams: u32,
    /// `gapped`: most lines one skip jumps over (uniform from 1).
    #[arg(long, default_value_t = 16)]
    pub skip_lines: u64,
    /// `gapped`: probability a step is followed by a skip.
    #[arg(long, default_value_t = 0.25)]
    pub skip_prob: f64,
    /// Random seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// `tasks`: keys (Zipf popularity --key-zipf).
    #[arg(long, default_value_t = SERVICE.keys)]
    pub keys: u32,
    #[arg(long, default_value_t = SERVICE.key_zipf)]
    pub key_zipf: f64,
    /// `tasks`: feature items per key (lines of its region; Zipf --item-zipf).
    #[arg(long, default_value_t = SERVICE.items_per_key)]
    pub items: u32,
    #[arg(long, default_value_t = SERVICE.item_zipf)]
    pub item_zipf: f64,
    /// `tasks`: lookups per request.
    #[arg(long, default_value_t = SERVICE.lookups)]
    pub lookups: u32,
    /// `tasks`: Poisson arrival rate (requests/s).
    #[arg(long, default_value_t = SERVICE.qps)]
    pub qps: f64,
    /// `tasks`: a background task every this many requests (0: none).
    #[arg(long, default_value_t = SERVICE.background_every)]
    pub background_every: u64,
    /// `tasks`: lines a background task streams, and hot lines of every key it then writes.
    #[arg(long, default_value_t = SERVICE.sweep_lines)]
    pub sweep_lines: u64,
    #[arg(long, default_value_t = SERVICE.dirty_lines)]
    pub dirty_lines: u32,
    /// `tasks`: bytes between keys' regions.
    #[arg(long, default_value = "1M", value_parser = crate::input::parse_size)]
    pub region: u64,
}

fn parse_addr(s: &str) -> Result<u64, String> {
    let r = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16),
        None => s.parse(),
    };
    r.map_err(|_| format!("bad address {s:?}"))
}

#[derive(Args, Debug)]
pub struct ConvertArgs {
    /// Input trace (format detected; --format overrides).
    pub input: PathBuf,
    /// Output file; format from its extension (`--to` lists the formats).
    pub output: PathBuf,
    #[arg(long, value_parser = parse_format, help = crate::input::format_help())]
    pub format: Option<Format>,
    #[arg(long, value_parser = parse_out_format, help = to_help())]
    pub to: Option<OutFormat>,
    /// Write a task trace (.csv, .nst or .nst.zst): a task begins at every instruction fetch of
    /// this address (0x-hex or decimal; e.g. a request handler's entry from `nm`).
    #[arg(long, value_parser = parse_addr)]
    pub task_pc: Option<u64>,
    /// With --task-pc: a task ends after the fetch of this address (default:
    /// when the next one begins).
    #[arg(long, value_parser = parse_addr)]
    pub task_end_pc: Option<u64>,
    /// With --task-pc: task i gets key i mod KEYS.
    #[arg(long, default_value_t = 1)]
    pub keys: u32,
    /// With --task-pc: drop the records before the first task (by default
    /// they are the trace's warm-up, run untimed before the first task).
    #[arg(long, requires = "task_pc")]
    pub drop_warmup: bool,
    /// With --task-pc or a task trace as input: arrival times,
    /// poisson:QPS[:SEED] or a request log's, log:FILE (needed when the
    /// trace has no open-loop times; re-times one that has).
    #[arg(long)]
    pub arrivals: Option<String>,
}

#[derive(Args, Debug)]
pub struct InfoArgs {
    /// Trace file.
    pub input: PathBuf,
    #[arg(long, value_parser = parse_format, help = crate::input::format_help())]
    pub format: Option<Format>,
    /// Line size for the footprint count.
    #[arg(long, default_value_t = 64)]
    pub line: u64,
    /// Page size for the footprint count.
    #[arg(long, default_value_t = 4096)]
    pub page: u64,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

pub fn run(cmd: TraceCmd) -> Result<()> {
    match cmd {
        TraceCmd::Gen(a) => generate(a),
        TraceCmd::Convert(a) => convert(a),
        TraceCmd::Info(a) => info(a),
        TraceCmd::Prefetch(a) => prefetch::run(a),
    }
}

fn generate(a: GenArgs) -> Result<()> {
    if a.pattern == "tasks" {
        if a.backward {
            bail!("--backward is for the sequential and stride patterns; got tasks");
        }
        return generate_tasks(&a);
    }
    let pattern = Pattern::from_name(&a.pattern).with_context(|| {
        let names: Vec<&str> = Pattern::NAMES.iter().map(|(n, _)| *n).collect();
        format!(
            "unknown pattern {:?}; expected one of {}",
            a.pattern,
            names.join(", ")
        )
    })?;
    let cfg = GenConfig {
        pattern,
        count: a.count,
        footprint: a.footprint,
        size: a.size,
        stride: a.stride,
        threads: a.threads,
        write_ratio: a.write_ratio,
        zipf_s: a.zipf_s,
        base: a.base,
        gap_ns: a.gap_ns,
        rate_per_us: a.rate,
        modular: a.modular,
        backward: a.backward,
        streams: a.streams,
        skip_lines: a.skip_lines,
        skip_prob: a.skip_prob,
        seed: a.seed,
    };
    let format = match a.to {
        Some(f) => f,
        None => out_format_of(&a.out)?,
    };
    let mut g =
        Generator::new(cfg.clone()).map_err(|e| anyhow::anyhow!("trace gen: {}", e.problem))?;
    let meta = json!({ "source": "numasim trace gen", "generator": cfg });
    let mut progress = Progress::new(a.count, "generating");
    let mut done = 0u64;
    let n = write_trace(&mut g, Path::new("generator"), &a.out, format, meta, || {
        done += traces::BATCH as u64;
        progress.update(done);
    })?;
    progress.finish();
    eprintln!("wrote {n} records to {}", a.out.display());
    Ok(())
}

/// `trace gen tasks`: an inference-like service as a task trace (CSV or
/// native, by the output's extension).
fn generate_tasks(a: &GenArgs) -> Result<()> {
    use lab::task_files::TaskFileError;
    let g = traces::tasks::ServiceGen {
        tasks: a.count,
        keys: a.keys,
        key_zipf: a.key_zipf,
        items_per_key: a.items,
        item_zipf: a.item_zipf,
        lookups: a.lookups,
        gap_ns: a.gap_ns.unwrap_or(SERVICE.gap_ns),
        qps: a.qps,
        background_every: a.background_every,
        sweep_lines: a.sweep_lines,
        dirty_lines: a.dirty_lines,
        base: a.base,
        region: a.region,
        seed: a.seed,
    };
    let t = lab::task_files::generate(&g).map_err(|e| match e {
        TaskFileError::Rates => anyhow::anyhow!(
            "--qps must be positive, --key-zipf and --item-zipf finite and not negative"
        ),
        TaskFileError::Sizes => {
            anyhow::anyhow!("--keys and --items must be at least 1, --region at least 64 bytes")
        }
        TaskFileError::Time(p) => anyhow::anyhow!("trace gen tasks (--qps, --gap-ns): {p}"),
        e => anyhow::anyhow!(e),
    })?;
    let meta = json!({ "source": "numasim trace gen tasks", "config": format!("{g:?}") });
    crate::task_io::write_tasks(&a.out, &t, &meta)?;
    eprintln!(
        "wrote {} tasks ({} keys, {} accesses) to {}",
        t.tasks.len(),
        t.keys(),
        t.accesses(),
        a.out.display()
    );
    Ok(())
}

/// `trace convert --task-pc`: a record stream cut into tasks, as a task
/// trace (CSV or native, by the output's extension).
fn convert_tasks(a: &ConvertArgs, task_pc: u64) -> Result<()> {
    let mut input = open_trace(&a.input, a.format, false, 2)?;
    let mut splitter = traces::tasks::TaskSplitter::new(task_pc, a.task_end_pc, a.keys);
    if a.drop_warmup {
        splitter = splitter.drop_warmup();
    }
    let (mut trace, timed, index) = splitter
        .split(&mut input.source)
        .map_err(|e| trace_err(&a.input, e))?;
    if trace.tasks.is_empty() {
        bail!(
            "{}: no instruction fetch of {task_pc:#x}: no task begins (is the address the handler's, as the trace runs it?)",
            a.input.display()
        );
    }
    match &a.arrivals {
        Some(spec) => crate::workers::retime(&mut trace, spec, &lab::InputLog::default())?,
        None if !timed => bail!(
            "{}: the trace has no arrival times; give --arrivals poisson:QPS[:SEED] or log:FILE",
            a.input.display()
        ),
        None => {}
    }
    let meta = json!({
        "source": "numasim trace convert --task-pc",
        "from_format": input.source.format_name(),
        "from_file": a.input.file_name().map(|n| n.to_string_lossy().into_owned()),
        "task_pc": format!("{task_pc:#x}"),
    });
    crate::task_io::write_tasks(&a.output, &trace, &meta)?;
    eprintln!(
        "wrote {} tasks ({} of the trace's {index} records; {} warm-up records before the first) to {}",
        trace.tasks.len(),
        trace.accesses(),
        trace.warmup.len(),
        a.output.display()
    );
    Ok(())
}

/// `trace convert` of a task trace: into the other task form (CSV ↔
/// native), re-timed by `--arrivals` if given.
fn convert_task_trace(a: &ConvertArgs) -> Result<()> {
    if a.to.is_some() {
        bail!(
            "--to does not apply to a task trace: OUTPUT's extension (.csv, .nst, .nst.zst) picks its form"
        );
    }
    let (mut t, form) = crate::task_io::load_tasks(&a.input)?;
    if let Some(spec) = &a.arrivals {
        crate::workers::retime(&mut t, spec, &lab::InputLog::default())?;
    }
    let meta = json!({
        "source": "numasim trace convert",
        "from_format": form.name(),
        "from_file": a.input.file_name().map(|n| n.to_string_lossy().into_owned()),
    });
    crate::task_io::write_tasks(&a.output, &t, &meta)?;
    eprintln!(
        "converted {} tasks ({} accesses; {} → {})",
        t.tasks.len(),
        t.accesses(),
        form.name(),
        a.output.display()
    );
    Ok(())
}

fn convert(a: ConvertArgs) -> Result<()> {
    if let Some(pc) = a.task_pc {
        return convert_tasks(&a, pc);
    }
    if a.format.is_none() && crate::task_io::task_form_of(&a.input).is_some() {
        return convert_task_trace(&a);
    }
    let format = match a.to {
        Some(f) => f,
        None => out_format_of(&a.output)?,
    };
    let mut input = open_trace(&a.input, a.format, false, 2)?;
    let meta = json!({
        "source": "numasim trace convert",
        "from_format": input.source.format_name(),
        "from_file": a.input.file_name().map(|n| n.to_string_lossy().into_owned()),
    });
    let mut progress = Progress::new(input.file_len, "converting");
    let tap = input.tap.clone();
    let n = write_trace(&mut input.source, &a.input, &a.output, format, meta, || {
        progress.update(tap.bytes())
    })?;
    progress.finish();
    eprintln!(
        "converted {n} records ({} → {})",
        input.source.format_name(),
        a.output.display()
    );
    Ok(())
}

/// `trace info` of a task trace: tasks, keys, accesses, arrival span.
fn task_info(a: &InfoArgs) -> Result<()> {
    let (t, form) = crate::task_io::load_tasks(&a.input)?;
    let file = a.input.display().to_string();
    if a.json {
        let v = lab::task_files::info_json(&file, &t, form);
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        print!("{}", lab::task_files::info_text(&file, &t, form));
    }
    Ok(())
}

/// `trace info` of a request log: requests, span, mean and peak QPS.
fn log_info(a: &InfoArgs) -> Result<()> {
    let st = lab::request_logs::read(&a.input, 1.0, &lab::InputLog::default())?.stats();
    if a.json {
        let v = lab::request_logs::info_json(&a.input, &st);
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        print!("{}", lab::request_logs::info_text(&a.input, &st));
    }
    Ok(())
}

fn info(a: InfoArgs) -> Result<()> {
    if !a.line.is_power_of_two() || !a.page.is_power_of_two() {
        bail!("--line and --page must be powers of two");
    }
    if a.format.is_none() && crate::task_io::task_form_of(&a.input).is_some() {
        return task_info(&a);
    }
    if a.format.is_none() && lab::request_logs::sniff(&a.input).is_some() {
        return log_info(&a);
    }
    let mut input = open_trace(&a.input, a.format, true, 2)?;
    let mut progress = Progress::new(input.file_len, "scanning");
    let tap = input.tap.clone();
    let st = traces::stats::scan(&mut input.source, a.line, a.page, || {
        progress.update(tap.bytes())
    })
    .map_err(|e| trace_err(&a.input, e))?;
    progress.finish();
    let fields: Fields = input.source.fields();
    if a.json {
        let v = json!({
            "file": a.input.display().to_string(),
            "format": input.source.format_name(),
            "bytes": input.file_len,
            "checksum": input.tap.checksum(),
            "fields": fields,
            "stats": st,
        });
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(());
    }
    print!(
        "{}",
        st.render(
            &a.input.display().to_string(),
            input.source.format_name(),
            input.file_len,
            &input.tap.checksum().unwrap_or_default()
        )
    );
    Ok(())
}
