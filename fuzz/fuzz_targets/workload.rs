//! The request model on an arbitrary workload file, briefly, under every
//! scheduler: a result or an error, no panic.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    numasim_fuzz::workload(data);
});
