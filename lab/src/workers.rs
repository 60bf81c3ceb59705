//! What a task replay's workers and arrivals are, from their specs:
//! `N` workers spread over the nodes or a core list `0,1,28,29`, and
//! `poisson:QPS[:SEED]` re-timing of a trace's arrivals (`log:FILE` is
//! `crate::request_logs::Retime`'s). Errors say what is
//! wrong with the spec; the front end says where it came from (a flag or
//! an experiment field).

/// A worker or arrival spec that does not parse.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SpecError {
    #[error("{spec:?}: {item:?} is not a core id")]
    NotACore { spec: String, item: String },
    #[error("{spec:?}: expected a count or a list of core ids")]
    NotACount { spec: String },
    #[error("{n}: the machine has {cores} cores")]
    TooMany { n: usize, cores: usize },
    #[error("{spec:?}: expected poisson:QPS[:SEED] or log:FILE")]
    NotPoisson { spec: String },
    #[error("{spec:?}: QPS must be a positive number")]
    BadQps { spec: String },
    #[error("{spec:?}: SEED must be an integer")]
    BadSeed { spec: String },
}

/// Cores for `spec`: `N` (spread over the nodes in turn, lowest free core
/// of each) or a list of core ids `0,1,28,29`.
pub fn cores(spec: &str, m: &sim::Machine) -> Result<Vec<usize>, SpecError> {
    let spec = spec.trim();
    if spec.contains(',') {
        return spec
            .split(',')
            .map(|c| {
                c.trim().parse::<usize>().map_err(|_| SpecError::NotACore {
                    spec: spec.to_string(),
                    item: c.to_string(),
                })
            })
            .collect();
    }
    let n: usize = spec.parse().map_err(|_| SpecError::NotACount {
        spec: spec.to_string(),
    })?;
    let cores = m.core_node.len();
    if n == 0 || n > cores {
        return Err(SpecError::TooMany { n, cores });
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

/// `poisson:QPS[:SEED]` as (QPS, seed; 1 when not given).
pub fn arrivals(spec: &str) -> Result<(f64, u64), SpecError> {
    let not_poisson = || SpecError::NotPoisson {
        spec: spec.to_string(),
    };
    let mut it = spec.split(':');
    let (Some("poisson"), Some(q)) = (it.next(), it.next()) else {
        return Err(not_poisson());
    };
    let qps: f64 = q
        .parse()
        .ok()
        .filter(|x: &f64| x.is_finite() && *x > 0.0)
        .ok_or_else(|| SpecError::BadQps {
            spec: spec.to_string(),
        })?;
    let seed = match it.next() {
        None => 1,
        Some(s) => s.parse().map_err(|_| SpecError::BadSeed {
            spec: spec.to_string(),
        })?,
    };
    if it.next().is_some() {
        return Err(not_poisson());
    }
    Ok((qps, seed))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_parse_and_refuse_in_the_problem_s_words() {
        let m = sim::Machine::from_toml(sim::presets::preset("xeon-2s").unwrap()).unwrap();
        assert_eq!(cores("4", &m).unwrap(), vec![0, 28, 1, 29]);
        assert_eq!(cores("0,5", &m).unwrap(), vec![0, 5]);
        assert_eq!(
            cores("0", &m).unwrap_err().to_string(),
            "0: the machine has 56 cores"
        );
        assert_eq!(arrivals("poisson:100:7").unwrap(), (100.0, 7));
        assert_eq!(
            arrivals("uniform:5").unwrap_err().to_string(),
            "\"uniform:5\": expected poisson:QPS[:SEED] or log:FILE"
        );
    }
}
