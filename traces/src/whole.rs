//! Decoding a trace held whole in memory, on two threads.
//!
//! When the binary can map a trace file ([`Whole`]), a format that splits
//! into independently decodable segments — lackey text into runs of whole
//! lines, the native format into its blocks — is read by a [`WholeReader`]:
//! a helper thread decodes segments ahead, and the consuming thread, instead
//! of waiting when the next segment is not ready, decodes an unclaimed one
//! itself. With two cores the decode work is shared by both while the
//! consumer simulates, and no byte is copied out of the mapping except into
//! the decoded batch. A consumer that reads records in place
//! ([`Batches::allow_in_place`]) is handed an uncompressed native block's
//! checked cores where they lie: no byte is copied at all, and the mapped
//! bytes are released only once the consumer has moved past them.
//!
//! Same results as the streaming readers, by construction: segments are
//! handed out in file order; a segment reports error locations relative to
//! its own start (lines and records; byte offsets are absolute), and the
//! reader shifts them by the lines and records of the segments before it,
//! so the first error in file order is reported exactly as the streaming
//! reader reports it.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;

use crate::error::{Location, Problem, Result, TraceError};
use crate::record::Batch;
use crate::record::Fields;
use crate::source::{Batches, RecordSource};

pub use crate::held::Whole;

/// A format's view of a whole input as segments that decode independently.
pub(crate) trait Segments: Send + Sync {
    /// Number of segments.
    fn count(&self) -> usize;

    /// Decodes segment `k`, appending to `out`; returns the number of text
    /// lines the segment spans (0 for binary formats). Errors name lines and
    /// records relative to the segment's start; byte offsets are absolute.
    fn decode(&self, k: usize, out: &mut Batch) -> Result<u64>;

    /// Byte offset just past segment `k`.
    fn end(&self, k: usize) -> u64;

    /// Checks that follow the last segment (a trailer); errors here carry
    /// absolute locations.
    fn finish(&self) -> Result<()>;

    /// Optional columns the records carry.
    fn fields(&self) -> Fields;

    /// Short name of the format.
    fn format_name(&self) -> &'static str;
}

/// Segments decoded ahead of the consumer at most.
const WINDOW: usize = 8;

/// The consumer wakes a helper waiting for room only once this many
/// segments of the window are free, so the helper decodes several a wake:
/// on a VM, waking a thread on the other vCPU costs tens of µs (an
/// inter-processor interrupt through the hypervisor), and one wake a
/// segment made the default native replay 3.6% slower than
/// `--single-thread` on one host (`docs/performance.md`).
const WAKE_AT_FREE: usize = WINDOW / 2;

struct State {
    ready: BTreeMap<usize, Result<(Batch, u64)>>,
    spare: Vec<Batch>,
    /// The segment the consumer waits for next.
    consumer_at: usize,
    stop: bool,
    /// The helper thread ended without finishing its segment (a panic).
    helper_lost: bool,
}

struct Shared {
    segs: Box<dyn Segments>,
    whole: Arc<dyn Whole>,
    /// Lowest segment nobody has claimed.
    claim: AtomicUsize,
    /// The consumer takes records in place ([`Batches::allow_in_place`]).
    in_place: AtomicBool,
    state: Mutex<State>,
    cv: Condvar,
}

fn lock(m: &Mutex<State>) -> MutexGuard<'_, State> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Shared {
    /// Claims the lowest unclaimed segment if it lies within the window
    /// that starts at segment `at`.
    fn claim(&self, at: usize) -> Option<usize> {
        let mut k = self.claim.load(Ordering::Acquire);
        loop {
            if k >= self.segs.count() || k >= at + WINDOW {
                return None;
            }
            match self
                .claim
                .compare_exchange_weak(k, k + 1, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return Some(k),
                Err(now) => k = now,
            }
        }
    }

    /// Decodes segment `k` into a spare batch; first hands back the bytes
    /// of the segments the consumer already has (on the decoding thread,
    /// which is the one with time to spare).
    fn decode(&self, k: usize) -> Result<(Batch, u64)> {
        let (spare, at) = {
            let mut st = lock(&self.state);
            (st.spare.pop(), st.consumer_at)
        };
        // The consumer is done with segment at − 2 (it has taken at − 1);
        // copied out, it is done with at − 1's bytes too.
        let in_place = self.in_place.load(Ordering::Relaxed);
        let keep = if in_place { 2 } else { 1 };
        if at >= keep {
            self.whole.release(self.segs.end(at - keep));
        }
        let mut b = spare.unwrap_or_else(|| Batch::new(self.segs.fields()));
        b.clear();
        b.allow_in_place(in_place);
        let lines = self.segs.decode(k, &mut b)?;
        Ok((b, lines))
    }
}

/// Marks the helper as lost if it unwinds, so the consumer does not wait
/// forever for a segment it claimed.
struct HelperGuard<'a>(&'a Shared);

impl Drop for HelperGuard<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            lock(&self.0.state).helper_lost = true;
            self.0.cv.notify_all();
        }
    }
}

fn helper(sh: Arc<Shared>) {
    let _guard = HelperGuard(&sh);
    loop {
        let k = {
            let mut st = lock(&sh.state);
            loop {
                if st.stop {
                    return;
                }
                if let Some(k) = sh.claim(st.consumer_at) {
                    break k;
                }
                if sh.claim.load(Ordering::Acquire) >= sh.segs.count() {
                    return;
                }
                st = sh.cv.wait(st).unwrap_or_else(|e| e.into_inner());
            }
        };
        let r = sh.decode(k);
        let failed = r.is_err();
        lock(&sh.state).ready.insert(k, r);
        sh.cv.notify_all();
        if failed {
            return;
        }
    }
}

/// Reads a whole in-memory trace segment by segment, decoding on a helper
/// thread and on the caller's; batches come out in file order.
pub struct WholeReader {
    shared: Arc<Shared>,
    helper: Option<JoinHandle<()>>,
    next: usize,
    lines_before: u64,
    records_before: u64,
    finished: bool,
}

impl WholeReader {
    /// A reader over `segs`; `threads` = 1 decodes on the caller's thread
    /// only, 2 adds the helper.
    pub(crate) fn new(segs: Box<dyn Segments>, whole: Arc<dyn Whole>, threads: usize) -> Self {
        let shared = Arc::new(Shared {
            segs,
            whole,
            claim: AtomicUsize::new(0),
            in_place: AtomicBool::new(false),
            state: Mutex::new(State {
                ready: BTreeMap::new(),
                spare: Vec::new(),
                consumer_at: 0,
                stop: false,
                helper_lost: false,
            }),
            cv: Condvar::new(),
        });
        let helper = if threads > 1 && shared.segs.count() > 1 {
            let sh = shared.clone();
            std::thread::Builder::new()
                .name("numasim-decode".into())
                .spawn(move || helper(sh))
                .ok()
        } else {
            None
        };
        WholeReader {
            shared,
            helper,
            next: 0,
            lines_before: 0,
            records_before: 0,
            finished: false,
        }
    }

    /// Segment `k`'s result: taken from the helper, or decoded here — this
    /// one, or while the helper works on it, a later one.
    fn take(&mut self, k: usize) -> Result<(Batch, u64)> {
        let sh = &self.shared;
        let mut st = lock(&sh.state);
        loop {
            if let Some(r) = st.ready.remove(&k) {
                return r;
            }
            if let Some(j) = sh.claim(k) {
                drop(st);
                let r = sh.decode(j);
                if j == k {
                    return r;
                }
                st = lock(&sh.state);
                st.ready.insert(j, r);
                continue;
            }
            if st.helper_lost {
                return Err(TraceError::at_offset(
                    sh.segs.end(k.saturating_sub(1)),
                    self.records_before,
                    Problem::DecoderLost,
                ));
            }
            st = sh.cv.wait(st).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Moves a segment-relative error to its place in the whole input.
    fn shift(&self, mut e: TraceError) -> TraceError {
        e.location = match e.location {
            Location::Line { line, record } => Location::Line {
                line: line + self.lines_before,
                record: record + self.records_before,
            },
            Location::Offset { offset, record } => Location::Offset {
                offset,
                record: record + self.records_before,
            },
            Location::Record { record } => Location::Record {
                record: record + self.records_before,
            },
        };
        e
    }

    fn stop(&mut self) {
        lock(&self.shared.state).stop = true;
        self.shared.cv.notify_all();
        if let Some(h) = self.helper.take() {
            let _ = h.join();
        }
    }
}

impl Batches for WholeReader {
    fn next_batch(&mut self) -> Option<Result<Batch>> {
        loop {
            if self.finished {
                return None;
            }
            let k = self.next;
            if k >= self.shared.segs.count() {
                self.finished = true;
                self.stop();
                let len = self.shared.whole.bytes().len() as u64;
                self.shared.whole.consumed(len);
                return self.shared.segs.finish().err().map(Err);
            }
            let r = self.take(k);
            self.next += 1;
            lock(&self.shared.state).consumer_at = self.next;
            let claimed = self.shared.claim.load(Ordering::Acquire);
            if claimed + WAKE_AT_FREE <= self.next + WINDOW {
                self.shared.cv.notify_all();
            }
            match r {
                Err(e) => {
                    self.finished = true;
                    self.stop();
                    return Some(Err(self.shift(e)));
                }
                Ok((b, lines)) => {
                    self.lines_before += lines;
                    self.records_before += b.len() as u64;
                    self.shared.whole.consumed(self.shared.segs.end(k));
                    if b.is_empty() {
                        self.recycle(b);
                        continue;
                    }
                    return Some(Ok(b));
                }
            }
        }
    }

    fn recycle(&mut self, b: Batch) {
        lock(&self.shared.state).spare.push(b);
    }

    fn allow_in_place(&mut self) {
        self.shared.in_place.store(true, Ordering::Relaxed);
    }
}

impl RecordSource for WholeReader {
    /// Appends the next segment's records (a whole segment, which may be
    /// more than [`crate::BATCH`]).
    fn fill(&mut self, out: &mut Batch) -> Result<usize> {
        match self.next_batch() {
            None => Ok(0),
            Some(Err(e)) => Err(e),
            Some(Ok(mut b)) => {
                let n = b.len();
                // Records in place are copied: a `fill` caller reads `acc`.
                if out.is_empty() && out.fields() == b.fields() && b.in_place().is_none() {
                    std::mem::swap(out, &mut b);
                } else {
                    out.append(&b);
                }
                self.recycle(b);
                Ok(n)
            }
        }
    }

    fn fields(&self) -> Fields {
        self.shared.segs.fields()
    }

    fn format_name(&self) -> &'static str {
        self.shared.segs.format_name()
    }
}

impl Drop for WholeReader {
    fn drop(&mut self) {
        self.stop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lackey::LackeyReader;
    use crate::lackey::whole::LackeySegments;
    use crate::native::tests::{ALL_COLUMNS, sample, write_blocks};
    use crate::native::whole::NativeSegments;
    use crate::native::{Codec, NativeReader};
    use crate::record::Record;
    use crate::source::collect_all;
    use crate::workload::splitmix;

    /// Every record of a source, or its error as the user sees it.
    fn outcome(src: Result<&mut dyn RecordSource>) -> std::result::Result<Vec<Record>, String> {
        src.and_then(collect_all).map_err(|e| e.to_string())
    }

    /// Records `consumed` calls; they must rise and end at the length.
    struct Watched(Vec<u8>, Mutex<Vec<u64>>);

    impl Whole for Watched {
        fn bytes(&self) -> &[u8] {
            &self.0
        }
        fn consumed(&self, upto: u64) {
            lock_vec(&self.1).push(upto);
        }
    }

    fn lock_vec(m: &Mutex<Vec<u64>>) -> MutexGuard<'_, Vec<u64>> {
        m.lock().unwrap()
    }

    fn lackey_whole(
        text: &[u8],
        segment: usize,
        threads: usize,
    ) -> std::result::Result<Vec<Record>, String> {
        let w = Arc::new(Watched(text.to_vec(), Mutex::new(Vec::new())));
        let segs = Box::new(LackeySegments::new(w.clone(), segment));
        let mut r = WholeReader::new(segs, w.clone(), threads);
        let got = outcome(Ok(&mut r));
        drop(r);
        let calls = lock_vec(&w.1).clone();
        assert!(calls.windows(2).all(|p| p[0] <= p[1]), "{calls:?}");
        if got.is_ok() {
            assert_eq!(calls.last(), Some(&(text.len() as u64)));
        }
        got
    }

    /// Lackey text exercising every path of the parser: all ops, 1- to
    /// 16-digit addresses in both cases, 1- to 5-digit sizes, banner and
    /// blank lines, CRLF, extra spaces, and (optionally) no final newline.
    fn lackey_text(lines: usize, seed: u64, final_newline: bool) -> Vec<u8> {
        let mut s = seed;
        let mut t = Vec::new();
        for i in 0..lines {
            let r = splitmix(&mut s);
            let op = ["I  ", " L ", " S ", " M "][(r & 3) as usize];
            let digits = 1 + ((r >> 2) % 16) as usize;
            let addr = splitmix(&mut s) >> (64 - 4 * digits);
            let size = 1 + (r >> 8) % [9, 99, 999, 9999, 65535][((r >> 30) % 5) as usize];
            let a = if r >> 40 & 1 == 1 {
                format!("{addr:0digits$X}")
            } else {
                format!("{addr:0digits$x}")
            };
            match (r >> 44) % 40 {
                0 => t.extend_from_slice(format!("==1234== banner {i}\n").as_bytes()),
                1 => t.push(b'\n'),
                2 => t.extend_from_slice(format!("{op}{a},{size}\r\n").as_bytes()),
                3 => t.extend_from_slice(format!("{op}   {a},{size}\n").as_bytes()),
                _ => t.extend_from_slice(format!("{op}{a},{size}\n").as_bytes()),
            }
        }
        if !final_newline {
            t.extend_from_slice(b"I  401000,3");
        }
        t
    }

    #[test]
    fn lackey_segments_give_the_streaming_records() {
        for (seed, final_newline) in [(1, true), (2, false)] {
            let text = lackey_text(5000, seed, final_newline);
            let want = outcome(Ok(&mut LackeyReader::new(&text[..]))).unwrap();
            assert!(want.len() > 4500);
            for segment in [1, 7, 64, 4096, crate::lackey::whole::SEGMENT] {
                for threads in [1, 2] {
                    let got = lackey_whole(&text, segment, threads);
                    assert_eq!(
                        got.as_ref(),
                        Ok(&want),
                        "segment {segment}, threads {threads}"
                    );
                }
            }
        }
    }

    #[test]
    fn lackey_segments_report_errors_where_the_stream_does() {
        let text = lackey_text(3000, 3, true);
        let bad: [&[u8]; 5] = [
            b" L 12g4,8\n",
            b" X 1234,8\n",
            b"I  1234,0\n",
            b"I  1234,99999\n",
            b"garbage\n",
        ];
        for (i, line) in bad.iter().enumerate() {
            for cut in [0, 17, 20_000, 41_000] {
                // Insert at the line boundary at or after `cut`.
                let at = if cut == 0 {
                    0
                } else {
                    cut + memchr::memchr(b'\n', &text[cut - 1..]).unwrap()
                };
                let mut t = text[..at].to_vec();
                t.extend_from_slice(line);
                t.extend_from_slice(&text[at..]);
                let want = outcome(Ok(&mut LackeyReader::new(&t[..]))).unwrap_err();
                for segment in [7, 4096] {
                    let got = lackey_whole(&t, segment, 2).unwrap_err();
                    assert_eq!(got, want, "bad line {i} at {at}, segment {segment}");
                }
            }
        }
    }

    fn native_whole(bytes: &[u8], threads: usize) -> std::result::Result<Vec<Record>, String> {
        let w = Arc::new(Watched(bytes.to_vec(), Mutex::new(Vec::new())));
        match NativeSegments::new(w.clone()) {
            Err(e) => Err(e.to_string()),
            Ok(segs) => outcome(Ok(&mut WholeReader::new(Box::new(segs), w, threads))),
        }
    }

    /// Keeps the highest byte released so far.
    struct Released(Vec<u8>, Mutex<u64>);

    impl Whole for Released {
        fn bytes(&self) -> &[u8] {
            &self.0
        }
        fn release(&self, upto: u64) {
            let mut top = self.1.lock().unwrap();
            *top = (*top).max(upto);
        }
    }

    /// [`native_whole`] for a consumer that takes records in place; also
    /// how many batches came in place and how many came. With `hold`, it
    /// holds each of the first batches in place for 2 ms (so that a helper
    /// thread decodes ahead) and checks that none of its bytes is released.
    fn native_in_place(
        bytes: &[u8],
        threads: usize,
        hold: bool,
    ) -> (std::result::Result<Vec<Record>, String>, usize, usize) {
        let w = Arc::new(Released(bytes.to_vec(), Mutex::new(0)));
        let segs = match NativeSegments::new(w.clone()) {
            Err(e) => return (Err(e.to_string()), 0, 0),
            Ok(segs) => segs,
        };
        let mut r = WholeReader::new(Box::new(segs), w.clone(), threads);
        r.allow_in_place();
        let (mut all, mut placed, mut batches) = (Vec::new(), 0, 0);
        while let Some(b) = r.next_batch() {
            match b {
                Err(e) => return (Err(e.to_string()), placed, batches),
                Ok(b) => {
                    batches += 1;
                    if let Some(cores) = b.in_place() {
                        placed += 1;
                        let at = cores.as_ptr() as u64 - w.0.as_ptr() as u64;
                        let polls = if hold && placed <= 12 { 200 } else { 0 };
                        for _ in 0..polls {
                            let top = *w.1.lock().unwrap();
                            assert!(top <= at, "released up to {top} while holding {at}..");
                            std::thread::sleep(std::time::Duration::from_micros(10));
                        }
                    }
                    all.extend(b.iter());
                    r.recycle(b);
                }
            }
        }
        (Ok(all), placed, batches)
    }

    fn native_stream(bytes: &[u8]) -> std::result::Result<Vec<Record>, String> {
        match NativeReader::new(bytes) {
            Err(e) => Err(e.to_string()),
            Ok(mut r) => outcome(Ok(&mut r)),
        }
    }

    #[test]
    fn native_blocks_give_the_streaming_records() {
        let all = sample(50_000);
        let plain: Vec<Record> = all
            .iter()
            .map(|r| Record::access(r.thread, r.kind, r.addr, r.size))
            .collect();
        for fields in [Fields::default(), ALL_COLUMNS] {
            let recs = if fields.pc { &all } else { &plain };
            for codec in [Codec::None, Codec::Zstd] {
                for block in [1000, 65536] {
                    let bytes = write_blocks(recs, fields, codec, block);
                    let want = native_stream(&bytes).unwrap();
                    assert_eq!(want.len(), recs.len());
                    for threads in [1, 2] {
                        assert_eq!(native_whole(&bytes, threads).as_ref(), Ok(&want));
                        // In place where the block is stored raw and has
                        // no column besides the cores; copied elsewhere.
                        let (got, placed, batches) = native_in_place(&bytes, threads, true);
                        assert_eq!(got.as_ref(), Ok(&want));
                        let raw = codec == Codec::None && fields == Fields::default();
                        assert_eq!(placed > 0, raw, "{codec:?} {fields:?} block {block}");
                        // With no helper, every batch is asked for after
                        // the consumer allowed it: all in place.
                        if raw && threads == 1 {
                            assert_eq!(placed, batches);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn native_blocks_fail_as_the_stream_does_on_every_flipped_byte_and_cut() {
        let recs = sample(300);
        let fields = ALL_COLUMNS;
        for codec in [Codec::None, Codec::Zstd] {
            let bytes = write_blocks(&recs, fields, codec, 64);
            for i in 0..bytes.len() {
                for bit in [0x01, 0x80] {
                    let mut b = bytes.clone();
                    b[i] ^= bit;
                    assert_eq!(
                        native_whole(&b, 2),
                        native_stream(&b),
                        "{codec:?}: byte {i} ^ {bit:#x}"
                    );
                }
            }
            for cut in 0..bytes.len() {
                let b = &bytes[..cut];
                let want = native_stream(b);
                assert!(want.is_err());
                assert_eq!(native_whole(b, 2), want, "{codec:?}: cut at {cut}");
            }
            let mut b = bytes.clone();
            b.push(0);
            assert_eq!(native_whole(&b, 2), native_stream(&b));
        }
    }

    #[test]
    fn records_in_place_fail_as_the_stream_does_on_every_flipped_byte_and_cut() {
        let recs: Vec<Record> = sample(300)
            .iter()
            .map(|r| Record::access(r.thread, r.kind, r.addr, r.size))
            .collect();
        let bytes = write_blocks(&recs, Fields::default(), Codec::None, 64);
        let (_, placed, batches) = native_in_place(&bytes, 1, false);
        assert!(placed == batches && batches > 1);
        for i in 0..bytes.len() {
            for bit in [0x01, 0x04, 0x80] {
                let mut b = bytes.clone();
                b[i] ^= bit;
                let want = native_stream(&b);
                for threads in [1, 2] {
                    let got = native_in_place(&b, threads, false).0;
                    assert_eq!(got, want, "byte {i} ^ {bit:#x}, threads {threads}");
                }
            }
        }
        for cut in (0..bytes.len()).step_by(7) {
            let b = &bytes[..cut];
            assert_eq!(
                native_in_place(b, 2, false).0,
                native_stream(b),
                "cut at {cut}"
            );
        }
        // A bad core under a matching checksum, in one 7000-record block
        // (several steps of the check): a record error, as in the stream.
        let recs: Vec<Record> = sample(7000)
            .iter()
            .map(|r| Record::access(r.thread, r.kind, r.addr, r.size))
            .collect();
        let bytes = write_blocks(&recs, Fields::default(), Codec::None, 7000);
        let payload = bytes.len() - 8 - 24 - 7000 * 16;
        let crc_at = payload - 24 + 16;
        for (bad, set, problem) in [
            (0, &[(14, 9)][..], "unknown op"),
            (2047, &[(14, 4)][..], "unknown op"),
            (2048, &[(12, 0), (13, 0)][..], "zero access size"),
            (6999, &[(15, 0x80)][..], "bad record flags 0x80"),
        ] {
            let mut b = bytes.clone();
            for &(byte, value) in set {
                b[payload + bad * 16 + byte] = value;
            }
            let crc = crate::native::block_checksum(&b[payload..payload + 7000 * 16]);
            b[crc_at..crc_at + 4].copy_from_slice(&crc.to_le_bytes());
            let want = native_stream(&b).unwrap_err();
            assert!(
                want.contains(&format!("record {bad}: ")) && want.contains(problem),
                "{want}"
            );
            assert_eq!(native_in_place(&b, 2, false).0.unwrap_err(), want);
        }
    }

    #[test]
    fn a_bad_record_deep_in_a_large_block_and_a_checksum_error_rank_as_in_the_stream() {
        // One block of 7000 records (several decode steps), PC and time columns.
        let recs = sample(7000);
        let fields = ALL_COLUMNS;
        let bytes = write_blocks(&recs, fields, Codec::None, 7000);
        let payload = bytes.len() - 8 - 24 - 7000 * 32;
        let crc_at = payload - 24 + 16;
        let fix_crc = |b: &mut Vec<u8>| {
            let crc = crate::native::block_checksum(&b[payload..payload + 7000 * 32]);
            b[crc_at..crc_at + 4].copy_from_slice(&crc.to_le_bytes());
        };
        for bad in [0, 2047, 2048, 5000, 6999] {
            // A kind code of 9 with a checksum that matches: a record error.
            let mut b = bytes.clone();
            b[payload + bad * 16 + 14] = 9;
            fix_crc(&mut b);
            let want = native_stream(&b).unwrap_err();
            assert!(
                want.contains(&format!("record {bad}: unknown op")),
                "{want}"
            );
            assert_eq!(native_whole(&b, 2).unwrap_err(), want);
            // The same plus a flipped PC byte after the cores: the checksum wins.
            b[payload + 7000 * 16 + 3] ^= 1;
            let want = native_stream(&b).unwrap_err();
            assert!(want.contains("checksum mismatch in block 0"), "{want}");
            assert_eq!(native_whole(&b, 2).unwrap_err(), want);
        }
    }

    #[test]
    fn validity_scan_agrees_with_the_per_field_check() {
        // Every kind and flag byte, sizes 0 and 1, under each column set.
        for allowed in [crate::record::FLAG_MASK, crate::record::FLAG_PC, 0] {
            for kind in 0..=255u8 {
                for flags in 0..=255u8 {
                    for size in [0u16, 1, 0x100] {
                        let mut c = [0u8; 16];
                        c[12..14].copy_from_slice(&size.to_le_bytes());
                        c[14] = kind;
                        c[15] = flags;
                        let slow = crate::native::bad_record(&c, allowed);
                        let fast = crate::native::first_bad(&c, allowed).is_some();
                        assert_eq!(fast, slow, "kind {kind} flags {flags:#x} size {size}");
                    }
                }
            }
        }
    }
}
