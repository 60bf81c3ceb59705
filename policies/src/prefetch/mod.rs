//! Cache prefetchers, registered by name: `next-line[:degree]`,
//! `ip-stride[:degree[:distance]]`, `stream[:degree[:distance]]`,
//! `delta[:degree]` (Markov / delta correlation); and [`learned`], the
//! `learned:FILE[:BASE]` filter (built by the binary, which reads the file).

mod delta;
mod ip_stride;
pub mod learned;
mod next_line;
mod stream;

pub use delta::DeltaCorrelation;
pub use ip_stride::IpStride;
pub use next_line::NextLine;
pub use stream::Stream;

use sim::prefetch::Prefetcher;

use crate::PolicyError;

/// Names accepted by [`create`].
pub const NAMES: &[(&str, &str)] = &[
    (
        "next-line[:D]",
        "on a miss or the first use of a prefetched line, the next D lines (tagged)",
    ),
    (
        "ip-stride[:D[:K]]",
        "per PC, a confirmed stride: D lines starting K strides ahead",
    ),
    (
        "stream[:D[:K]]",
        "per 4 KiB region, a confirmed ascending or descending run: D lines K ahead",
    ),
    (
        "delta[:D]",
        "delta correlation: the delta that followed the current one last time, chained D times",
    ),
];

/// Builds a prefetcher for a machine with `line`-byte lines and `cores` cores.
pub fn create(spec: &str, line: u64, cores: usize) -> Result<Box<dyn Prefetcher>, PolicyError> {
    let mut parts = spec.split(':');
    let base = parts.next().unwrap_or("");
    let nums: Vec<u32> = parts
        .map(|x| {
            x.parse::<u32>()
                .map_err(|_| PolicyError(format!("prefetcher {spec:?}: {x:?} is not a number")))
        })
        .collect::<Result<_, _>>()?;
    let arg = |i: usize, d: u32| nums.get(i).copied().unwrap_or(d);
    let degree = arg(0, if base == "next-line" { 1 } else { 2 });
    if degree == 0 || degree > 64 {
        return Err(PolicyError(format!(
            "prefetcher {spec:?}: degree must be 1..=64"
        )));
    }
    let lb = line.trailing_zeros();
    Ok(match base {
        "next-line" => Box::new(NextLine::new(degree)),
        "ip-stride" => Box::new(IpStride::new(degree, arg(1, 1), lb, cores)),
        "stream" => Box::new(Stream::new(degree, arg(1, 1), cores)),
        "delta" => Box::new(DeltaCorrelation::new(degree, cores)),
        _ => {
            let names: Vec<&str> = NAMES.iter().map(|(n, _)| *n).collect();
            return Err(PolicyError(format!(
                "unknown prefetcher {spec:?}; expected one of {}",
                names.join(", ")
            )));
        }
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use sim::prefetch::AccessView;

    pub fn seen(pc: Option<u64>, addr: u64, miss: bool) -> AccessView {
        AccessView {
            core: 0,
            pc,
            addr,
            miss,
            prefetch_hit: false,
            write: false,
        }
    }

    #[test]
    fn names_resolve() {
        for n in [
            "next-line",
            "next-line:4",
            "ip-stride:4:2",
            "stream",
            "delta:3",
        ] {
            assert!(super::create(n, 64, 4).is_ok(), "{n}");
        }
        assert!(super::create("ip-stride:x", 64, 4).is_err());
        assert!(super::create("ghost", 64, 4).is_err());
        assert!(super::create("stream:0", 64, 4).is_err());
    }
}
