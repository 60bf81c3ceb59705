//! The checkpoint file format: a timing run's whole state after its first
//! N records, so that a later run resumes there (TurboSMARTS' stored warm
//! state) and gives byte-identical results to the uninterrupted run.
//!
//! **Layout.** Little-endian, in this order:
//!
//! | bytes | field |
//! |---|---|
//! | 8 | magic `NUMACKPT` |
//! | 4 | format version ([`VERSION`]) |
//! | 8 | records fed before the checkpoint |
//! | 8 | xxh3-64 of those records ([`TraceHash`]) |
//! | 8 | xxh3-64 of the machine description |
//! | 4 + n | the run's description (placement, prefetchers, configuration; UTF-8) |
//! | 8 + n | the engine's state: bincode 2 (standard configuration) of serde types |
//! | 8 | xxh3-64 of every byte before it |
//!
//! The run's description is kept in clear so that a mismatch names what
//! differs. Any change of the state's types changes [`VERSION`].
//!
//! Policies keep their own state (`Placement::save_state` in the policy
//! module): they encode it with [`encode`] and decode it with [`decode`].

use serde::Serialize;
use serde::de::DeserializeOwned;
use traces::Batch;

/// File magic.
pub const MAGIC: &[u8; 8] = b"NUMACKPT";

/// Format version: bumped whenever the layout or any state type changes.
pub const VERSION: u32 = 5;

/// Most bytes a checkpoint's run description may have.
const MAX_DESCRIPTION: u64 = 1 << 20;

/// A checkpoint that cannot be read or does not belong to this run.
#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    #[error("not a numasim checkpoint (no NUMACKPT magic at byte 0)")]
    Magic,
    #[error("checkpoint format version {found}; this numasim reads version {VERSION}")]
    Version { found: u32 },
    #[error("truncated at byte {at}: {what} needs {need} more bytes, {have} left")]
    Truncated {
        at: usize,
        what: &'static str,
        need: u64,
        have: usize,
    },
    #[error(
        "checksum mismatch (stored {stored:016x}, computed {computed:016x}): the file is corrupted or truncated"
    )]
    Checksum { stored: u64, computed: u64 },
    #[error("{trailing} bytes between the state and the checksum")]
    Trailing { trailing: usize },
    #[error("taken on another machine (machine checksum {saved:016x}, this run's {this:016x})")]
    Machine { saved: u64, this: u64 },
    #[error("taken by another run: it was `{saved}`, this run is `{this}`")]
    Run { saved: String, this: String },
    #[error(
        "taken on another trace: its first {records} records hash to {saved:016x}, this trace's to {this:016x}"
    )]
    Trace { records: u64, saved: u64, this: u64 },
    #[error("taken after record {records}, but this trace has only {found}")]
    TraceTooShort { records: u64, found: u64 },
    #[error("the state does not decode: {0}")]
    Decode(String),
    #[error("the state does not decode: {bytes} bytes left over")]
    Leftover { bytes: usize },
    #[error("a run description of {len} bytes (at most {MAX_DESCRIPTION})")]
    DescriptionTooLong { len: u64 },
    #[error("the run description is not UTF-8")]
    NotUtf8,
    #[error("the state holds {saved} {what}, this engine has {this}")]
    Shape {
        what: &'static str,
        saved: usize,
        this: usize,
    },
    #[error("the state holds {what}")]
    Malformed { what: &'static str },
    #[error("the state is of prefetcher {saved}, this run attaches {this} there")]
    Prefetcher { saved: String, this: String },
    #[error("the {0} policy's state does not decode")]
    PolicyState(String),
}

/// Encodes a policy's or the engine's state (bincode 2, standard configuration).
pub fn encode<T: Serialize>(state: &T) -> Vec<u8> {
    bincode::serde::encode_to_vec(state, bincode::config::standard())
        .expect("in-memory state always encodes")
}

/// Decodes what [`encode`] wrote; every byte must be used. Memory stays
/// proportional to `bytes`: serde grows a sequence element by element
/// (never trusting a length field for more than a small reservation), and
/// every element takes at least one byte of input.
pub fn decode<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, CheckpointError> {
    let (t, used) = bincode::serde::decode_from_slice(bytes, bincode::config::standard())
        .map_err(|e| CheckpointError::Decode(e.to_string()))?;
    if used != bytes.len() {
        return Err(CheckpointError::Leftover {
            bytes: bytes.len() - used,
        });
    }
    Ok(t)
}

/// A restored table with `saved` entries where this run has `this` (one
/// per core, node, ...): refused unless they are equal.
pub fn same_len(what: &'static str, saved: usize, this: usize) -> Result<(), CheckpointError> {
    if saved == this {
        Ok(())
    } else {
        Err(CheckpointError::Shape { what, saved, this })
    }
}

/// What a checkpoint says about where it was taken.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    /// Records fed to the engine before it.
    pub records: u64,
    /// [`TraceHash`] of those records.
    pub trace: u64,
    /// [`machine_hash`] of the machine.
    pub machine: u64,
    /// The run's description (`Engine::run_description`).
    pub run: String,
}

impl Header {
    /// Refuses a checkpoint taken on another machine or by another run.
    pub fn check(&self, machine: u64, run: &str) -> Result<(), CheckpointError> {
        if self.machine != machine {
            return Err(CheckpointError::Machine {
                saved: self.machine,
                this: machine,
            });
        }
        if self.run != run {
            return Err(CheckpointError::Run {
                saved: self.run.clone(),
                this: run.to_string(),
            });
        }
        Ok(())
    }
}

/// The checksum of a machine description.
pub fn machine_hash(m: &crate::machine::Machine) -> u64 {
    // `Debug` of plain data is deterministic and needs no JSON dependency.
    // A machine with the default `frames` hashes as before the field
    // existed, so its checkpoints and part files stay valid.
    let text = format!("{:?}", m.spec);
    let ps = m.spec.page_size;
    let text = text.replacen(
        &format!(", page_size: {ps}, frames: Identity, "),
        &format!(", page_size: {ps}, "),
        1,
    );
    xxhash_rust::xxh3::xxh3_64(text.as_bytes())
}

/// A running hash of the records fed to an engine: every field of every
/// record (address, thread, size, kind, flags, PC and time columns).
#[derive(Clone, Default)]
pub struct TraceHash {
    h: xxhash_rust::xxh3::Xxh3,
}

impl TraceHash {
    /// Adds records `range` of `batch`.
    pub fn add(&mut self, batch: &Batch, range: std::ops::Range<usize>) {
        for i in range {
            let a = &batch.acc[i];
            let pc = batch.pc_of(i).unwrap_or(u64::MAX);
            let time = batch.time.get(i).copied().unwrap_or(u64::MAX);
            let mut rec = [0u8; 32];
            rec[..8].copy_from_slice(&a.addr.to_le_bytes());
            rec[8..12].copy_from_slice(&a.thread.to_le_bytes());
            rec[12..14].copy_from_slice(&a.size.to_le_bytes());
            rec[14] = a.kind as u8;
            rec[15] = a.flags;
            rec[16..24].copy_from_slice(&pc.to_le_bytes());
            rec[24..].copy_from_slice(&time.to_le_bytes());
            self.h.update(&rec);
        }
    }

    pub fn digest(&self) -> u64 {
        self.h.digest()
    }
}

/// The checkpoint file's bytes for `header` and the engine's `state`.
pub fn write(header: &Header, state: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(state.len() + header.run.len() + 64);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&header.records.to_le_bytes());
    out.extend_from_slice(&header.trace.to_le_bytes());
    out.extend_from_slice(&header.machine.to_le_bytes());
    out.extend_from_slice(&(header.run.len() as u32).to_le_bytes());
    out.extend_from_slice(header.run.as_bytes());
    out.extend_from_slice(&(state.len() as u64).to_le_bytes());
    out.extend_from_slice(state);
    let sum = xxhash_rust::xxh3::xxh3_64(&out);
    out.extend_from_slice(&sum.to_le_bytes());
    out
}

/// A cursor that names where a short read happened.
struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: u64, what: &'static str) -> Result<&'a [u8], CheckpointError> {
        let have = self.b.len() - self.at;
        if n > have as u64 {
            return Err(CheckpointError::Truncated {
                at: self.at,
                what,
                need: n,
                have,
            });
        }
        let s = &self.b[self.at..self.at + n as usize];
        self.at += n as usize;
        Ok(s)
    }

    fn u64(&mut self, what: &'static str) -> Result<u64, CheckpointError> {
        Ok(u64::from_le_bytes(
            self.take(8, what)?.try_into().expect("8 bytes"),
        ))
    }

    fn u32(&mut self, what: &'static str) -> Result<u32, CheckpointError> {
        Ok(u32::from_le_bytes(
            self.take(4, what)?.try_into().expect("4 bytes"),
        ))
    }
}

/// Reads a checkpoint file's bytes: its header and the engine's state,
/// after checking the magic, the version and the checksum.
pub fn read(bytes: &[u8]) -> Result<(Header, &[u8]), CheckpointError> {
    if bytes.len() < MAGIC.len() || &bytes[..MAGIC.len()] != MAGIC {
        return Err(CheckpointError::Magic);
    }
    if bytes.len() < MAGIC.len() + 8 {
        return Err(CheckpointError::Truncated {
            at: MAGIC.len(),
            what: "the checksum",
            need: 8,
            have: bytes.len() - MAGIC.len(),
        });
    }
    let (body, sum) = bytes.split_at(bytes.len() - 8);
    let stored = u64::from_le_bytes(sum.try_into().expect("8 bytes"));
    let computed = xxhash_rust::xxh3::xxh3_64(body);
    if stored != computed {
        return Err(CheckpointError::Checksum { stored, computed });
    }
    let mut r = Reader { b: body, at: 8 };
    let found = r.u32("the version")?;
    if found != VERSION {
        return Err(CheckpointError::Version { found });
    }
    let records = r.u64("the record count")?;
    let trace = r.u64("the trace checksum")?;
    let machine = r.u64("the machine checksum")?;
    let run_len = r.u32("the run description's length")? as u64;
    if run_len > MAX_DESCRIPTION {
        return Err(CheckpointError::DescriptionTooLong { len: run_len });
    }
    let run = r.take(run_len, "the run description")?;
    let state_len = r.u64("the state's length")?;
    let state = r.take(state_len, "the state")?;
    if r.at != body.len() {
        return Err(CheckpointError::Trailing {
            trailing: body.len() - r.at,
        });
    }
    let run = String::from_utf8(run.to_vec()).map_err(|_| CheckpointError::NotUtf8)?;
    Ok((
        Header {
            records,
            trace,
            machine,
            run,
        },
        state,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header() -> Header {
        Header {
            records: 12345,
            trace: 0xDEAD_BEEF,
            machine: 42,
            run: "placement first-touch; prefetch []".into(),
        }
    }

    /// A file with a valid checksum over `body` (as a later or earlier
    /// numasim would write it).
    fn sealed(mut body: Vec<u8>) -> Vec<u8> {
        let sum = xxhash_rust::xxh3::xxh3_64(&body);
        body.extend_from_slice(&sum.to_le_bytes());
        body
    }

    #[test]
    fn a_file_reads_back_its_header_and_state() {
        let state = encode(&(vec![1u64, 2, 3], "x".to_string(), Some(7u128)));
        let file = write(&header(), &state);
        let (h, s) = read(&file).unwrap();
        assert_eq!(h, header());
        assert_eq!(s, &state[..]);
        let back: (Vec<u64>, String, Option<u128>) = decode(s).unwrap();
        assert_eq!(back, (vec![1, 2, 3], "x".to_string(), Some(7)));
    }

    /// Every byte flipped, and every truncation, is refused (the checksum
    /// covers them all); other files are not checkpoints.
    #[test]
    fn corruption_is_found_wherever_it_is() {
        let file = write(&header(), &encode(&vec![9u32; 40]));
        for i in 0..file.len() {
            let mut bad = file.clone();
            bad[i] ^= 0x10;
            let e = read(&bad).unwrap_err();
            assert!(
                matches!(e, CheckpointError::Checksum { .. } | CheckpointError::Magic),
                "byte {i}: {e}"
            );
        }
        for n in 0..file.len() {
            assert!(read(&file[..n]).is_err(), "{n} bytes");
        }
        assert!(matches!(read(b"# a trace\n"), Err(CheckpointError::Magic)));
    }

    #[test]
    fn another_version_is_refused_by_number() {
        let mut body = write(&header(), &[]);
        body.truncate(body.len() - 8);
        body[8..12].copy_from_slice(&(VERSION + 1).to_le_bytes());
        let e = read(&sealed(body)).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "checkpoint format version {}; this numasim reads version {VERSION}",
                VERSION + 1
            )
        );
    }

    /// A length field that overstates what follows is a named truncation,
    /// even under a valid checksum.
    #[test]
    fn lengths_are_checked_against_the_bytes() {
        let mut body = write(&header(), &[1, 2, 3]);
        body.truncate(body.len() - 8);
        let at = body.len() - 3 - 8;
        body[at..at + 8].copy_from_slice(&1000u64.to_le_bytes());
        let e = read(&sealed(body)).unwrap_err();
        assert!(
            matches!(
                e,
                CheckpointError::Truncated {
                    what: "the state",
                    need: 1000,
                    have: 3,
                    ..
                }
            ),
            "{e}"
        );
    }

    #[test]
    fn a_header_names_the_machine_or_run_that_differs() {
        let h = header();
        assert!(h.check(42, &h.run).is_ok());
        assert!(matches!(
            h.check(43, &h.run),
            Err(CheckpointError::Machine { .. })
        ));
        let e = h
            .check(42, "placement interleave; prefetch []")
            .unwrap_err();
        assert!(e.to_string().contains("placement interleave"), "{e}");
    }

    /// The trace hash sees every column: address, thread, size, kind, PC, time.
    #[test]
    fn the_trace_hash_sees_every_field() {
        use traces::record::{FLAG_PC, FLAG_TIME};
        use traces::{Fields, Kind, Record};
        let rec = |addr, thread, size, kind, pc, time| Record {
            pc,
            time,
            flags: FLAG_PC | FLAG_TIME,
            ..Record::access(thread, kind, addr, size)
        };
        let base = (64, 1, 8, Kind::Load, 0x400, 1000);
        let variants = [
            base,
            (128, 1, 8, Kind::Load, 0x400, 1000),
            (64, 2, 8, Kind::Load, 0x400, 1000),
            (64, 1, 4, Kind::Load, 0x400, 1000),
            (64, 1, 8, Kind::Store, 0x400, 1000),
            (64, 1, 8, Kind::Load, 0x404, 1000),
            (64, 1, 8, Kind::Load, 0x400, 1001),
        ];
        let digests: Vec<u64> = variants
            .iter()
            .map(|&(a, t, s, k, pc, time)| {
                let mut b = Batch::new(Fields {
                    pc: true,
                    time: true,
                });
                b.push(rec(a, t, s, k, pc, time));
                let mut h = TraceHash::default();
                h.add(&b, 0..1);
                h.digest()
            })
            .collect();
        for i in 0..digests.len() {
            for j in i + 1..digests.len() {
                assert_ne!(digests[i], digests[j], "variants {i} and {j}");
            }
        }
    }
}
