//! Output files written atomically: a temporary file in the same folder (`.decide-` and six
//! random characters), renamed over the target only once complete, and removed on any error or
//! interruption, so the target is either its old self or the complete new file.

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use decide::error::{Error, ErrorKind, Result};

/// The prefix of the temporary files beside an output file; a process killed outright
/// (`SIGKILL`) leaves one behind.
pub const TEMP_PREFIX: &str = ".decide-";

/// An output file being written: its temporary file until [`AtomicFile::commit`]; dropped
/// without it, the temporary file is removed and the target left as it was.
pub struct AtomicFile {
    path: PathBuf,
    tmp: BufWriter<tempfile::NamedTempFile>,
}

impl AtomicFile {
    /// Starts writing `path`: creates the temporary file beside it.
    ///
    /// # Errors
    /// `path` is a folder, or the temporary file cannot be created.
    pub fn create(path: &Path) -> Result<Self> {
        if path.is_dir() {
            return Err(Error::new(
                ErrorKind::Io,
                "--output is a directory, expected a file path",
            )
            .in_file(path.display().to_string()));
        }
        let dir = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let mut builder = tempfile::Builder::new();
        builder.prefix(TEMP_PREFIX);
        // A temporary file is private (0600) by default; the output is a file like any other,
        // created with the mode the user's umask gives (0644 under the usual 022).
        #[cfg(unix)]
        builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666));
        let tmp = builder
            .tempfile_in(dir)
            .map_err(|e| fail(path, "cannot create a temporary file", &e))?;
        Ok(AtomicFile {
            path: path.to_owned(),
            tmp: BufWriter::new(tmp),
        })
    }

    /// Appends `bytes`.
    ///
    /// # Errors
    /// The write failed (a full disk, say).
    pub fn write(&mut self, bytes: &[u8]) -> Result<()> {
        self.tmp
            .write_all(bytes)
            .map_err(|e| fail(&self.path, "write failed", &e))
    }

    /// Syncs the temporary file and renames it over the target.
    ///
    /// # Errors
    /// The last writes, the sync or the rename failed; the target is unchanged.
    pub fn commit(self) -> Result<()> {
        let path = self.path;
        let tmp = self
            .tmp
            .into_inner()
            .map_err(|e| fail(&path, "write failed", e.error()))?;
        tmp.as_file()
            .sync_all()
            .map_err(|e| fail(&path, "write failed", &e))?;
        tmp.persist(&path)
            .map_err(|e| fail(&path, "rename failed", &e.error))?;
        Ok(())
    }
}

/// Writes `bytes` to `path` through a temporary file in the same folder and a rename, so the
/// file is either the old one or the complete new one, never half written.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut file = AtomicFile::create(path)?;
    file.write(bytes)?;
    file.commit()
}

fn fail(path: &Path, what: &str, e: &dyn std::fmt::Display) -> Error {
    Error::new(ErrorKind::Io, format!("cannot write output: {what}: {e}"))
        .in_file(path.display().to_string())
}
