//! The task-trace reader on arbitrary bytes: a trace or a clean error, no
//! panic; a trace it accepts writes back to CSV and reads the same again.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Ok(t) = traces::tasks::read_task_csv(data) {
        let again = traces::tasks::read_task_csv(t.to_csv().as_bytes()).expect("own output reads");
        assert_eq!(again, t, "round trip");
    }
});
