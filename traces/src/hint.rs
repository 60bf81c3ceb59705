//! Host-cache prefetch hints: the simulated caches, directory and sampling
//! tables are larger than the host's caches, so the engines ask for the
//! lines an upcoming access will touch while they work on the current one.
//! A hint changes no value, only when memory arrives.

/// Asks the host to bring the cache line holding `r` closer (a no-op off
/// x86-64).
#[inline(always)]
pub fn prefetch<T>(r: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint that never faults and writes nothing;
    // SSE (which provides it) is part of the x86-64 baseline; `r` is a
    // valid reference anyway.
    unsafe {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        _mm_prefetch::<_MM_HINT_T0>(r as *const T as *const i8);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = r;
}
