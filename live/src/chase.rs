//! The timed loops of every live measurement — the calibration's chases, the
//! prefetcher fingerprint's walks and both replay harnesses — each with
//! **one load instruction**, as the model assumes (validate simulates every
//! access from the live loop's one PC).
//!
//! Why not a Rust loop: the compiler unrolls `j = w[j]` eight times (and
//! the op-list loop twice), so the host's PC-indexed prefetchers saw eight
//! (or two) loads, each walking eight (or two) times the trace's stride.
//! The same stride-95-line walk inside this Xeon VM's LLC took 39–42 ns a
//! load through the unrolled chain loop and 15–16 ns through the op-list
//! loop (`numasim validate` on a two-pass walk, laid once as a chain and
//! once as ops by a single store, 2026-12-05), and the fingerprint, fitted
//! on the chain loop, could not tell the model what the ops loop would show.
//! On x86-64 the loops are inline assembly (a load, a count, a branch);
//! elsewhere they are plain Rust, which the compiler may unroll.

/// The store flag of an op (the rest is the word index).
pub const WRITE: u32 = 1 << 31;

/// Follows the chain `j = w[j]` `n` times from `j`; returns where it ends.
///
/// # Safety
/// Every word the chain reaches from `j` in `n` steps, `j` included, must be
/// the index of a word of the buffer at `w` (the caller checks its slots
/// before it lays them).
#[inline(never)]
pub unsafe fn chase(w: *const u64, mut j: usize, n: usize) -> usize {
    if n == 0 {
        return j;
    }
    #[cfg(target_arch = "x86_64")]
    // SAFETY: the loop reads only `w[j]` for chain indices, valid by the
    // caller's contract; it writes no memory and touches no stack.
    unsafe {
        std::arch::asm!(
            "2:",
            "mov {j}, qword ptr [{w} + {j}*8]",
            "dec {n}",
            "jnz 2b",
            j = inout(reg) j,
            n = inout(reg) n => _,
            w = in(reg) w,
            options(nostack, readonly),
        );
    }
    #[cfg(not(target_arch = "x86_64"))]
    for _ in 0..n {
        // SAFETY: as above.
        j = unsafe { *w.add(j) } as usize;
    }
    j
}

/// Runs `ops` over the buffer at `w`: a load reads its word, a store
/// (`WRITE` set) adds 1 to it; each access's address waits for the value
/// of the load before it (`dep & zero`, 0 though the CPU cannot know, with
/// `zero` 0 from the caller through `black_box`). Returns the last load's
/// value. Loads and stores read their word through the same instruction
/// (a store then writes it back with a plain store), so the trace's
/// accesses reach the host's PC-indexed prefetchers from one PC, as in the
/// model; the op list itself is read by a second load, a unit-stride
/// stream beside the data that the model does not see.
///
/// # Safety
/// Every op's word index (`op & !WRITE`) must be a word of the buffer at `w`,
/// and `zero` must be 0.
#[inline(never)]
pub unsafe fn run_ops(w: *mut u64, ops: &[u32], mut dep: usize, zero: usize) -> usize {
    if ops.is_empty() {
        return dep;
    }
    #[cfg(target_arch = "x86_64")]
    // SAFETY: each op's word is in the buffer (caller's contract), and
    // `dep & zero` is 0, so the loop touches only those words and `ops`.
    unsafe {
        std::arch::asm!(
            "2:",
            "mov {op:e}, dword ptr [{p}]",
            "mov {j:e}, {op:e}",
            "and {j:e}, 0x7fffffff",
            "mov {t}, {dep}",
            "and {t}, {zero}",
            "add {j}, {t}",
            "mov {t}, qword ptr [{w} + {j}*8]",
            "test {op:e}, {op:e}",
            "js 3f",
            "mov {dep}, {t}",
            "jmp 4f",
            "3:",
            "add {t}, 1",
            "mov qword ptr [{w} + {j}*8], {t}",
            "4:",
            "add {p}, 4",
            "dec {n}",
            "jnz 2b",
            op = out(reg) _,
            j = out(reg) _,
            t = out(reg) _,
            dep = inout(reg) dep,
            p = inout(reg) ops.as_ptr() => _,
            n = inout(reg) ops.len() => _,
            zero = in(reg) zero,
            w = in(reg) w,
            options(nostack),
        );
    }
    #[cfg(not(target_arch = "x86_64"))]
    for &op in ops {
        let j = (op & !WRITE) as usize + (dep & zero);
        // SAFETY: as above.
        let x = unsafe { &mut *w.add(j) };
        if op & WRITE != 0 {
            *x = x.wrapping_add(1);
        } else {
            dep = *x as usize;
        }
    }
    dep
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_chase_follows_the_chain_n_steps() {
        // 0 → 3 → 1 → 2 → 0: after 5 steps from 0, at 3; after 0, still 0.
        let w = [3u64, 2, 0, 1];
        // SAFETY: every word is an index of `w`.
        unsafe {
            assert_eq!(chase(w.as_ptr(), 0, 5), 3);
            assert_eq!(chase(w.as_ptr(), 0, 4), 0);
            assert_eq!(chase(w.as_ptr(), 2, 0), 2);
        }
    }

    #[test]
    fn ops_load_and_store_their_words() {
        let mut w = [10u64, 20, 30, 40];
        let ops = [1, 3 | WRITE, 3 | WRITE, 2, WRITE, 3];
        // SAFETY: every op's word is in `w`; zero is 0.
        let last = unsafe { run_ops(w.as_mut_ptr(), &ops, 0, 0) };
        assert_eq!(w, [11, 20, 30, 42]);
        assert_eq!(last, 42);
        // SAFETY: as above.
        assert_eq!(unsafe { run_ops(w.as_mut_ptr(), &[], 7, 0) }, 7);
    }
}
