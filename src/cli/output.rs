//! Output files. A regular file (or a link to one) is written atomically: a temporary file in
//! the folder the links lead to (`.decide-` and six random characters), given the old file's
//! mode, renamed over the target only once complete and removed on any error or interruption,
//! so the target is either its old self or the complete new file, and a link stays a link. A
//! device, FIFO or socket (`/dev/null`) and a descriptor (`/dev/stdout`, `/dev/fd/3`) are
//! written in place: replacing them would replace the device or the link. An output that is one
//! of the command's inputs (the same file, by device and inode: through a link, a hard link or
//! another spelling of its path, or behind standard input) is refused before anything is
//! written.

use std::fs::{File, Permissions};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use decide_engine::error::{Error, ErrorKind, Result};

/// The prefix of the temporary files beside an output file; a process killed outright
/// (`SIGKILL`) leaves one behind.
pub const TEMP_PREFIX: &str = ".decide-";

/// The most links followed from an output path, as the kernel's own limit (`ELOOP`).
const MAX_LINKS: usize = 40;

/// An output being written. A regular file stays a temporary file until
/// [`OutputFile::commit`]; dropped without it, the temporary file is removed and the target
/// left as it was.
pub struct OutputFile {
    /// The path as the user gave it, for messages.
    path: PathBuf,
    sink: Sink,
}

enum Sink {
    /// The temporary file and the file it becomes.
    Temp(BufWriter<tempfile::NamedTempFile>, PathBuf),
    Direct(BufWriter<File>),
    Stdout,
    Stderr,
}

/// Where an output path leads once its links are followed.
#[derive(Debug)]
enum Target {
    /// A regular file, or none yet: written through a temporary file beside it, with the mode
    /// the file has now.
    File {
        path: PathBuf,
        mode: Option<Permissions>,
    },
    /// A device, FIFO or socket, or a descriptor other than 1 and 2: opened and written.
    Direct(PathBuf),
    Stdout,
    Stderr,
}

/// The files a command reads, so that none of them is also its output.
#[derive(Debug, Default)]
pub struct Inputs {
    #[cfg(unix)]
    ids: std::collections::HashSet<(u64, u64)>,
}

impl Inputs {
    /// The inputs among `paths` that are files: each by the file it leads to (through links,
    /// hard links and spellings alike), `-` by the file standard input reads when that is a
    /// file (`decide - < p.yaml`); missing paths are left out.
    pub fn of<'a>(paths: impl IntoIterator<Item = &'a Path>) -> Self {
        let mut inputs = Inputs::default();
        for path in paths {
            inputs.add(path);
        }
        inputs
    }

    fn add(&mut self, path: &Path) {
        #[cfg(unix)]
        {
            let id = if path == Path::new("-") {
                stdin_id()
            } else {
                file_id(path)
            };
            self.ids.extend(id);
        }
        #[cfg(not(unix))]
        let _ = path;
    }

    /// An error when `path` is one of the inputs.
    ///
    /// # Errors
    /// `path` leads to the same file as one of the inputs.
    pub fn refuse(&self, path: &Path) -> Result<()> {
        #[cfg(unix)]
        if file_id(path).is_some_and(|id| self.ids.contains(&id)) {
            return Err(Error::new(
                ErrorKind::Usage,
                "the output is one of the inputs: writing it would replace what was read",
            )
            .in_file(path.display().to_string())
            .help("write the output to another file"));
        }
        #[cfg(not(unix))]
        let _ = path;
        Ok(())
    }
}

/// The device and inode of the file `path` leads to, if it exists.
#[cfg(unix)]
fn file_id(path: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

/// The device and inode of the file standard input reads (`fstat` of descriptor 0, through a
/// duplicate of it), when that is a regular file: a pipe or a terminal is no file an output
/// could replace.
#[cfg(unix)]
fn stdin_id() -> Option<(u64, u64)> {
    use std::os::fd::AsFd;
    use std::os::unix::fs::MetadataExt;
    let fd = std::io::stdin().as_fd().try_clone_to_owned().ok()?;
    let meta = File::from(fd).metadata().ok()?;
    meta.is_file().then(|| (meta.dev(), meta.ino()))
}

impl OutputFile {
    /// Starts writing `path`: checks it is none of `inputs`, follows its links, and creates
    /// the temporary file beside a regular file or opens a device, FIFO or descriptor.
    ///
    /// # Errors
    /// `path` is a folder or one of the inputs, its links cannot be followed, or the temporary
    /// file or the device cannot be opened.
    pub fn create(path: &Path, inputs: &Inputs) -> Result<Self> {
        inputs.refuse(path)?;
        let sink = match target(path)? {
            Target::Stdout => Sink::Stdout,
            Target::Stderr => Sink::Stderr,
            Target::Direct(device) => Sink::Direct(BufWriter::new(
                std::fs::OpenOptions::new()
                    .append(true)
                    .open(&device)
                    .map_err(|e| fail(path, "cannot open it", &e))?,
            )),
            Target::File { path: file, mode } => {
                Sink::Temp(BufWriter::new(temporary(path, &file, mode)?), file)
            }
        };
        Ok(OutputFile {
            path: path.to_owned(),
            sink,
        })
    }

    /// Appends `bytes`.
    ///
    /// # Errors
    /// The write failed (a full disk, say).
    pub fn write(&mut self, bytes: &[u8]) -> Result<()> {
        let written = match &mut self.sink {
            Sink::Temp(w, _) => w.write_all(bytes),
            Sink::Direct(w) => w.write_all(bytes),
            Sink::Stdout => std::io::stdout().lock().write_all(bytes),
            Sink::Stderr => std::io::stderr().lock().write_all(bytes),
        };
        written.map_err(|e| fail(&self.path, "write failed", &e))
    }

    /// Ends the output: a temporary file is synced and renamed over its target; a device or
    /// descriptor is flushed.
    ///
    /// # Errors
    /// The last writes, the sync or the rename failed; a file target is unchanged.
    pub fn commit(self) -> Result<()> {
        let path = self.path;
        match self.sink {
            Sink::Temp(w, target) => {
                let tmp = w
                    .into_inner()
                    .map_err(|e| fail(&path, "write failed", e.error()))?;
                tmp.as_file()
                    .sync_all()
                    .map_err(|e| fail(&path, "write failed", &e))?;
                tmp.persist(&target)
                    .map_err(|e| fail(&path, "rename failed", &e.error))?;
                Ok(())
            }
            Sink::Direct(mut w) => w.flush().map_err(|e| fail(&path, "write failed", &e)),
            Sink::Stdout => std::io::stdout()
                .flush()
                .map_err(|e| fail(&path, "write failed", &e)),
            Sink::Stderr => std::io::stderr()
                .flush()
                .map_err(|e| fail(&path, "write failed", &e)),
        }
    }
}

/// The temporary file for `file` (where `path`'s links lead), with the mode `file` has now,
/// or the mode any new file gets (the umask's) when there is none.
fn temporary(
    path: &Path,
    file: &Path,
    mode: Option<Permissions>,
) -> Result<tempfile::NamedTempFile> {
    let dir = match file.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let mut builder = tempfile::Builder::new();
    builder.prefix(TEMP_PREFIX);
    // A temporary file is private (0600) by default; a new output is a file like any other,
    // created with the mode the user's umask gives (0644 under the usual 022).
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666));
    let tmp = builder
        .tempfile_in(dir)
        .map_err(|e| fail(path, "cannot create a temporary file", &e))?;
    if let Some(mode) = mode {
        // The umask applies at creation; the old file's mode (0600, say) is set exactly.
        tmp.as_file()
            .set_permissions(mode)
            .map_err(|e| fail(path, "cannot keep the file's mode", &e))?;
    }
    Ok(tmp)
}

/// Follows `path`'s links to what it names: a regular file (or nothing yet), a device, or
/// a descriptor.
fn target(path: &Path) -> Result<Target> {
    let mut current = path.to_owned();
    for _ in 0..MAX_LINKS {
        if let Some(fd) = descriptor(&current) {
            return Ok(match fd {
                1 => Target::Stdout,
                2 => Target::Stderr,
                _ => Target::Direct(current),
            });
        }
        let meta = match std::fs::symlink_metadata(&current) {
            Ok(meta) => meta,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Target::File {
                    path: current,
                    mode: None,
                });
            }
            Err(e) => return Err(fail(path, "cannot read it", &e)),
        };
        let kind = meta.file_type();
        if kind.is_symlink() {
            let link = std::fs::read_link(&current)
                .map_err(|e| fail(path, "cannot follow its link", &e))?;
            current = match current.parent() {
                Some(dir) if link.is_relative() => dir.join(link),
                _ => link,
            };
        } else if kind.is_dir() {
            return Err(Error::new(
                ErrorKind::Io,
                "cannot write output: it is a folder, expected a file path",
            )
            .in_file(path.display().to_string()));
        } else if kind.is_file() {
            return Ok(Target::File {
                path: current,
                mode: Some(meta.permissions()),
            });
        } else {
            return Ok(Target::Direct(current));
        }
    }
    Err(Error::new(
        ErrorKind::Io,
        format!("cannot write output: more than {MAX_LINKS} links to follow"),
    )
    .in_file(path.display().to_string()))
}

/// The descriptor a path names (`/dev/stdout`, `/dev/fd/N`, `/proc/self/fd/N`), if it names one.
fn descriptor(path: &Path) -> Option<u32> {
    let text = path.to_str()?;
    match text {
        "/dev/stdout" => return Some(1),
        "/dev/stderr" => return Some(2),
        _ => {}
    }
    let number = text
        .strip_prefix("/dev/fd/")
        .or_else(|| text.strip_prefix("/proc/self/fd/"))
        .or_else(|| {
            let rest = text.strip_prefix("/proc/")?;
            let (pid, fd) = rest.split_once("/fd/")?;
            (pid == std::process::id().to_string()).then_some(fd)
        })?;
    number.parse().ok()
}

/// Writes `bytes` to `path` as [`OutputFile`] does: whole or not at all for a file, in place
/// for a device or descriptor.
pub fn write_output(path: &Path, inputs: &Inputs, bytes: &[u8]) -> Result<()> {
    let mut file = OutputFile::create(path, inputs)?;
    file.write(bytes)?;
    file.commit()
}

fn fail(path: &Path, what: &str, e: &dyn std::fmt::Display) -> Error {
    Error::new(ErrorKind::Io, format!("cannot write output: {what}: {e}"))
        .in_file(path.display().to_string())
}
