//! The task-trace readers (CSV and native) on arbitrary bytes: a trace or
//! a clean error, no panic; a trace either accepts writes back to both
//! forms and reads the same again.
#![no_main]

use traces::native::Codec;
use traces::task_native::{read_task_native, write_task_native};
use traces::tasks::{TaskTrace, read_task_csv};

fn round_trips(t: &TaskTrace) {
    let again = read_task_csv(t.to_csv().as_bytes()).expect("own CSV reads");
    assert_eq!(&again, t, "CSV round trip");
    let bytes = write_task_native(t, Vec::new(), Codec::None, &serde_json::json!({}))
        .expect("writes to memory");
    let again = read_task_native(&bytes[..]).expect("own native reads");
    assert_eq!(&again, t, "native round trip");
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Ok(t) = read_task_csv(data) {
        round_trips(&t);
    }
    if let Ok(t) = read_task_native(data) {
        round_trips(&t);
    }
});
