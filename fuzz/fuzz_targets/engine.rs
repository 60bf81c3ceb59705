//! The timing engine fed an arbitrary record stream: no panic, and every
//! access is accounted for (accesses = the sum over served-by levels).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    numasim_fuzz::engine(data);
});
