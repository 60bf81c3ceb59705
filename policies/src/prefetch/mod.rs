//! Cache prefetchers: one file each, registered below. `learned:FILE[:BASE]`
//! reads its model through the loader the binary passes in the
//! [`Ctx`](crate::registry::Ctx).

use sim::policy::Prefetcher;

use crate::error::{Bound, PolicyError, SpecProblem};
use crate::registry::{Spec, registry};

registry! {
    /// Every cache prefetcher, by name.
    pub static PREFETCHERS: dyn Prefetcher = ("prefetcher", "prefetchers");
    next_line: [ENTRY],
    ip_stride: [ENTRY, TABLE_ENTRY],
    stream: [ENTRY],
    adjacent: [ENTRY],
    delta: [ENTRY],
    learned: [ENTRY],
}

/// The largest confirmation count (`c=`, `:C`) a stride or stream
/// prefetcher takes (defined beside the machine file's range for it).
pub use sim::ranges::MAX_CONFIRM;

pub use sim::ranges::{MAX_FILLS, NEAR_STEP_LINES};

/// A prefetcher's `[:D[:K]]`: degree D (1..=64, default `default_degree`)
/// and distance K (default 1).
fn degree_distance(spec: &Spec, default_degree: u64) -> Result<(u32, u32), PolicyError> {
    let (d, k, _) = degree_distance_and(spec, default_degree, &[])?;
    Ok((d, k))
}

/// `[:D[:K[:X...]]]`: [`degree_distance`] and the further numbers named
/// `extra` (those given; none allowed beyond them).
fn degree_distance_and(
    spec: &Spec,
    default_degree: u64,
    extra: &[&str],
) -> Result<(u32, u32, Vec<u64>), PolicyError> {
    let nums = spec.numbers("prefetcher")?;
    if nums.len() > 2 + extra.len() {
        let names: String = ["D", "K"]
            .iter()
            .chain(extra)
            .map(|n| format!(":{n}"))
            .collect();
        let count = ["two", "three", "four", "five"][extra.len().min(3)];
        return Err(spec.error("prefetcher", SpecProblem::TooManyNumbers { count, names }));
    }
    let degree = nums.first().copied().unwrap_or(default_degree);
    if degree == 0 || degree > 64 {
        return Err(spec.error(
            "prefetcher",
            SpecProblem::Range {
                param: "degree",
                range: Bound::Within { min: 1, max: 64 },
            },
        ));
    }
    let distance = nums.get(1).copied().unwrap_or(1);
    if distance > 1 << 20 {
        return Err(spec.error(
            "prefetcher",
            SpecProblem::Range {
                param: "distance",
                range: Bound::AtMost(1 << 20),
            },
        ));
    }
    Ok((
        degree as u32,
        distance as u32,
        nums[2.min(nums.len())..].to_vec(),
    ))
}

#[cfg(test)]
pub(crate) mod tests {
    use crate::error::PolicyError;
    use crate::registry::Ctx;
    use sim::policy::Prefetcher;

    /// A prefetcher built through the registry, as the CLI builds it.
    pub fn create(spec: &str, line: u64, cores: usize) -> Result<Box<dyn Prefetcher>, PolicyError> {
        super::PREFETCHERS.build(
            spec,
            &Ctx {
                line,
                cores,
                ..Ctx::default()
            },
        )
    }

    use sim::policy::AccessView;

    pub fn seen(pc: Option<u64>, addr: u64, miss: bool) -> AccessView {
        AccessView {
            from_memory: false,
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
            "stream:8:1:32",
            "ip-stride:13:1:128:5",
            "adjacent",
            "delta:3",
        ] {
            assert!(create(n, 64, 4).is_ok(), "{n}");
        }
        assert!(create("ip-stride:x", 64, 4).is_err());
        assert_eq!(
            create("ghost", 64, 4).err().unwrap().to_string(),
            "unknown prefetcher \"ghost\"; expected one of next-line[:D], ip-stride[:D[:K[:R[:F]]]], ip-stride-table[:c=C][:r=R][:f.LEVEL=N...]:S=A[:S=A...], stream[:D[:K[:T[:C]]]], adjacent[:mem], delta[:D], learned:FILE[:BASE]"
        );
        for (bad, why) in [
            ("ip-stride:1:1:1:1:1", "at most four numbers, :D:K:R:F"),
            ("ip-stride:1:1:4:65", "F must be 0..=64"),
            ("stream:1:1:0", "T (regions tracked) must be 1..=1024"),
            ("stream:1:1:1:1:1", "at most four numbers, :D:K:T:C"),
            (
                "stream:1:1:1:9",
                "C (steps that confirm a stream) must be 1..=8",
            ),
            ("next-line:1:1:1", "at most two numbers, :D:K"),
            ("adjacent:1", "the only parameter is :mem"),
        ] {
            let e = create(bad, 64, 4).err().unwrap().to_string();
            assert!(e.ends_with(why), "{bad}: {e}");
        }
        assert!(create("learned:m.json", 64, 4).is_err(), "no loader");
        assert!(create("stream:0", 64, 4).is_err());
    }
}
