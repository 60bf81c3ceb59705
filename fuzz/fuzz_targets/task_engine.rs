//! The task engine (`replay --workers`) on task traces made from arbitrary
//! bytes, under every scheduler: every task once, or a refusal at the
//! time horizon; no panic.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    numasim_fuzz::task_engine(data);
});
