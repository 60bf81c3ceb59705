//! Task-trace arguments shared by `replay --workers`, `compare` on a task
//! trace and `trace convert/gen tasks`: which cores the workers run on, and
//! Poisson re-timing of arrivals.

use anyhow::{Context, Result, bail};

/// Cores for `--workers`: `N` (spread over the nodes in turn, lowest free
/// core of each) or a list of core ids `0,1,28,29`.
pub fn worker_cores(spec: &str, m: &sim::Machine) -> Result<Vec<usize>> {
    let spec = spec.trim();
    if spec.contains(',') {
        return spec
            .split(',')
            .map(|c| {
                c.trim()
                    .parse::<usize>()
                    .with_context(|| format!("--workers {spec:?}: {c:?} is not a core id"))
            })
            .collect();
    }
    let n: usize = spec
        .parse()
        .with_context(|| format!("--workers {spec:?}: expected a count or a list of core ids"))?;
    let cores = m.core_node.len();
    if n == 0 || n > cores {
        bail!("--workers {n}: the machine has {cores} cores");
    }
    // Each node's cores in order; take one from each node in turn.
    let mut per: Vec<Vec<usize>> = vec![Vec::new(); m.nodes()];
    for (c, &node) in m.core_node.iter().enumerate() {
        per[node as usize].push(c);
    }
    let mut out = Vec::new();
    let mut k = 0;
    while out.len() < n {
        for cs in &per {
            if let Some(&c) = cs.get(k)
                && out.len() < n
            {
                out.push(c);
            }
        }
        k += 1;
    }
    Ok(out)
}

/// `poisson:QPS[:SEED]`.
pub fn parse_arrivals(spec: &str) -> Result<(f64, u64)> {
    let mut it = spec.split(':');
    let (Some("poisson"), Some(q)) = (it.next(), it.next()) else {
        bail!("--arrivals {spec:?}: expected poisson:QPS[:SEED]");
    };
    let qps: f64 = q
        .parse()
        .ok()
        .filter(|x: &f64| x.is_finite() && *x > 0.0)
        .with_context(|| format!("--arrivals {spec:?}: QPS must be a positive number"))?;
    let seed = match it.next() {
        None => 1,
        Some(s) => s
            .parse()
            .with_context(|| format!("--arrivals {spec:?}: SEED must be an integer"))?,
    };
    if it.next().is_some() {
        bail!("--arrivals {spec:?}: expected poisson:QPS[:SEED]");
    }
    Ok((qps, seed))
}
