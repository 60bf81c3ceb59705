//! Writing output files so that nothing half-written is ever left behind:
//! everything goes to a temporary file in the destination directory and is
//! renamed into place only when complete.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// A file being written; removed on drop unless [`AtomicFile::commit`]ted.
pub struct AtomicFile {
    tmp: PathBuf,
    dest: PathBuf,
    writer: Option<BufWriter<File>>,
}

impl AtomicFile {
    /// Starts writing `dest` (through `.<name>.tmp-<pid>` beside it).
    pub fn create(dest: &Path) -> Result<AtomicFile> {
        let dir = match dest.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let name = dest
            .file_name()
            .with_context(|| format!("{}: not a file path", dest.display()))?
            .to_string_lossy()
            .into_owned();
        let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
        let f = File::create(&tmp).with_context(|| format!("{}: cannot create", dest.display()))?;
        Ok(AtomicFile {
            tmp,
            dest: dest.to_path_buf(),
            writer: Some(BufWriter::with_capacity(1 << 20, f)),
        })
    }

    /// The writer.
    pub fn writer(&mut self) -> &mut BufWriter<File> {
        self.writer.as_mut().expect("writer present until commit")
    }

    /// Takes the writer out (for writers that own their sink); give it back
    /// with [`AtomicFile::commit_with`].
    pub fn take(&mut self) -> BufWriter<File> {
        self.writer.take().expect("writer present until commit")
    }

    /// Flushes, syncs and renames into place.
    pub fn commit(mut self) -> Result<()> {
        let w = self.take();
        self.commit_with(w)
    }

    /// As [`AtomicFile::commit`], with a writer taken out earlier.
    pub fn commit_with(mut self, mut w: BufWriter<File>) -> Result<()> {
        w.flush()
            .with_context(|| format!("{}: write failed", self.dest.display()))?;
        let f = w
            .into_inner()
            .map_err(|e| e.into_error())
            .with_context(|| format!("{}: write failed", self.dest.display()))?;
        f.sync_all().ok();
        drop(f);
        std::fs::rename(&self.tmp, &self.dest)
            .with_context(|| format!("{}: cannot move into place", self.dest.display()))?;
        self.tmp = PathBuf::new();
        Ok(())
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if !self.tmp.as_os_str().is_empty() {
            self.writer.take();
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

/// Writes a whole file atomically.
pub fn write_file(dest: &Path, bytes: &[u8]) -> Result<()> {
    let mut f = AtomicFile::create(dest)?;
    f.writer()
        .write_all(bytes)
        .with_context(|| format!("{}: write failed", dest.display()))?;
    f.commit()
}

/// Refuses up front a file that could not be created (its directory is
/// missing), for a command that measures for minutes before it writes.
pub fn check_creatable(dest: &Path) -> Result<()> {
    let dir = match dest.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if !dir.is_dir() {
        anyhow::bail!(
            "{}: cannot create: no directory {}",
            dest.display(),
            dir.display()
        );
    }
    Ok(())
}

/// Writes pretty JSON (with a final newline) atomically.
pub fn write_json(dest: &Path, value: &serde_json::Value) -> Result<()> {
    let mut s = serde_json::to_string_pretty(value)?;
    s.push('\n');
    write_file(dest, s.as_bytes())
}

/// Writes every file of `files` into `dir` (each atomically).
pub fn write_all(dir: &Path, files: &lab::outputs::Outputs) -> Result<()> {
    for (name, bytes) in &files.files {
        write_file(&dir.join(name), bytes)?;
    }
    Ok(())
}

/// Creates an output directory (and parents).
pub fn ensure_dir(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir)
        .with_context(|| format!("{}: cannot create output directory", dir.display()))
}
