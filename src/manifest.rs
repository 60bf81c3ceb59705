//! `manifest.json`: what produced a result (version, arguments, inputs with
//! checksums, configuration, seed). No timestamps, so the same run gives the
//! same bytes.

use serde_json::{Value, json};

/// The manifest of a run.
pub fn manifest(inputs: Vec<Value>, config: Value) -> Value {
    let args: Vec<String> = std::env::args().skip(1).collect();
    json!({
        "numasim_version": env!("CARGO_PKG_VERSION"),
        "arguments": args,
        "inputs": inputs,
        "config": config,
    })
}
