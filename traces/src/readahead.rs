//! Decoding on a second thread while the consumer simulates.
//!
//! [`ReadAhead`] moves a [`RecordSource`] to a background thread that fills
//! batches and sends them over a bounded channel; empty batches come back to
//! be refilled, so steady state allocates nothing. Order is preserved, so
//! results are identical with or without read-ahead.

use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread::JoinHandle;

use crate::error::Result;
use crate::record::Batch;
use crate::source::{Batches, RecordSource};

/// Batches in flight between the decoder and the consumer.
const DEPTH: usize = 3;
/// Source fills per batch handed over: a handoff wakes the other thread
/// (a futex call each way), so hand over ~64K records at a time.
const FILLS_PER_HANDOFF: usize = 16;

/// A background decoder.
pub struct ReadAhead {
    full: Receiver<Result<Batch>>,
    empty: SyncSender<Batch>,
    handle: Option<JoinHandle<()>>,
}

impl ReadAhead {
    /// Starts decoding `src` on a new thread.
    pub fn spawn(mut src: Box<dyn RecordSource>) -> ReadAhead {
        let (full_tx, full) = sync_channel::<Result<Batch>>(DEPTH);
        let (empty, empty_rx) = sync_channel::<Batch>(DEPTH + 2);
        for _ in 0..DEPTH + 1 {
            let _ = empty.send(Batch::new(src.fields()));
        }
        let handle = std::thread::Builder::new()
            .name("numasim-decode".into())
            .spawn(move || {
                'outer: while let Ok(mut buf) = empty_rx.recv() {
                    buf.clear();
                    for _ in 0..FILLS_PER_HANDOFF {
                        match src.fill(&mut buf) {
                            Ok(0) => {
                                if !buf.is_empty() {
                                    let _ = full_tx.send(Ok(buf));
                                }
                                break 'outer;
                            }
                            Ok(_) => {}
                            Err(e) => {
                                let _ = full_tx.send(Err(e));
                                break 'outer;
                            }
                        }
                    }
                    if full_tx.send(Ok(buf)).is_err() {
                        break;
                    }
                }
            })
            .expect("spawning the decoder thread");
        ReadAhead {
            full,
            empty,
            handle: Some(handle),
        }
    }

    /// The next batch, `None` at end of stream.
    pub fn next_batch(&mut self) -> Option<Result<Batch>> {
        self.full.recv().ok()
    }

    /// Returns a consumed batch for reuse.
    pub fn recycle(&self, buf: Batch) {
        let _ = self.empty.send(buf);
    }
}

impl Batches for ReadAhead {
    fn next_batch(&mut self) -> Option<Result<Batch>> {
        ReadAhead::next_batch(self)
    }

    fn recycle(&mut self, b: Batch) {
        ReadAhead::recycle(self, b)
    }
}

impl Drop for ReadAhead {
    fn drop(&mut self) {
        // Unblock the decoder: drain what it sent, drop our sender ends.
        while self.full.try_recv().is_ok() {}
        let (dead, _) = sync_channel(0);
        self.empty = dead;
        while self.full.recv().is_ok() {}
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Fields;
    use crate::record::{Kind, Record};
    use crate::source::VecSource;

    #[test]
    fn preserves_order_and_ends() {
        let recs: Vec<Record> = (0..20_000u64)
            .map(|i| Record::access(0, Kind::Load, i, 1))
            .collect();
        let mut ra = ReadAhead::spawn(Box::new(VecSource::new(recs.clone(), Fields::default())));
        let mut got = Vec::new();
        while let Some(b) = ra.next_batch() {
            let b = b.unwrap();
            got.extend(b.iter());
            ra.recycle(b);
        }
        assert_eq!(got, recs);
    }

    #[test]
    fn early_drop_does_not_hang() {
        let recs: Vec<Record> = (0..100_000u64)
            .map(|i| Record::access(0, Kind::Load, i, 1))
            .collect();
        let mut ra = ReadAhead::spawn(Box::new(VecSource::new(recs, Fields::default())));
        let _ = ra.next_batch();
        drop(ra);
    }
}
