//! Batch inputs read as they are needed: each file (or standard input) is split into profiles
//! line by line, JSON lines one profile a line and YAML streams one a document, each held to the
//! size limit of one profile file, so a fleet of any length is read in constant memory.

use std::collections::HashSet;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use super::{Item, Unread, is_json_lines, safe_label};
use decide_engine::error::{Error, ErrorKind, Position, Result};
use decide_engine::source::{MAX_FILE_BYTES, Source};

/// The extensions of the files a folder input gives, in name order.
pub const PROFILE_EXTENSIONS: &[&str] = &["yaml", "yml", "json", "jsonl", "ndjson"];

/// One input to read: standard input or a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    Stdin,
    File(PathBuf),
    /// A folder's entry that is not a regular file (a FIFO, a device, a link to nothing): one
    /// failed profile, with why, rather than one left out or a read that never ends.
    Refused {
        path: PathBuf,
        why: String,
    },
}

/// The inputs the command line names (`-` is standard input, a folder gives its profile files
/// in name order), each file checked up front.
///
/// # Errors
/// A missing input or a folder that cannot be listed: nothing is decided then, because a
/// batch with a missing input is not the batch that was asked for.
pub fn resolve(paths: &[PathBuf]) -> Result<Vec<Input>> {
    let mut inputs = Vec::new();
    for path in paths {
        if path == Path::new("-") {
            inputs.push(Input::Stdin);
        } else if path.is_dir() {
            let files = decide_engine::source::files_in(path, PROFILE_EXTENSIONS).map_err(|e| {
                Error::new(ErrorKind::Io, format!("cannot read folder: {e}"))
                    .in_file(path.display().to_string())
            })?;
            inputs.extend(
                files
                    .into_iter()
                    .map(|file| match decide_engine::source::regular_file(&file) {
                        Ok(()) => Input::File(file),
                        Err(why) => Input::Refused { path: file, why },
                    }),
            );
        } else {
            std::fs::metadata(path).map_err(|e| {
                decide_engine::source::read_error(
                    &e,
                    ErrorKind::Profile,
                    &path.display().to_string(),
                )
            })?;
            inputs.push(Input::File(path.clone()));
        }
    }
    Ok(inputs)
}

/// The profiles of a list of inputs, read one at a time: each is an [`Item`], or an [`Unread`]:
/// where a profile is and why it cannot be read (a line or document over the size limit, not
/// UTF-8, binary, an input that cannot be opened), which counts as one failed profile.
pub struct Profiles {
    inputs: std::vec::IntoIter<Input>,
    current: Option<Splitter>,
    /// Labels handed out so far, kept only when they must be unique (memo file names).
    labels: Option<HashSet<String>>,
}

impl Profiles {
    #[must_use]
    pub fn new(inputs: Vec<Input>) -> Self {
        Profiles {
            inputs: inputs.into_iter(),
            current: None,
            labels: None,
        }
    }

    /// Makes every label unique across the inputs (`name`, `name-2`, ...), as files named by
    /// them need; this keeps every label in memory.
    #[must_use]
    pub fn unique_labels(mut self) -> Self {
        self.labels = Some(HashSet::new());
        self
    }
}

impl Iterator for Profiles {
    type Item = Result<Item, Unread>;

    fn next(&mut self) -> Option<Result<Item, Unread>> {
        loop {
            if let Some(splitter) = &mut self.current {
                if let Some(mut next) = splitter.next() {
                    if let (Ok(item), Some(labels)) = (&mut next, &mut self.labels) {
                        let base = item.label.clone();
                        let mut n = 1;
                        while !labels.insert(item.label.clone()) {
                            n += 1;
                            item.label = format!("{base}-{n}");
                        }
                    }
                    return Some(next);
                }
                self.current = None;
            }
            self.current = Some(match self.inputs.next()? {
                Input::Stdin => Splitter::new(
                    "<stdin>".to_owned(),
                    Ok(Box::new(BufReader::new(std::io::stdin()))),
                ),
                Input::File(path) => {
                    let name = path.display().to_string();
                    let file = std::fs::File::open(&path)
                        .map(|f| Box::new(BufReader::new(f)) as Box<dyn BufRead + Send>)
                        .map_err(|e| {
                            decide_engine::source::read_error(&e, ErrorKind::Profile, &name)
                        });
                    Splitter::new(name, file)
                }
                Input::Refused { path, why } => {
                    let name = path.display().to_string();
                    let error = Error::new(ErrorKind::Profile, why).in_file(&name);
                    Splitter::new(name, Err(error))
                }
            });
        }
    }
}

/// How many profiles `inputs` hold, read through once as [`Profiles`] reads them (an input that
/// cannot be read counts as its one failed profile); `None` when an input can be read only
/// once (standard input, a pipe, a device), so that its profiles are not known before they
/// are decided.
#[must_use]
pub fn count(inputs: &[Input]) -> Option<usize> {
    let once = inputs.iter().any(|input| match input {
        Input::Stdin => true,
        Input::File(path) => !std::fs::metadata(path).is_ok_and(|m| m.is_file()),
        Input::Refused { .. } => false,
    });
    (!once).then(|| Profiles::new(inputs.to_vec()).count())
}

/// Splits the profiles of one input that is already in memory (tests, benches).
#[must_use]
pub fn split(source: &Source) -> Vec<Result<Item, Unread>> {
    let bytes = source.text.as_bytes().to_vec();
    Splitter::new(
        source.name.clone(),
        Ok(Box::new(std::io::Cursor::new(bytes))),
    )
    .collect()
}

/// One profile's text as read, before it has its label.
struct Raw {
    first_line: usize,
    source: Result<Source>,
}

/// How an input is split, decided at its first line that is not blank.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    JsonLines,
    Yaml,
}

/// One input split into profiles as it is read.
struct Splitter {
    name: String,
    stem: String,
    reader: Option<Box<dyn BufRead + Send>>,
    /// An input that could not be opened: its one (failed) profile.
    failed: Option<Error>,
    /// Lines read so far.
    line: usize,
    mode: Option<Mode>,
    /// The YAML document being read: its bytes (or why it cannot be read), its first line,
    /// whether it has content (not only blank and comment lines).
    doc: Vec<u8>,
    doc_error: Option<Error>,
    doc_start: usize,
    doc_content: bool,
    /// Profiles read, and the one waiting for the next (whose existence decides its label).
    count: usize,
    pending: Option<Raw>,
    many: bool,
}

impl Splitter {
    fn new(name: String, reader: Result<Box<dyn BufRead + Send>>) -> Self {
        let stem = Path::new(&name)
            .file_stem()
            .map_or_else(|| "stdin".to_owned(), |s| safe_label(&s.to_string_lossy()));
        let (reader, failed) = match reader {
            Ok(r) => (Some(r), None),
            Err(e) => (None, Some(e)),
        };
        let mode = is_json_lines(&name, None).then_some(Mode::JsonLines);
        Splitter {
            name,
            stem,
            reader,
            failed,
            line: 0,
            mode,
            doc: Vec::new(),
            doc_error: None,
            doc_start: 1,
            doc_content: false,
            count: 0,
            pending: None,
            many: false,
        }
    }

    /// The next profile with its label: held back until the one after it is read, since the
    /// labels of an input of many profiles are numbered (`fleet-00001`) and of one are not.
    fn labelled(&mut self, raw: Raw) -> Result<Item, Unread> {
        self.count += 1;
        let label = if self.many {
            format!("{}-{:05}", self.stem, self.count)
        } else {
            self.stem.clone()
        };
        let syntax = if self.mode == Some(Mode::JsonLines) {
            decide_engine::Syntax::Json
        } else {
            decide_engine::Syntax::Yaml
        };
        match raw.source {
            Ok(source) => Ok(Item {
                source,
                first_line: raw.first_line,
                label,
                syntax,
            }),
            Err(error) => Err(Unread {
                source: self.name.clone(),
                line: raw.first_line,
                error,
            }),
        }
    }

    /// The next profile as read, or `None` at the end of the input.
    fn next_raw(&mut self) -> Option<Raw> {
        if let Some(e) = self.failed.take() {
            return Some(Raw {
                first_line: 1,
                source: Err(e),
            });
        }
        loop {
            let reader = self.reader.as_mut()?;
            let line = match read_line(reader) {
                Ok(Some(line)) => line,
                Ok(None) => {
                    self.reader = None;
                    return self.end_of_input();
                }
                Err(e) => {
                    // The rest of the input cannot be read: one failed profile, then the next input.
                    self.reader = None;
                    return Some(Raw {
                        first_line: self.line + 1,
                        source: Err(Error::new(
                            ErrorKind::Profile,
                            format!("cannot read file: {e}"),
                        )
                        .in_file(&self.name)),
                    });
                }
            };
            self.line += 1;
            if let Some(raw) = self.take_line(line) {
                return Some(raw);
            }
        }
    }

    /// Takes one line; returns a profile when the line completes one.
    fn take_line(&mut self, line: Line) -> Option<Raw> {
        let bytes = match &line {
            Line::Text(bytes) => bytes.as_slice(),
            Line::TooLong => b"",
        };
        let trimmed = bytes.trim_ascii();
        let content =
            matches!(line, Line::TooLong) || !(trimmed.is_empty() || trimmed.starts_with(b"#"));
        if self.mode.is_none() && content {
            let first = std::str::from_utf8(trimmed).ok();
            self.mode = Some(if is_json_lines("", first) {
                Mode::JsonLines
            } else {
                Mode::Yaml
            });
        }
        if self.mode == Some(Mode::JsonLines) {
            self.doc.clear();
            if !content {
                return None;
            }
            return Some(Raw {
                first_line: self.line,
                source: match line {
                    Line::Text(bytes) => self.source(bytes),
                    Line::TooLong => Err(self.too_long()),
                },
            });
        }
        let end = trim_newline(bytes);
        let marker = end == b"---" || end.starts_with(b"--- ") || end == b"...";
        if marker {
            let raw = self.finish_doc();
            self.doc_start = self.line + 1;
            return raw;
        }
        self.doc_content |= content;
        match line {
            _ if self.doc_error.is_some() => {}
            Line::TooLong => self.doc_error = Some(self.too_long()),
            Line::Text(bytes) => {
                if (self.doc.len() + bytes.len()) as u64 > MAX_FILE_BYTES {
                    self.doc_error = Some(self.too_long());
                    self.doc = Vec::new();
                } else {
                    self.doc.extend_from_slice(&bytes);
                }
            }
        }
        None
    }

    /// The YAML document read so far, if it has content.
    fn finish_doc(&mut self) -> Option<Raw> {
        let bytes = std::mem::take(&mut self.doc);
        let error = self.doc_error.take();
        if !std::mem::take(&mut self.doc_content) {
            return None;
        }
        Some(Raw {
            first_line: self.doc_start,
            source: match error {
                Some(e) => Err(e),
                None => self.source(bytes),
            },
        })
    }

    fn end_of_input(&mut self) -> Option<Raw> {
        let last = self.finish_doc();
        if last.is_none() && self.count == 0 && self.pending.is_none() {
            // An empty input is one (bad) profile, so that it is reported, not skipped.
            return Some(Raw {
                first_line: 1,
                source: Ok(Source::new(self.name.clone(), "")),
            });
        }
        last
    }

    /// A profile's text, checked like a file: UTF-8 and not binary, errors at the file's lines.
    fn source(&self, bytes: Vec<u8>) -> Result<Source> {
        Source::from_profile_bytes(&self.name, bytes)
            .map_err(|e| e.starting_at_line(self.doc_start_or_line()))
    }

    fn doc_start_or_line(&self) -> usize {
        if self.mode == Some(Mode::JsonLines) {
            self.line
        } else {
            self.doc_start
        }
    }

    fn too_long(&self) -> Error {
        let mib = MAX_FILE_BYTES / (1024 * 1024);
        Error::new(
            ErrorKind::Profile,
            format!("profile is larger than the limit of {MAX_FILE_BYTES} bytes ({mib} MiB)"),
        )
        .at(
            &self.name,
            &std::sync::Arc::from(""),
            Some(Position {
                line: self.line,
                column: 1,
            }),
        )
        .help("each profile of a batch (a line of JSON lines, a document of a YAML stream) is held to the size of a profile file")
    }
}

impl Iterator for Splitter {
    type Item = Result<Item, Unread>;

    fn next(&mut self) -> Option<Result<Item, Unread>> {
        loop {
            let next = self.next_raw();
            match (self.pending.take(), next) {
                (None, None) => return None,
                (None, Some(raw)) => self.pending = Some(raw),
                (Some(held), Some(raw)) => {
                    self.many = true;
                    self.pending = Some(raw);
                    return Some(self.labelled(held));
                }
                (Some(held), None) => return Some(self.labelled(held)),
            }
        }
    }
}

/// One line as read: its bytes with the newline, or too long to hold.
enum Line {
    Text(Vec<u8>),
    TooLong,
}

/// Reads one line of at most [`MAX_FILE_BYTES`] bytes; a longer one is read past and reported
/// as [`Line::TooLong`].
fn read_line(reader: &mut Box<dyn BufRead + Send>) -> std::io::Result<Option<Line>> {
    let mut bytes = Vec::new();
    let n = Read::take(&mut **reader, MAX_FILE_BYTES + 1).read_until(b'\n', &mut bytes)?;
    if n == 0 {
        return Ok(None);
    }
    if bytes.len() as u64 > MAX_FILE_BYTES && !bytes.ends_with(b"\n") {
        loop {
            bytes.clear();
            let n = Read::take(&mut **reader, 64 * 1024).read_until(b'\n', &mut bytes)?;
            if n == 0 || bytes.ends_with(b"\n") {
                return Ok(Some(Line::TooLong));
            }
        }
    }
    Ok(Some(Line::Text(bytes)))
}

fn trim_newline(bytes: &[u8]) -> &[u8] {
    let bytes = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    bytes.strip_suffix(b"\r").unwrap_or(bytes)
}
