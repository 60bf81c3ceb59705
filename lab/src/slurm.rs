//! A run as Slurm jobs: a job array (task `$SLURM_ARRAY_TASK_ID` runs one
//! piece) and a merge job submitted to start after every task succeeded.
//! Shared by `sweep --slurm` (one task per point) and `replay --parts N
//! --slurm` (one task per part of a sampled replay).

use std::path::Path;

/// How the jobs are asked for.
pub struct Jobs<'a> {
    /// `numasim-NAME` and `numasim-merge` are the jobs' names.
    pub name: &'a str,
    /// What an array task runs: a command line whose arguments are
    /// quoted for `sh` here, and then `"$SLURM_ARRAY_TASK_ID"`'s flag.
    pub task: &'a [String],
    /// The flag that takes the task's index (`--point`, `--part`).
    pub index_flag: &'a str,
    /// What the merge job runs.
    pub merge: &'a [String],
    /// Where the jobs' logs go (absolute: the jobs run elsewhere).
    pub logs: &'a Path,
    /// Array tasks, indexed 0..tasks.
    pub tasks: usize,
    /// At most this many array tasks at once.
    pub array_limit: Option<usize>,
    /// Extra `#SBATCH` lines for both jobs.
    pub options: &'a [String],
}

/// `(array script, merge script)`.
pub fn scripts(j: &Jobs) -> (String, String) {
    let limit = j
        .array_limit
        .map(|k| format!("%{}", k.max(1)))
        .unwrap_or_default();
    let extra: String = j.options.iter().map(|o| format!("#SBATCH {o}\n")).collect();
    let line = |args: &[String]| {
        let q: Vec<String> = args.iter().map(|a| shell_quote(a)).collect();
        q.join(" ")
    };
    let array = format!(
        "#!/bin/sh\n#SBATCH --job-name=numasim-{}\n#SBATCH --array=0-{}{limit}\n#SBATCH --output={}/{}-%a.out\n{extra}\
         exec {} {} \"$SLURM_ARRAY_TASK_ID\"\n",
        j.name,
        j.tasks.saturating_sub(1),
        j.logs.display(),
        j.index_flag.trim_start_matches('-'),
        line(j.task),
        j.index_flag,
    );
    let merge = format!(
        "#!/bin/sh\n#SBATCH --job-name=numasim-merge\n#SBATCH --output={}/merge.out\n{extra}exec {}\n",
        j.logs.display(),
        line(j.merge),
    );
    (array, merge)
}

/// `s` quoted for `sh` where it needs to be.
pub fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+=:,@%".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// `sbatch` could not be run, or refused a script, or a script could not
/// be written.
#[derive(Debug, thiserror::Error)]
pub enum SlurmError {
    #[error("sbatch: {0}")]
    Spawn(std::io::Error),
    #[error("{path}: {error}")]
    Write { path: String, error: std::io::Error },
    #[error("an argument is not UTF-8 ({0:?}); a job script cannot carry it")]
    NotUtf8(std::ffi::OsString),
    #[error("sbatch {args:?}: {stderr}")]
    Refused { args: Vec<String>, stderr: String },
}

/// Whether `sbatch` is on PATH.
pub fn have_sbatch() -> bool {
    std::process::Command::new("sbatch")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Submits the array script, then the merge script to run after every
/// array task succeeded: `(array job id, merge job id)`.
pub fn submit(array: &Path, merge: &Path) -> Result<(String, String), SlurmError> {
    let run = |args: Vec<String>| -> Result<String, SlurmError> {
        let o = std::process::Command::new("sbatch")
            .args(&args)
            .output()
            .map_err(SlurmError::Spawn)?;
        if !o.status.success() {
            let stderr = String::from_utf8_lossy(&o.stderr).trim().to_string();
            return Err(SlurmError::Refused { args, stderr });
        }
        let id = String::from_utf8_lossy(&o.stdout).trim().to_string();
        Ok(id.split(';').next().unwrap_or("").to_string())
    };
    let path = |p: &Path| p.display().to_string();
    let array_id = run(vec!["--parsable".into(), path(array)])?;
    let merge_id = run(vec![
        "--parsable".into(),
        format!("--dependency=afterok:{array_id}"),
        path(merge),
    ])?;
    Ok((array_id, merge_id))
}

/// `args` (a command line, without the program) less the flags in
/// `drop` and, with their values (`FLAG VALUE` or `FLAG=VALUE`), those in
/// `drop_valued`: what a job reruns of the command that sent it.
pub fn without(
    args: impl IntoIterator<Item = std::ffi::OsString>,
    drop: &[&str],
    drop_valued: &[&str],
) -> Result<Vec<String>, SlurmError> {
    let mut out = Vec::new();
    let mut skip = false;
    for arg in args {
        let arg = arg.into_string().map_err(SlurmError::NotUtf8)?;
        let flag = arg.split('=').next().unwrap_or("");
        if std::mem::take(&mut skip) || drop.contains(&flag) {
            continue;
        }
        match drop_valued.contains(&flag) {
            true => skip = !arg.contains('='),
            false => out.push(arg),
        }
    }
    Ok(out)
}

/// What [`launch`] did.
pub enum Launched {
    /// The scripts are written, not submitted (`--dry-run`, or no `sbatch`
    /// on PATH: `sbatch` says which).
    Written {
        sbatch: bool,
        dir: String,
        tasks: usize,
    },
    Submitted {
        array: String,
        merge: String,
        tasks: usize,
    },
}

impl std::fmt::Display for Launched {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match self {
            Launched::Written { sbatch, dir, tasks } => write!(
                f,
                "wrote the job scripts into {dir} ({tasks} array tasks and a merge job){}",
                if *sbatch {
                    ""
                } else {
                    "; sbatch is not installed: submit them by hand"
                }
            ),
            Launched::Submitted {
                array,
                merge,
                tasks,
            } => write!(
                f,
                "submitted array job {array} ({tasks} tasks) and merge job {merge}"
            ),
        }
    }
}

/// Writes `dir/<name>.sbatch` and `dir/merge.sbatch` (each whole or not at
/// all) and, unless `dry_run` or there is no `sbatch`, submits them and
/// writes `dir/slurm-jobs.json` (`{"array", "merge", "tasks"}`, job ids).
pub fn launch(dir: &Path, j: &Jobs, dry_run: bool) -> Result<Launched, SlurmError> {
    let write = |name: &str, text: &str| -> Result<std::path::PathBuf, SlurmError> {
        let path = dir.join(name);
        let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
        let err = |error| SlurmError::Write {
            path: path.display().to_string(),
            error,
        };
        std::fs::write(&tmp, text).map_err(err)?;
        std::fs::rename(&tmp, &path).map_err(err)?;
        Ok(path)
    };
    let (array, merge) = scripts(j);
    let array = write(&format!("{}.sbatch", j.name), &array)?;
    let merge = write("merge.sbatch", &merge)?;
    let sbatch = have_sbatch();
    if dry_run || !sbatch {
        let (dir, tasks) = (dir.display().to_string(), j.tasks);
        return Ok(Launched::Written { sbatch, dir, tasks });
    }
    let (array, merge) = submit(&array, &merge)?;
    let ids = serde_json::json!({ "array": array, "merge": merge, "tasks": j.tasks });
    write("slurm-jobs.json", &format!("{ids:#}\n"))?;
    Ok(Launched::Submitted {
        array,
        merge,
        tasks: j.tasks,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Flags dropped alone, with their value after them or after `=`.
    #[test]
    fn command_lines_without_flags() {
        let os = |v: &[&str]| v.iter().map(std::ffi::OsString::from).collect::<Vec<_>>();
        let args = os(&[
            "replay", "t", "--x", "--v", "1", "--v=2", "--keep", "3", "--vv",
        ]);
        let got = without(args, &["--x"], &["--v"]).unwrap();
        assert_eq!(got, ["replay", "t", "--keep", "3", "--vv"]);
    }

    #[test]
    fn quotes_only_what_the_shell_would_split() {
        assert_eq!(shell_quote("/a/b-c.toml"), "/a/b-c.toml");
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
        assert_eq!(shell_quote(""), "''");
    }

    /// The array runs the task line with its index flag last; both jobs
    /// carry the extra lines; the limit is `%K`.
    #[test]
    fn scripts_by_hand() {
        let args = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let (task, merge) = (args(&["/bin/n", "replay", "a b"]), args(&["/bin/n", "m"]));
        let (a, m) = scripts(&Jobs {
            name: "replay",
            task: &task,
            index_flag: "--part",
            merge: &merge,
            logs: Path::new("/o/slurm"),
            tasks: 3,
            array_limit: Some(2),
            options: &["--time=1".to_string()],
        });
        assert_eq!(
            a,
            "#!/bin/sh\n#SBATCH --job-name=numasim-replay\n#SBATCH --array=0-2%2\n#SBATCH --output=/o/slurm/part-%a.out\n#SBATCH --time=1\nexec /bin/n replay 'a b' --part \"$SLURM_ARRAY_TASK_ID\"\n"
        );
        assert_eq!(
            m,
            "#!/bin/sh\n#SBATCH --job-name=numasim-merge\n#SBATCH --output=/o/slurm/merge.out\n#SBATCH --time=1\nexec /bin/n m\n"
        );
    }
}
