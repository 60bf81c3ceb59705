//! `numasim policies`: every registered policy, by kind — a heading line,
//! then one line per policy: two spaces, its name and parameters, two or
//! more spaces, its one-line help. Generated from the registries.

use anyhow::Result;

pub fn run() -> Result<()> {
    print!("{}", listing());
    Ok(())
}

/// The listing as text.
pub fn listing() -> String {
    let kinds = policies::listing();
    let width = kinds
        .iter()
        .flat_map(|(_, es)| es.iter().map(|(s, _)| s.len()))
        .max()
        .unwrap_or(0);
    let mut s = String::new();
    for (heading, entries) in kinds {
        s.push_str(heading);
        s.push('\n');
        for (syntax, help) in entries {
            s.push_str(&format!("  {syntax:<width$}  {help}\n"));
        }
    }
    s
}
