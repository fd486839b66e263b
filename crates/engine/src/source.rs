//! Source files: reading them safely (size, UTF-8, directories) and parsing YAML into types.
//!
//! Both profiles and rule files come through here, so every YAML error reads the same way: the
//! file, the line and column, the field path (tracked with `serde_path_to_error`, since
//! serde-saphyr's own messages do not name the field) and a snippet.

use std::cell::RefCell;
use std::io::Read;
use std::path::Path;
use std::sync::Arc;

use serde::de::DeserializeOwned;

use crate::error::{Error, ErrorKind, Position, Result};

/// The largest profile or rule file read, in bytes. Larger files are refused before parsing.
pub const MAX_FILE_BYTES: u64 = 1024 * 1024;

/// The extensions of YAML files.
pub const YAML_EXTENSIONS: &[&str] = &["yaml", "yml"];

/// The entries directly in `dir` whose extension is one of `extensions` (any case), in name
/// order, folders left out. A link is listed whether or not it leads anywhere, and so is a
/// FIFO or a device: reading it says what is wrong, so that nothing is left out without a word.
/// Every command that takes a folder (rules, cases, profiles) lists it this way.
///
/// # Errors
/// The folder cannot be read; callers word the error for what the folder was meant to hold.
pub fn files_in(dir: &Path, extensions: &[&str]) -> std::io::Result<Vec<std::path::PathBuf>> {
    let mut files: Vec<std::path::PathBuf> = std::fs::read_dir(dir)?
        .filter_map(std::result::Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            !p.is_dir()
                && p.extension()
                    .is_some_and(|x| extensions.iter().any(|e| x.eq_ignore_ascii_case(e)))
        })
        .collect();
    files.sort();
    Ok(files)
}

/// The bytes a rules folder may hold in all (rule files, quote sheets, templates, cases):
/// about thirty times the default policy's 360 KiB. Each file is also held to
/// [`MAX_FILE_BYTES`].
pub const MAX_FOLDER_BYTES: u64 = 8 * 1024 * 1024;

/// A folder read file by file, each held to being a regular file inside it (a link may lead
/// elsewhere in the folder, never out of it), and all of them together to
/// [`MAX_FOLDER_BYTES`].
#[derive(Debug)]
pub struct Folder {
    /// The folder as the user named it, for messages.
    name: String,
    /// The folder with its links resolved, which every file's resolved path must be inside.
    root: std::path::PathBuf,
    what: &'static str,
    read: u64,
    total: u64,
}

impl Folder {
    /// Starts reading the folder `dir` (a rules folder: `what` names it in messages), its
    /// files held to `total` bytes in all ([`MAX_FOLDER_BYTES`] for a rules folder).
    ///
    /// # Errors
    /// The folder's own path cannot be resolved.
    pub fn new(dir: &Path, what: &'static str, total: u64) -> Result<Self> {
        let name = dir.display().to_string();
        let root =
            std::fs::canonicalize(dir).map_err(|e| read_error(&e, ErrorKind::Rules, &name))?;
        Ok(Folder {
            name,
            root,
            what,
            read: 0,
            total,
        })
    }

    /// Reads `path`, a file of the folder, as [`Source::read`] does, after checking that it
    /// leads to a regular file inside the folder and that the folder's total stays in bounds.
    ///
    /// # Errors
    /// A link to nothing or out of the folder, a FIFO, device or socket, a file that cannot be
    /// read or is over a limit.
    pub fn read(&mut self, path: &Path, kind: ErrorKind) -> Result<Source> {
        let name = path.display().to_string();
        let link = std::fs::symlink_metadata(path)
            .is_ok_and(|m| m.file_type().is_symlink())
            .then(|| std::fs::read_link(path).ok())
            .flatten();
        let resolved = std::fs::canonicalize(path).map_err(|e| match (&link, e.kind()) {
            (Some(to), std::io::ErrorKind::NotFound) => Error::new(
                kind,
                format!(
                    "is a link to {}, which does not exist: the {} would lose what it held",
                    to.display(),
                    self.what
                ),
            )
            .in_file(&name)
            .help("remove the link or restore the file it names"),
            _ => read_error(&e, kind, &name),
        })?;
        if !resolved.starts_with(&self.root) {
            return Err(Error::new(
                kind,
                format!(
                    "is a link to {}, outside the {} {}: its files are read only from inside it",
                    resolved.display(),
                    self.what,
                    self.name
                ),
            )
            .in_file(&name)
            .help("copy the file into the folder instead of linking to it"));
        }
        let meta = std::fs::metadata(&resolved).map_err(|e| read_error(&e, kind, &name))?;
        if !meta.is_file() {
            return Err(Error::new(
                kind,
                format!(
                    "is {}, not a regular file: a {} holds text files",
                    file_kind(&meta),
                    self.what
                ),
            )
            .in_file(&name));
        }
        let left = self.total.saturating_sub(self.read);
        if meta.len() > left {
            return Err(Error::new(
                kind,
                format!(
                    "the {} {} is larger than the limit of {} bytes ({} MiB) in all",
                    self.what,
                    self.name,
                    self.total,
                    self.total / (1024 * 1024)
                ),
            )
            .in_file(&name)
            .help("a policy is a few hundred KiB of YAML, sheets and templates; remove what it does not use"));
        }
        let source = Source::read_as(&resolved, &name, kind, MAX_FILE_BYTES.min(left))?;
        self.read += source.text.len() as u64;
        Ok(source)
    }
}

/// Whether `path` leads to a regular file; if not, what it is instead, in words.
///
/// # Errors
/// The words: a link to nothing, a FIFO, a device, a socket, a file that cannot be read.
pub fn regular_file(path: &Path) -> std::result::Result<(), String> {
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_file() => Ok(()),
        Ok(meta) => Err(format!("is {}, not a regular file", file_kind(&meta))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Err("is a link to a file that does not exist".to_owned())
        }
        Err(e) => Err(read_error(&e, ErrorKind::Profile, "").message().to_owned()),
    }
}

/// What a file that is not a regular file or a folder is, in words.
fn file_kind(meta: &std::fs::Metadata) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let t = meta.file_type();
        if t.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if t.is_socket() {
            return "a socket";
        }
        if t.is_char_device() || t.is_block_device() {
            return "a device";
        }
    }
    if meta.is_dir() {
        "a folder"
    } else {
        "not a regular file"
    }
}

/// The file name at the end of a source's name (`rules/quotes/2026-09-04-marketplace.csv` →
/// `2026-09-04-marketplace.csv`), whichever separator the name uses.
#[must_use]
pub fn file_name(name: &str) -> &str {
    name.rsplit(['/', '\\']).next().unwrap_or(name)
}

/// A text file in memory with the name errors use for it.
#[derive(Debug, Clone)]
pub struct Source {
    pub name: String,
    pub text: Arc<str>,
}

impl Source {
    /// A source from text already in memory (embedded files, tests, stdin).
    pub fn new(name: impl Into<String>, text: impl Into<Arc<str>>) -> Self {
        Source {
            name: name.into(),
            text: text.into(),
        }
    }

    /// Reads `path`, refusing directories, files over [`MAX_FILE_BYTES`] and invalid UTF-8.
    /// `kind` says whose fault a bad file is (profile or rules).
    pub fn read(path: &Path, kind: ErrorKind) -> Result<Self> {
        Self::read_up_to(path, kind, MAX_FILE_BYTES)
    }

    /// Reads `path` like [`Source::read`], with a size limit of `limit` bytes.
    pub fn read_up_to(path: &Path, kind: ErrorKind, limit: u64) -> Result<Self> {
        Self::read_as(path, &path.display().to_string(), kind, limit)
    }

    /// Reads `path` like [`Source::read_up_to`], named `name` in errors and in the source.
    fn read_as(path: &Path, name: &str, kind: ErrorKind, limit: u64) -> Result<Self> {
        let name = name.to_owned();
        let io = |e: std::io::Error| read_error(&e, kind, &name);
        let meta = std::fs::metadata(path).map_err(io)?;
        if meta.is_dir() {
            return Err(Error::new(kind, "is a directory, expected a YAML file").in_file(&name));
        }
        let file = std::fs::File::open(path).map_err(io)?;
        let bytes = read_limited(file, limit).map_err(io)?;
        Self::from_bytes(&name, bytes, kind, limit)
    }

    /// One profile of a batch input (a line of JSON lines, a document of a YAML stream) as
    /// read, checked like a file: not binary, UTF-8 (errors point at the line within `bytes`).
    pub fn from_profile_bytes(name: &str, bytes: Vec<u8>) -> Result<Self> {
        Self::from_bytes(name, Some(bytes), ErrorKind::Profile, MAX_FILE_BYTES)
    }

    /// Reads standard input under the same limits, named `<stdin>`.
    pub fn stdin(kind: ErrorKind) -> Result<Self> {
        Self::stdin_up_to(kind, MAX_FILE_BYTES)
    }

    /// Reads standard input with a size limit of `limit` bytes.
    pub fn stdin_up_to(kind: ErrorKind, limit: u64) -> Result<Self> {
        let bytes = read_limited(std::io::stdin().lock(), limit)
            .map_err(|e| Error::new(kind, format!("cannot read standard input: {e}")))?;
        Self::from_bytes("<stdin>", bytes, kind, limit)
    }

    fn from_bytes(name: &str, bytes: Option<Vec<u8>>, kind: ErrorKind, limit: u64) -> Result<Self> {
        let Some(bytes) = bytes else {
            let mib = limit / (1024 * 1024);
            return Err(Error::new(
                kind,
                format!("file is larger than the limit of {limit} bytes ({mib} MiB)"),
            )
            .in_file(name)
            .help("profiles and rule files are small YAML documents; split or trim the file"));
        };
        if bytes.contains(&0) {
            let text = if name.to_ascii_lowercase().ends_with(".csv") {
                "CSV"
            } else {
                "YAML"
            };
            return Err(Error::new(
                kind,
                format!("file looks binary (it contains NUL bytes), expected {text} text"),
            )
            .in_file(name));
        }
        match String::from_utf8(bytes) {
            Ok(text) => Ok(Source::new(name, text)),
            Err(e) => {
                let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
                let prefix = String::from_utf8_lossy(valid);
                let line = prefix.matches('\n').count() + 1;
                let column = prefix.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
                Err(Error::new(kind, "file is not valid UTF-8 text")
                    .in_file(name)
                    .at(name, &Arc::from(""), Some(Position { line, column }))
                    .help("save the file as UTF-8"))
            }
        }
    }

    /// Parses the whole file as one YAML document into `T`, with strict booleans.
    pub fn parse_yaml<T: DeserializeOwned>(&self, kind: ErrorKind) -> Result<T> {
        if self.text.trim().is_empty() || only_comments(&self.text) {
            return Err(Error::new(kind, "file is empty, expected a YAML mapping")
                .at(&self.name, &self.text, None));
        }
        read_yaml(&self.text).map_err(|refusal| self.refused(kind, &refusal, refusal.position))
    }

    /// The error `refusal` of the YAML reader is, worded for people, pointing at `position` of
    /// this source's text (the refusal's own, or its place in this text when the refusal was
    /// of a copy with faults masked: [`crate::profile`]'s every-fault pass).
    pub(crate) fn refused(
        &self,
        kind: ErrorKind,
        refusal: &Refusal,
        position: Option<Position>,
    ) -> Error {
        let (message, help) = crate::error::split_help(&refusal.message);
        let mut error = Error::new(kind, humanize(message)).at(&self.name, &self.text, position);
        error = error.field(&refusal.path);
        if let Some(help) = help {
            error = error.help(help);
        }
        if message.starts_with("unknown field") || message.starts_with("unknown variant") {
            if let Some(hint) = unknown_field_hint(message) {
                error = error.help(hint);
            }
        } else if message.starts_with("tabs disallowed") {
            error = error.help("indent with spaces; YAML does not allow tabs for indentation");
        } else if message.starts_with("multiple YAML documents") {
            error = error.help("one file holds one document: remove the `---` line and what follows, or split the file");
        } else if message.contains("budget breached") || message.starts_with("recursion limit") {
            error = error.help(
                "write the values out without anchors and aliases, and keep nesting shallow; \
                 profiles and rule files are small documents",
            );
        }
        error
    }
}

/// What the YAML reader refused, before it is worded as an [`Error`]: its message (without its
/// location suffix), the path of the field it was reading and where in the text.
#[derive(Debug, Clone)]
pub(crate) struct Refusal {
    pub message: String,
    pub path: String,
    pub position: Option<Position>,
}

impl Refusal {
    /// The refusal is of the text as YAML (a scanner's error: a tab, an unclosed quote) or of
    /// the document as a whole (not a mapping), not of a field: no field is being read, and no
    /// field is missing from the top.
    pub fn is_syntax(&self) -> bool {
        (self.path.is_empty() || self.path == ".") && !self.message.starts_with("missing field")
    }
}

/// Reads `text` as one YAML document into `T`, with strict booleans.
pub(crate) fn read_yaml<T: DeserializeOwned>(text: &str) -> std::result::Result<T, Refusal> {
    let options = serde_saphyr::options! { strict_booleans: true };
    // Most files are valid: parse without path tracking first (about a fifth faster), and
    // parse again with it only to word an error.
    let fast = serde_saphyr::from_str_with_options::<T>(text, options.clone());
    if let Ok(value) = fast {
        return Ok(value);
    }
    let path = RefCell::new(String::new());
    let parsed = serde_saphyr::with_deserializer_from_str_with_options(text, options, |de| {
        serde_path_to_error::deserialize::<_, T>(de).map_err(|e| {
            // `Spanned<T>` shows up as a `value` step after a list index; people wrote
            // `offers[0].price`, not `offers[0].value.price`.
            *path.borrow_mut() = e.path().to_string().replace("].value.", "].");
            e.into_inner()
        })
    });
    parsed.map_err(|e| {
        let position = e.location().map(|l| Position {
            line: usize::try_from(l.line()).unwrap_or(usize::MAX),
            column: usize::try_from(l.column()).unwrap_or(usize::MAX),
        });
        let raw = e.without_snippet().to_string();
        Refusal {
            message: strip_location_suffix(&raw).to_owned(),
            path: path.into_inner(),
            position,
        }
    })
}

/// A file that cannot be opened or read, in plain words (`file not found`), for `kind`.
pub fn read_error(e: &std::io::Error, kind: ErrorKind, name: &str) -> Error {
    let message = match e.kind() {
        std::io::ErrorKind::NotFound => "file not found".to_owned(),
        std::io::ErrorKind::PermissionDenied => "permission denied".to_owned(),
        _ => format!("cannot read file: {e}"),
    };
    Error::new(kind, message).in_file(name)
}

fn only_comments(text: &str) -> bool {
    text.lines()
        .all(|l| l.trim().is_empty() || l.trim_start().starts_with('#') || l.trim() == "---")
}

fn read_limited(reader: impl Read, limit: u64) -> std::io::Result<Option<Vec<u8>>> {
    let mut bytes = Vec::new();
    reader.take(limit + 1).read_to_end(&mut bytes)?;
    Ok((bytes.len() as u64 <= limit).then_some(bytes))
}

fn strip_location_suffix(message: &str) -> &str {
    match message.rfind(" at line ") {
        Some(i) if message[i..].contains(", column ") => &message[..i],
        _ => message,
    }
}

/// Plainer words for serde's terse type names and the YAML library's own vocabulary.
fn humanize(message: &str) -> String {
    if let Some(rest) = message.strip_prefix("duplicate mapping key: ") {
        let key = rest
            .split(", set DuplicateKeyPolicy")
            .next()
            .unwrap_or(rest);
        return format!("the key `{key}` is given twice; each key may appear once");
    }
    if message.contains("budget breached") {
        return "the YAML expands beyond the size allowed (anchors and aliases, or very many \
                nodes), so it was refused before it could use up memory"
            .to_owned();
    }
    if message.starts_with("recursion limit exceeded") {
        return "the YAML is nested too deeply".to_owned();
    }
    if message.starts_with("multiple YAML documents detected") {
        return "the file holds more than one YAML document (a `---` line separates them)"
            .to_owned();
    }
    if let Some(field) = message
        .strip_prefix("missing field `")
        .and_then(|r| r.strip_suffix('`'))
    {
        return format!("the required field `{field}` is missing");
    }
    if let Some((found, expected)) = message
        .strip_prefix("invalid type: ")
        .and_then(|r| r.split_once(", expected "))
    {
        let found = match found {
            "sequence" => "a list",
            "map" => "a mapping",
            "unit value" => "nothing (null)",
            other => other,
        };
        return format!("expected {expected}; found {found}");
    }
    // A rule file's NaN or infinity (a profile's fields word their own refusal).
    if let Some(found) = message
        .strip_prefix("non-finite float ")
        .and_then(|r| r.strip_suffix(" rejected by the configured policy"))
    {
        return format!("expected a finite number; found {found}");
    }
    let replacements = [
        ("invalid u32", "expected a whole number of 0 or more"),
        ("invalid u64", "expected a whole number of 0 or more"),
        ("invalid i64", "expected a whole number"),
        ("invalid i128", "expected a whole number"),
        ("invalid u128", "expected a whole number of 0 or more"),
        ("invalid floating point", "expected a number"),
        (
            "expected mapping start",
            "expected a mapping (key: value lines)",
        ),
        ("expected sequence start", "expected a list"),
        ("expected string scalar", "expected a text value"),
    ];
    for (from, to) in replacements {
        if let Some(rest) = message.strip_prefix(from) {
            return format!("{to}{rest}");
        }
    }
    message.to_owned()
}

/// "did you mean" for `unknown field `x`, expected one of a, b` messages.
fn unknown_field_hint(message: &str) -> Option<String> {
    let start = message.find('`')? + 1;
    let end = start + message[start..].find('`')?;
    let word = &message[start..end];
    let list = message.split("expected one of ").nth(1)?;
    let candidates: Vec<&str> = list
        .split(", ")
        .map(|c| c.trim_matches('`').trim())
        .collect();
    crate::error::suggest(word, candidates.iter().copied()).map(|c| format!("did you mean `{c}`?"))
}
