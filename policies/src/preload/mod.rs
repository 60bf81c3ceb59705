//! Preload policies for the request-level model (the seed's
//! "model-triggered preload"): one file each, registered below.

use sim::policy::Preload;

use crate::error::{PolicyError, SpecProblem};
use crate::registry::{Spec, registry};

registry! {
    /// Every preload policy, by name.
    pub static PRELOADS: dyn Preload = ("preload", "preloads");
    none: [ENTRY],
    always: [ENTRY],
    oracle: [ENTRY],
    learned: [ENTRY],
}

/// The article's preload window: 120 ms before the task is dispatched.
pub const DEFAULT_WINDOW_MS: f64 = 120.0;

/// A window in ms: finite, not negative, at most an hour.
fn window_ms(spec: &Spec, ms: &str) -> Result<f64, PolicyError> {
    match ms.parse::<f64>() {
        Ok(w) if w.is_finite() && (0.0..=3.6e6).contains(&w) => Ok(w),
        _ => Err(spec.error("preload", SpecProblem::Window(ms.to_string()))),
    }
}

#[cfg(test)]
mod tests {
    use super::PRELOADS;
    use crate::registry::Ctx;

    #[test]
    fn names() {
        let c = Ctx::default();
        assert_eq!(PRELOADS.build("none", &c).unwrap().name(), "none");
        assert_eq!(
            PRELOADS.build("always:50", &c).unwrap().window_ns(),
            50_000_000
        );
        assert_eq!(
            PRELOADS.build("sometimes", &c).err().unwrap().to_string(),
            "unknown preload \"sometimes\"; expected one of none, always[:MS], oracle[:MS], learned:FILE[:MS[:P]]"
        );
        assert!(PRELOADS.build("always:x", &c).is_err());
        assert!(PRELOADS.build("always:nan", &c).is_err());
        assert!(PRELOADS.build("learned:m.json", &c).is_err(), "no loader");
    }
}
