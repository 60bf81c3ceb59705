//! A sweep as Slurm jobs: a job array, one task per point (each runs
//! `sweep FILE --out DIR --point $SLURM_ARRAY_TASK_ID`), and a merge job
//! that the caller submits to run after it.

use std::path::Path;

/// How the jobs are asked for.
pub(super) struct Jobs<'a> {
    /// The program the tasks run (numasim's own path).
    pub exe: &'a Path,
    /// The sweep file and output folder (absolute: the jobs run elsewhere).
    pub sweep: &'a Path,
    pub out: &'a Path,
    /// Where the jobs' logs go.
    pub logs: &'a Path,
    pub points: usize,
    /// At most this many array tasks at once.
    pub array_limit: Option<usize>,
    /// Extra `#SBATCH` lines for both jobs.
    pub options: &'a [String],
}

/// `(sweep.sbatch, merge.sbatch)`.
pub(super) fn scripts(j: &Jobs) -> (String, String) {
    let limit = j
        .array_limit
        .map(|k| format!("%{}", k.max(1)))
        .unwrap_or_default();
    let extra: String = j.options.iter().map(|o| format!("#SBATCH {o}\n")).collect();
    let q = |p: &Path| shell_quote(&p.display().to_string());
    let array = format!(
        "#!/bin/sh\n#SBATCH --job-name=numasim-sweep\n#SBATCH --array=0-{}{limit}\n#SBATCH --output={}/point-%a.out\n{extra}\
         exec {} sweep {} --out {} --point \"$SLURM_ARRAY_TASK_ID\"\n",
        j.points - 1,
        j.logs.display(),
        q(j.exe),
        q(j.sweep),
        q(j.out)
    );
    let merge = format!(
        "#!/bin/sh\n#SBATCH --job-name=numasim-merge\n#SBATCH --output={}/merge.out\n{extra}exec {} sweep merge {}\n",
        j.logs.display(),
        q(j.exe),
        q(j.out)
    );
    (array, merge)
}

/// `s` quoted for `sh` where it needs to be.
fn shell_quote(s: &str) -> String {
    if s.chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-+=:,".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn quotes_only_what_the_shell_would_split() {
        assert_eq!(super::shell_quote("/a/b-c.toml"), "/a/b-c.toml");
        assert_eq!(super::shell_quote("a b"), "'a b'");
        assert_eq!(super::shell_quote("it's"), "'it'\\''s'");
    }
}
