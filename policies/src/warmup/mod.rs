//! Warm-up policies for moved shards: one file each, registered below.

use sim::policy::Warmup;

use crate::registry::registry;

registry! {
    /// Every warm-up policy, by name.
    pub static WARMUPS: dyn Warmup = ("warm-up", "warm-ups");
    none: [ENTRY],
    sequential: [ENTRY],
}

#[cfg(test)]
mod tests {
    use crate::registry::Ctx;

    #[test]
    fn names_resolve() {
        for e in super::WARMUPS.entries {
            assert_eq!(
                super::WARMUPS
                    .build(e.name, &Ctx::default())
                    .unwrap()
                    .name(),
                e.name
            );
        }
        assert_eq!(
            super::WARMUPS
                .build("lazy", &Ctx::default())
                .err()
                .unwrap()
                .to_string(),
            "unknown warm-up \"lazy\"; expected one of none, sequential"
        );
    }
}
