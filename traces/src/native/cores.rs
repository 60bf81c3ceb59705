//! A block's records copied into a batch, checked: the 16-byte cores in
//! one copy and one branch-free scan of what landed (kind, size, flags),
//! the PC and time columns as little-endian words. The hot half of
//! decoding, kept apart from the block framing in `native.rs`.

use crate::record::{Access, FLAG_GAP, FLAG_TIME};

/// True if the 16-byte record core `c` is invalid: a kind above 3, size 0,
/// a flag outside `allowed`, or both timing flags.
#[inline]
pub(crate) fn bad_record(c: &[u8], allowed: u8) -> bool {
    let size = u16::from_le_bytes([c[12], c[13]]);
    let flags = c[15];
    (c[14] > 3)
        | (size == 0)
        | (flags & !allowed != 0)
        | (flags & (FLAG_GAP | FLAG_TIME) == (FLAG_GAP | FLAG_TIME))
}

/// Index of the first invalid record core in `cores`, if any. The scan
/// is one branch-free pass over each record's second word (thread, size,
/// kind, flags), which the compiler vectorises; the exact index is only
/// searched for when something is wrong.
#[inline]
pub(crate) fn first_bad(cores: &[u8], allowed: u8) -> Option<usize> {
    // Kind byte at bits 48..56 (any of its bits 2..7 set: kind > 3),
    // flags at bits 56..64, size at bits 32..48.
    let mask: u64 = (0xFC << 48) | ((!allowed as u64 & 0xFF) << 56);
    let both = (FLAG_GAP | FLAG_TIME) as u64;
    let mut acc = 0u64;
    for c in cores.chunks_exact(16) {
        let hi = u64::from_le_bytes(c[8..16].try_into().expect("8 bytes"));
        acc |= (hi & mask)
            | (((hi >> 32) & 0xFFFF) == 0) as u64
            | (((hi >> 56) & both) == both) as u64;
    }
    if acc == 0 {
        return None;
    }
    cores.chunks_exact(16).position(|c| bad_record(c, allowed))
}

/// Appends the record cores `bytes` to `out` if every one is valid, else
/// returns the index of the first invalid one and appends nothing.
#[inline]
pub(super) fn push_cores(
    bytes: &[u8],
    allowed: u8,
    out: &mut Vec<Access>,
) -> std::result::Result<(), usize> {
    let n = bytes.len() / 16;
    #[cfg(target_endian = "little")]
    {
        out.reserve(n);
        let len = out.len();
        // SAFETY: `reserve` made room for `n` more elements and the source
        // holds `n * 16` bytes; the regions cannot overlap. The copied
        // bytes are checked where they landed (so a source that changes
        // under us — a mapped file — cannot slip an unchecked byte in), and
        // the length grows only when all are valid `Access` values:
        // `Access` is `repr(C)`, 16 bytes, no padding, fields in on-disk
        // order, and every bit pattern is valid for its fields except
        // `kind`, which `first_bad` has checked is 0..=3.
        unsafe {
            let dst = out.as_mut_ptr().add(len) as *mut u8;
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), dst, n * 16);
            let landed = std::slice::from_raw_parts(dst as *const u8, n * 16);
            if let Some(i) = first_bad(landed, allowed) {
                return Err(i);
            }
            out.set_len(len + n);
        }
    }
    #[cfg(not(target_endian = "little"))]
    {
        if let Some(i) = first_bad(bytes, allowed) {
            return Err(i);
        }
        out.extend(bytes.chunks_exact(16).map(|c| Access {
            addr: u64::from_le_bytes(c[0..8].try_into().expect("8")),
            thread: u32::from_le_bytes(c[8..12].try_into().expect("4")),
            size: u16::from_le_bytes([c[12], c[13]]),
            kind: crate::record::Kind::from_code(c[14]).unwrap_or(crate::record::Kind::Load),
            flags: c[15],
        }));
    }
    Ok(())
}

#[inline]
pub(super) fn push_u64s(bytes: &[u8], out: &mut Vec<u64>) {
    out.extend(
        bytes
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().expect("8"))),
    );
}
