//! The one error type: what went wrong, where (file, line, column, field), and what would be valid.
//!
//! Every failure a person can cause (a bad profile, a broken rules folder, a missing file, a bad
//! flag) becomes an [`Error`] with a [`ErrorKind`] that decides the exit code. An error that
//! code or tests tell apart also carries a [`Fault`]: what went wrong, with its data, from
//! which its message is written; nothing parses a message back. The message is
//! rendered with a source snippet by [`Error::render`], so the command line never has to know
//! how an error was found.

use std::fmt;
use std::ops::Range;

use annotate_snippets::{AnnotationKind, Group, Level, Renderer, Snippet};

/// What kind of input was at fault; decides the exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The workload profile is not valid.
    Profile,
    /// The rules folder (policy) or a template is not valid.
    Rules,
    /// Evaluating a valid policy over a valid profile failed (a policy bug found at run time).
    Eval,
    /// The decision breaks one of the policy's invariants: it contradicts itself, so it is
    /// refused rather than printed.
    Invariant,
    /// A file could not be read or written.
    Io,
    /// The command line itself is wrong.
    Usage,
    /// The person stopped the command (Ctrl-C at a prompt).
    Interrupted,
}

impl ErrorKind {
    /// The kind's name in machine-readable output (a batch's error records): `profile`,
    /// `rules`, `eval`, `invariant`, `io` or `usage`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::Profile => "profile",
            ErrorKind::Rules => "rules",
            ErrorKind::Eval => "eval",
            ErrorKind::Invariant => "invariant",
            ErrorKind::Io => "io",
            ErrorKind::Usage => "usage",
            ErrorKind::Interrupted => "interrupted",
        }
    }

    /// The process exit code for this kind: 2 for usage errors, 130 for an interruption (128 +
    /// SIGINT's number, as a shell reports a command that Ctrl-C ended), 1 for everything else.
    #[must_use]
    pub fn exit_code(self) -> i32 {
        match self {
            ErrorKind::Usage => 2,
            ErrorKind::Interrupted => 130,
            _ => 1,
        }
    }
}

/// What went wrong, with its data, for the errors that code and tests tell apart (a small
/// enum, as just's `CompileErrorKind` and minijinja's `ErrorKind` are): the error's message is
/// written from it. Most errors carry none: their message is for a person, and nothing matches
/// on it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Fault {
    /// A profile names an offer id the policy's catalog does not have at this date.
    UnknownOffer { id: String },
    /// The decision breaks the policy's invariant `id`: `message` is the invariant's own,
    /// rendered for the profile, `holds` the expression that did not hold and `verdict` what
    /// it gave (`gave false`, ...).
    InvariantViolated {
        id: String,
        message: String,
        holds: String,
        verdict: String,
    },
    /// The policy's offers are priced at `at` (`None`: each offer's newest quote), whose quotes
    /// are not those in force at `as_of`, the date decided at.
    PricedAt {
        at: Option<jiff::civil::Date>,
        as_of: jiff::civil::Date,
    },
    /// No quote sheet prices any offer by `as_of`.
    NothingOnOffer { as_of: jiff::civil::Date },
}

impl Fault {
    /// The kind of input at fault, which decides the exit code.
    #[must_use]
    pub fn kind(&self) -> ErrorKind {
        match self {
            Fault::UnknownOffer { .. } => ErrorKind::Profile,
            Fault::InvariantViolated { .. } => ErrorKind::Invariant,
            Fault::PricedAt { .. } | Fault::NothingOnOffer { .. } => ErrorKind::Usage,
        }
    }
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Fault::UnknownOffer { id } => write!(f, "unknown offer id `{id}`"),
            Fault::InvariantViolated { id, message, .. } => {
                write!(f, "invariant `{id}` violated: {message}")
            }
            Fault::PricedAt { at, as_of } => {
                f.write_str("the policy's offers are priced at ")?;
                match at {
                    Some(at) => write!(f, "{at}")?,
                    None => f.write_str("the newest quotes")?,
                }
                write!(f, ", which quote other prices than {as_of}")
            }
            Fault::NothingOnOffer { as_of } => write!(
                f,
                "nothing is on offer at {as_of}: no quote sheet prices any offer by then"
            ),
        }
    }
}

/// A place in a source file, 1-based.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Position {
    pub line: usize,
    pub column: usize,
}

/// The text of a file an error points into, with its display name.
#[derive(Debug, Clone)]
pub struct Origin {
    pub name: String,
    pub text: Option<std::sync::Arc<str>>,
    /// The position within `text`.
    pub position: Option<Position>,
    /// The line of the file `text` starts at (1 unless `text` is one document of a stream).
    pub first_line: usize,
}

impl Origin {
    /// The position in the whole file.
    #[must_use]
    pub fn file_position(&self) -> Option<Position> {
        self.position.map(|p| Position {
            line: p.line + self.first_line - 1,
            column: p.column,
        })
    }
}

/// An error for people: boxed so `Result<T, Error>` stays one pointer wide.
#[derive(Debug, Clone)]
pub struct Error(Box<Inner>);

#[derive(Debug, Clone)]
struct Inner {
    kind: ErrorKind,
    message: String,
    /// What went wrong, for code that tells this error apart; `message` is written from it.
    fault: Option<Fault>,
    origin: Option<Origin>,
    field: Option<String>,
    help: Vec<String>,
    /// A finding of `decide validate` (a likely mistake) rather than a failure.
    warning: bool,
    /// Further independent errors found in the same pass, reported together.
    more: Vec<Error>,
}

impl Error {
    /// A new error of `kind` with a one-line `message`.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Error(Box::new(Inner {
            kind,
            message: message.into(),
            fault: None,
            origin: None,
            field: None,
            help: Vec::new(),
            warning: false,
            more: Vec::new(),
        }))
    }

    /// The error `fault` is, of its kind, with its message written from it.
    #[must_use]
    pub fn of(fault: Fault) -> Self {
        let mut error = Error::new(fault.kind(), fault.to_string());
        error.0.fault = Some(fault);
        error
    }

    /// What went wrong, for an error that code tells apart ([`Error::of`]); `None` for the
    /// others.
    #[must_use]
    pub fn fault(&self) -> Option<&Fault> {
        self.0.fault.as_ref()
    }

    /// One error standing for several found in the same pass (every rule-file fault at once,
    /// say); `None` when `errors` is empty. The first decides the kind and the exit code.
    #[must_use]
    pub fn many(errors: Vec<Error>) -> Option<Self> {
        let mut errors = errors.into_iter().flat_map(Error::into_all);
        let mut first = errors.next()?;
        first.0.more = errors.collect();
        Some(first)
    }

    /// This error and every further one it carries, each on its own.
    #[must_use]
    pub fn into_all(mut self) -> Vec<Error> {
        let more = std::mem::take(&mut self.0.more);
        let mut all = vec![self];
        all.extend(more.into_iter().flat_map(Error::into_all));
        all
    }

    /// This error with `f` applied to it and to every further one it carries.
    #[must_use]
    pub fn map_each(mut self, mut f: impl FnMut(Error) -> Error) -> Error {
        let more: Vec<Error> = std::mem::take(&mut self.0.more)
            .into_iter()
            .flat_map(Error::into_all)
            .collect();
        let mut first = f(self);
        first.0.more.extend(more.into_iter().map(f));
        first
    }

    /// This error and every further one it carries, in order, by reference.
    #[must_use]
    pub fn each(&self) -> Vec<&Error> {
        let mut all = vec![self];
        all.extend(self.0.more.iter().flat_map(Error::each));
        all
    }

    /// How many errors this one stands for (itself and those it carries).
    #[must_use]
    pub fn count(&self) -> usize {
        1 + self.0.more.iter().map(Error::count).sum::<usize>()
    }

    /// Marks this as a finding: a likely mistake that does not stop evaluation, rendered as a
    /// warning.
    #[must_use]
    pub fn as_warning(mut self) -> Self {
        self.0.warning = true;
        self
    }

    #[must_use]
    pub fn is_warning(&self) -> bool {
        self.0.warning
    }

    /// The file the error is about, without a position.
    #[must_use]
    pub fn in_file(mut self, name: impl Into<String>) -> Self {
        self.0.origin = Some(Origin {
            name: name.into(),
            text: None,
            position: None,
            first_line: 1,
        });
        self
    }

    /// The file, its text and the 1-based line and column the error points at.
    #[must_use]
    pub fn at(
        mut self,
        name: &str,
        text: &std::sync::Arc<str>,
        position: Option<Position>,
    ) -> Self {
        self.0.origin = Some(Origin {
            name: name.to_owned(),
            text: Some(text.clone()),
            position,
            first_line: 1,
        });
        self
    }

    /// Says that the text the error (and each it carries) points into starts at line
    /// `first_line` of its file (one document of a multi-document stream), so that line
    /// numbers are the file's.
    #[must_use]
    pub fn starting_at_line(self, first_line: usize) -> Self {
        self.map_each(|mut e| {
            if let Some(origin) = &mut e.0.origin {
                origin.first_line = first_line.max(1);
            }
            e
        })
    }

    /// The field (a dotted path such as `usage.gpus`) the error is about.
    #[must_use]
    pub fn field(mut self, field: impl Into<String>) -> Self {
        let field = field.into();
        let field = field.strip_suffix(".?").unwrap_or(&field).to_owned();
        if !field.is_empty() && field != "." && field != "?" {
            self.0.field = Some(field);
        }
        self
    }

    /// A hint: what would be valid, or how to fix it. Several hints print in order.
    #[must_use]
    pub fn help(mut self, help: impl Into<String>) -> Self {
        self.0.help.push(help.into());
        self
    }

    #[must_use]
    pub fn kind(&self) -> ErrorKind {
        self.0.kind
    }

    /// The one-line message without location or hints.
    #[must_use]
    pub fn message(&self) -> &str {
        &self.0.message
    }

    /// The report's first line without its `error: `: the field, if any, and the message, with
    /// unsafe characters shown escaped ([`visible`]).
    #[must_use]
    pub fn title(&self) -> String {
        match &self.0.field {
            Some(field) => format!("{}: {}", visible(field), visible(&self.0.message)),
            None => visible(&self.0.message).into_owned(),
        }
    }

    #[must_use]
    pub fn field_path(&self) -> Option<&str> {
        self.0.field.as_deref()
    }

    #[must_use]
    pub fn origin(&self) -> Option<&Origin> {
        self.0.origin.as_ref()
    }

    #[must_use]
    pub fn hints(&self) -> &[String] {
        &self.0.help
    }

    /// The process exit code for this error.
    #[must_use]
    pub fn exit_code(&self) -> i32 {
        self.0.kind.exit_code()
    }

    /// The full report a person reads: message, `--> file:line:column`, a snippet with a caret,
    /// the field and the hints.
    #[must_use]
    pub fn render(&self) -> String {
        self.render_with(&Renderer::plain())
    }

    /// The same report with colours, for a terminal.
    #[must_use]
    pub fn render_styled(&self) -> String {
        self.render_with(&Renderer::styled())
    }

    fn render_with(&self, renderer: &Renderer) -> String {
        let mut out = self.render_one(renderer);
        for more in &self.0.more {
            out.push_str("\n\n");
            out.push_str(&more.render_with(renderer));
        }
        out
    }

    fn render_one(&self, renderer: &Renderer) -> String {
        let inner = &self.0;
        // Text from a file (a value quoted in a message, a snippet) may hold control
        // characters: they are shown escaped, never sent to the terminal.
        let title = self.title();
        let level = if inner.warning {
            Level::WARNING
        } else {
            Level::ERROR
        };
        let shown =
            inner
                .origin
                .as_ref()
                .and_then(|origin| match (&origin.text, origin.position) {
                    (Some(text), Some(pos)) if !text.is_empty() => Some(visible_snippet(text, pos)),
                    _ => None,
                });
        let mut group = Group::with_title(level.primary_title(&title));
        let mut plain_location = None;
        if let Some(origin) = &inner.origin {
            match (&shown, origin.position) {
                (Some((shown, pos)), Some(_)) => {
                    let span = byte_span(shown, *pos);
                    group = group.element(
                        Snippet::source(&**shown)
                            .line_start(origin.first_line)
                            .path(visible(&origin.name).into_owned())
                            .fold(true)
                            .annotation(AnnotationKind::Primary.span(span)),
                    );
                }
                (_, Some(_)) => {
                    let pos = origin.file_position().expect("a position");
                    plain_location = Some(format!(
                        "{}:{}:{}",
                        visible(&origin.name),
                        pos.line,
                        pos.column
                    ));
                }
                _ => plain_location = Some(visible(&origin.name).into_owned()),
            }
        }
        if let Some(location) = &plain_location {
            group = group.element(Level::NOTE.message(format!("in {location}")));
        }
        for hint in &inner.help {
            group = group.element(Level::HELP.message(visible(hint).into_owned()));
        }
        renderer.render(&[group]).clone()
    }
}

/// `text` with its unsafe characters escaped ([`visible`]), and `pos` moved to the same
/// character of the escaped text.
fn visible_snippet(text: &str, pos: Position) -> (std::borrow::Cow<'_, str>, Position) {
    let shown = visible(text);
    if matches!(shown, std::borrow::Cow::Borrowed(_)) {
        return (shown, pos);
    }
    let column = text
        .split_inclusive('\n')
        .nth(pos.line.saturating_sub(1))
        .map_or(pos.column, |line| {
            let before: String = line.chars().take(pos.column.saturating_sub(1)).collect();
            visible(&before).chars().count() + 1
        });
    (shown, Position { column, ..pos })
}

/// The byte range of the token at `pos` (1-based line and column, counted in characters).
fn byte_span(text: &str, pos: Position) -> Range<usize> {
    let mut offset = 0;
    for (index, line) in text.split_inclusive('\n').enumerate() {
        if index + 1 == pos.line {
            let start = offset
                + line
                    .char_indices()
                    .nth(pos.column.saturating_sub(1))
                    .map_or(line.trim_end_matches(['\n', '\r']).len(), |(i, _)| i);
            let rest = &text[start..];
            // Past the end of the line (what is missing after the last token): the place
            // alone, never the line break (a span over it would run into the next line).
            if rest.is_empty() || rest.starts_with(['\n', '\r']) {
                return start..start;
            }
            let len = rest
                .find(|c: char| c.is_whitespace() || c == ',' || c == ']' || c == '}')
                .unwrap_or(rest.len());
            // At least the first character, whole: a span must not end inside a multi-byte
            // character (U+0085 NEL counts as whitespace and is two bytes).
            let first = rest.chars().next().map_or(0, char::len_utf8);
            return start..start + len.max(first);
        }
        offset += line.len();
    }
    text.len()..text.len()
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(field) = &self.0.field {
            write!(f, "{field}: ")?;
        }
        f.write_str(&self.0.message)?;
        if let Some(origin) = &self.0.origin {
            match origin.file_position() {
                Some(p) => write!(f, " ({}:{}:{})", origin.name, p.line, p.column)?,
                None => write!(f, " ({})", origin.name)?,
            }
        }
        Ok(())
    }
}

impl std::error::Error for Error {}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

pub use decide_lang::message::{
    MAX_SUGGESTED_LEN, escaped_where, is_unsafe_char, suggest, visible,
};

/// What separates a deserializer's message from its help: a serde error is one string, so a
/// check run while deserializing ([`crate::profile`]'s bounds) joins the two with
/// [`with_help`], and the reader that turns the error into ours splits them ([`split_help`]).
/// Printable: the YAML reader shows a control or separator character of a message as an
/// escape.
const HELP_MARK: &str = " \u{a6}\u{a6} ";

/// `message` and `help` as one serde error message, for [`split_help`] to part again.
#[must_use]
pub fn with_help(message: &str, help: &str) -> String {
    format!("{message}{HELP_MARK}{help}")
}

/// A serde error message as its message and the help [`with_help`] put in it, if any.
#[must_use]
pub fn split_help(message: &str) -> (&str, Option<&str>) {
    match message.split_once(HELP_MARK) {
        Some((message, help)) => (message, Some(help)),
        None => (message, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_never_end_inside_a_character() {
        // Found by the fuzzer: U+0085 (NEL) is whitespace and two bytes long.
        for text in ["\u{85}y", "é", "名前: 值", "a\u{85}", "\u{2028}\u{2029}x"] {
            for column in 1..=4 {
                let span = byte_span(text, Position { line: 1, column });
                assert!(text.is_char_boundary(span.start), "{text:?} {span:?}");
                assert!(text.is_char_boundary(span.end), "{text:?} {span:?}");
                let shown = Error::new(ErrorKind::Profile, "x")
                    .at(
                        "t.yaml",
                        &std::sync::Arc::from(text),
                        Some(Position { line: 1, column }),
                    )
                    .render();
                assert!(shown.contains("t.yaml"));
            }
        }
    }
}
