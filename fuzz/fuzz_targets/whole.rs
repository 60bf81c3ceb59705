//! The segmented readers of a trace held whole in memory (lackey and
//! native, two threads) must give exactly what the streaming readers give:
//! the same records, or the same error.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    numasim_fuzz::whole_matches_stream(data);
});
