//! A progress bar on stderr for long runs: it appears only after a run has
//! taken more than a second and only when stderr is a terminal.
//! Wall-clock reads live here, in the binary, never in the model.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

const DELAY: Duration = Duration::from_millis(1000);

pub struct Progress {
    start: Instant,
    total: u64,
    bar: Option<ProgressBar>,
    enabled: bool,
    label: &'static str,
}

impl Progress {
    /// A progress tracker over `total` units (bytes, or records).
    pub fn new(total: u64, label: &'static str) -> Progress {
        Progress {
            start: Instant::now(),
            total,
            bar: None,
            enabled: std::io::stderr().is_terminal(),
            label,
        }
    }

    /// Reports `done` units; cheap enough to call once per batch.
    pub fn update(&mut self, done: u64) {
        if !self.enabled {
            return;
        }
        if self.bar.is_none() {
            if self.start.elapsed() < DELAY {
                return;
            }
            let bar = ProgressBar::new(self.total.max(1));
            bar.set_style(
                ProgressStyle::with_template(
                    "{msg} [{bar:40}] {bytes}/{total_bytes} ({bytes_per_sec}, eta {eta})",
                )
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> "),
            );
            bar.set_message(self.label);
            self.bar = Some(bar);
        }
        if let Some(b) = &self.bar {
            b.set_position(done.min(self.total));
        }
    }

    /// Removes the bar.
    pub fn finish(&mut self) {
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}
