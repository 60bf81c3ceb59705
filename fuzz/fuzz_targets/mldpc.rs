//! The mldpc reader on arbitrary bytes: every record or a clean error, no panic.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    numasim_fuzz::read_all(data, traces::Format::from_name("mldpc"));
});
