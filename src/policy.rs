//! Policies as the command line names them: the flags' help text,
//! generated from the `policies` registries, and one prefetcher by spec
//! (`lab::prefetchers`, which holds the model-file loader and the clock).

use anyhow::Result;
use lab::InputLog;
use policies::registry::Registry;

/// `--flag` help text: what the flag is, then every accepted spec.
pub fn flag_help<T: ?Sized>(what: &str, reg: &Registry<T>) -> String {
    format!(
        "{what}: {} (numasim policies explains each)",
        reg.syntax_list()
    )
}

/// One prefetcher for a command without a machine (`line`-byte lines).
pub fn prefetcher(
    spec: &str,
    line: u64,
    cores: usize,
    log: &InputLog,
) -> Result<Box<dyn sim::policy::Prefetcher>> {
    Ok(lab::prefetchers::one(spec, line, cores, log)?)
}
