//! The TOML loaders — machine descriptions and request workloads — on
//! arbitrary text: a machine or an error, no panic; no NaN gets through.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    numasim_fuzz::configs(data);
});
