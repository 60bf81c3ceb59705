//! Format detection and decompression (xz, gzip, zstd wrappers) on
//! arbitrary bytes, then whichever reader it picks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    numasim_fuzz::read_all(data, None);
});
