//! Text templates (`met:`, `message:`, `text:`) parsed once: the names they mention, and a fast
//! form that renders them straight from an evaluation's slots.
//!
//! A criterion's, warning's, checklist item's or invariant's text is written in minijinja's
//! template syntax (rows of sentences become one such template) and rendered for every profile
//! after the graph is evaluated. Texts use only raw text, `{{ expression }}`, `{% if %}`/`{% elif %}`/`{% else %}`,
//! `{% for %}` (what a phrase said for each item of a list becomes) and a top-level
//! `{% set name = expression %}`; for those the template's tree gives a fast form whose
//! expressions are the rule language's code ([`super::code`]), each `set` evaluated once, in order, where
//! it stands. A value is written as minijinja writes it with no auto-escaping (its `Display`),
//! which is what a rule text gets (its template name, `node.part`, never ends in `.html`).
//!
//! The fast form is the engine's only way to render a text read from an evaluation: a template
//! with anything else (a `set` inside a branch, a loop over two names, a macro, an expression
//! outside the rule language) has a [`Text::fault`] instead, which the engine refuses when the
//! rules load, and a render that meets an error or an undefined value fails, naming the
//! expression (where minijinja, with strict undefined values, fails too). `tests/interp.rs`
//! renders every text both ways over generated profiles. Texts rendered with values of their
//! own (the sensitivity sentences) are still minijinja's.
//!
//! Parsing here also replaces minijinja's compile at load time: minijinja compiles a text only
//! where it renders one (the differential check, the sensitivity sentences).

use std::collections::HashSet;
use std::fmt::Write as _;
use std::sync::OnceLock;

use super::Slots;
use super::ast::{Lit, Term, TermKind};
use super::code::{Bound, Code};
use super::template::{Segment, segments};
use super::value::{Kind, Value};

/// A text template, parsed.
#[derive(Debug)]
pub struct Text {
    /// The names it mentions (minijinja's `undeclared_variables(true)`).
    pub names: HashSet<String>,
    /// Its fast form, when every part of it has one.
    fast: Option<Vec<Piece>>,
    /// Why it has none, when it is rendered from an evaluation and has none.
    pub fault: Option<String>,
    /// Whether it is rendered from an evaluation's slots (criteria, warnings, checklist items,
    /// invariant messages), rather than with values of its own (the sensitivity texts).
    pub from_evaluation: bool,
}

/// One part of a text's fast form.
#[derive(Debug)]
enum Piece {
    /// Text written as it stands (whitespace control already applied by the scanner).
    Raw(Box<str>),
    /// `{{ expression }}`, with the expression as written (for a failure's message).
    Emit(Code, Box<str>),
    /// `{% if %}` with its branches (`elif` is an `if` in the `else` branch).
    If(Code, Box<str>, Vec<Piece>, Vec<Piece>),
    /// `{% set name = expression %}` at the top level: the next local value.
    Set(Code, Box<str>),
    /// `{% for %}` over a list or a map's keys.
    For(Box<ForPiece>),
}

/// A `for` loop's fast form: while the filter and the body are rendered, `loop` and the target
/// are the next two locals.
#[derive(Debug)]
struct ForPiece {
    iter: Code,
    /// The iterable as written.
    source: Box<str>,
    filter: Option<Code>,
    body: Vec<Piece>,
    empty: Vec<Piece>,
}

/// A template in the syntax the rule language reads itself: raw text, `{{ }}`, `if`/`elif`/
/// `else`, and `set` of one name at the top level.
#[derive(Debug)]
enum Stmt<'s> {
    Raw(&'s str),
    Emit(Term, &'s str),
    If(Term, &'s str, Vec<Stmt<'s>>, Vec<Stmt<'s>>),
    /// `{% for target in iter if filter %}body{% else %}empty{% endfor %}`.
    For(Box<Loop<'s>>),
    Set(&'s str, Term, &'s str),
}

impl Text {
    /// Parses template `source` (named `name`, as the graph's environment knows it). With
    /// `slots`, also builds its fast form over those names and the catalog's `offers`; without,
    /// the text is rendered with a context of its own (minijinja alone).
    pub fn parse(
        name: &str,
        source: &str,
        slots: Option<(&Slots, &[Value])>,
    ) -> Result<Text, minijinja::Error> {
        Text::parse_bound(name, source, slots, &[])
    }

    /// [`Text::parse`] of a text said for each item of a node (a per-offer fact's `offer`, a
    /// select's item): `bound` names it, as the node's expressions do, and
    /// [`Text::render_bound`] gives its value.
    ///
    /// # Errors
    ///
    /// Why the template does not parse.
    pub fn parse_bound(
        name: &str,
        source: &str,
        slots: Option<(&Slots, &[Value])>,
        bound: &[&str],
    ) -> Result<Text, minijinja::Error> {
        // Bounded before the parser (and everything after it) recurses over the tree.
        super::limits::template(source)?;
        let (names, fast, fault) = match read(source) {
            Some(nodes) => {
                let (fast, fault) = match slots {
                    Some((slots, offers)) => {
                        let mut compiler = TextCompiler {
                            slots,
                            offers,
                            bound,
                            locals: Vec::new(),
                            fault: None,
                        };
                        let fast = compiler.body(&nodes);
                        (fast, compiler.fault)
                    }
                    None => (None, None),
                };
                (mentioned(&nodes), fast, fault)
            }
            // Beyond what the rule language reads: minijinja parses it and says what it reads
            // (or why it does not compile).
            None => (
                super::shared_environment()
                    .template_from_named_str(name, source)?
                    .undeclared_variables(true),
                None,
                slots.map(|_| unread(source)),
            ),
        };
        Ok(Text {
            names,
            fast,
            fault,
            from_evaluation: slots.is_some(),
        })
    }

    /// Whether the text has a fast form.
    pub fn has_fast_form(&self) -> bool {
        self.fast.is_some()
    }

    /// The text rendered by the fast form from `slots`, or why it cannot be: it has no fast
    /// form, or a value on the way is undefined or an expression fails (where minijinja, with
    /// its strict undefined values, fails too).
    ///
    /// # Errors
    ///
    /// What failed, naming the expression as written.
    pub fn render(&self, slots: &[OnceLock<Value>]) -> Result<String, String> {
        self.render_bound(slots, None)
    }

    /// [`Text::render`] with the item the text was parsed for bound ([`Text::parse_bound`]).
    ///
    /// # Errors
    ///
    /// What failed, naming the expression as written.
    pub fn render_bound(
        &self,
        slots: &[OnceLock<Value>],
        bound: Option<Bound<'_>>,
    ) -> Result<String, String> {
        let Some(pieces) = self.fast.as_ref() else {
            return Err(self.fault.clone().unwrap_or_else(|| UNREAD.to_owned()));
        };
        let mut out = String::new();
        let mut locals = Vec::new();
        write(pieces, TextInputs { slots, bound }, &mut locals, &mut out)?;
        Ok(out)
    }
}

/// Why a text read from an evaluation has no fast form when its tags are beyond it.
const UNREAD: &str = "it uses a tag a rule text does not have (a text has `{{ expression }}`, \
                      `if`/`elif`/`else`, `for` over one name and `set` at the top level; no \
                      macro, no `set` inside a branch): write the cases as rows of `when:` and \
                      `says:`";

/// Why `source`, which [`read`] cannot read, has no fast form: the first `{{ }}` or tag whose
/// expression the rule language does not parse, else [`UNREAD`].
fn unread(source: &str) -> String {
    let segments = segments(source).unwrap_or_default();
    segments
        .iter()
        .find_map(|segment| match segment {
            Segment::Tag {
                block: false,
                inner,
                ..
            } => super::parser::parse(inner)
                .err()
                .map(|e| format!("`{{{{ {} }}}}`: {}", inner.trim(), e.message)),
            _ => None,
        })
        .unwrap_or_else(|| UNREAD.to_owned())
}

/// A `for` loop's parts.
#[derive(Debug)]
struct Loop<'s> {
    target: &'s str,
    iter: Term,
    source: &'s str,
    filter: Option<Term>,
    body: Vec<Stmt<'s>>,
    empty: Vec<Stmt<'s>>,
}

/// The template's nodes, or `None` when it uses anything else (a loop, a macro, a `set` in a
/// branch, an expression outside the rule language, a tag left open).
fn read(source: &str) -> Option<Vec<Stmt<'_>>> {
    let segments = segments(source).ok()?;
    let mut at = 0;
    let (nodes, end) = block(&segments, &mut at, true)?;
    matches!(end, Close::Eof).then_some(nodes)
}

/// What ended a run of nodes.
enum Close<'s> {
    Eof,
    Else,
    Elif(Term, &'s str),
    Endif,
    Endfor,
}

fn block<'s>(
    segments: &[Segment<'s>],
    at: &mut usize,
    top: bool,
) -> Option<(Vec<Stmt<'s>>, Close<'s>)> {
    let mut nodes = Vec::new();
    while let Some(segment) = segments.get(*at) {
        *at += 1;
        match segment {
            Segment::Raw(raw) => nodes.push(Stmt::Raw(raw)),
            Segment::Verbatim(_) => return None,
            Segment::Tag {
                block: false,
                inner,
                ..
            } => nodes.push(Stmt::Emit(super::parser::parse(inner).ok()?, inner.trim())),
            Segment::Tag {
                block: true, inner, ..
            } => {
                let inner = inner.trim_start();
                let word_len = inner
                    .bytes()
                    .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
                    .count();
                let (word, rest) = inner.split_at(word_len);
                match word {
                    "if" => {
                        let test = condition(rest)?;
                        nodes.push(if_node(segments, at, test, rest.trim())?);
                    }
                    "elif" => return Some((nodes, Close::Elif(condition(rest)?, rest.trim()))),
                    "else" if rest.trim().is_empty() => return Some((nodes, Close::Else)),
                    "endif" if rest.trim().is_empty() => return Some((nodes, Close::Endif)),
                    "endfor" if rest.trim().is_empty() => return Some((nodes, Close::Endfor)),
                    "for" => nodes.push(for_node(segments, at, rest)?),
                    "set" if top => {
                        let (target, value) = rest.split_once('=')?;
                        let target = target.trim();
                        let is_name = !target.is_empty()
                            && target
                                .bytes()
                                .all(|b| b.is_ascii_alphanumeric() || b == b'_')
                            && !target.as_bytes()[0].is_ascii_digit()
                            && !super::parser::KEYWORDS.contains(&target);
                        // `==` is a comparison, not an assignment.
                        if !is_name || value.starts_with('=') {
                            return None;
                        }
                        let term = super::parser::parse(value).ok()?;
                        nodes.push(Stmt::Set(target, term, value.trim()));
                    }
                    _ => return None,
                }
            }
        }
    }
    Some((nodes, Close::Eof))
}

/// An `if` whose test was read: its branches up to the matching `endif`.
fn if_node<'s>(
    segments: &[Segment<'s>],
    at: &mut usize,
    test: Term,
    source: &'s str,
) -> Option<Stmt<'s>> {
    let (yes, end) = block(segments, at, false)?;
    let no = match end {
        Close::Endif => Vec::new(),
        Close::Else => {
            let (no, end) = block(segments, at, false)?;
            if !matches!(end, Close::Endif) {
                return None;
            }
            no
        }
        Close::Elif(test, source) => vec![if_node(segments, at, test, source)?],
        Close::Eof | Close::Endfor => return None,
    };
    Some(Stmt::If(test, source, yes, no))
}

/// A `for` whose header `rest` (`target in iter [if filter]`) was read: its body and `else` up to
/// the matching `endfor`.
fn for_node<'s>(segments: &[Segment<'s>], at: &mut usize, rest: &'s str) -> Option<Stmt<'s>> {
    let rest = rest.trim_start();
    let len = rest
        .bytes()
        .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
        .count();
    let (target, rest) = rest.split_at(len);
    let iter = rest.trim_start().strip_prefix("in")?;
    if target.is_empty() || !iter.starts_with(char::is_whitespace) {
        return None;
    }
    // `iter if filter` reads as an inline `if` without `else`: the loop's filter.
    let source = iter.trim();
    let (iter, filter) = match super::parser::parse(iter).ok()? {
        Term {
            kind:
                TermKind::If {
                    test,
                    yes,
                    no: None,
                },
            ..
        } => (*yes, Some(*test)),
        Term {
            kind: TermKind::If { .. },
            ..
        } => return None,
        iter => (iter, None),
    };
    let (body, end) = block(segments, at, false)?;
    let empty = match end {
        Close::Endfor => Vec::new(),
        Close::Else => {
            let (empty, end) = block(segments, at, false)?;
            if !matches!(end, Close::Endfor) {
                return None;
            }
            empty
        }
        _ => return None,
    };
    Some(Stmt::For(Box::new(Loop {
        target,
        iter,
        source,
        filter,
        body,
        empty,
    })))
}

/// An `if`'s or `elif`'s test: an expression that is not itself an inline `if` (minijinja's
/// grammar has none there).
fn condition(text: &str) -> Option<Term> {
    let e = super::parser::parse(text).ok()?;
    (!matches!(e.kind, TermKind::If { .. })).then_some(e)
}

/// The names `nodes` read, as minijinja's `undeclared_variables(true)` gives them: a name a
/// `set` assigned before (or is assigning: minijinja assigns the name before it reads the value)
/// is not read from outside.
fn mentioned(nodes: &[Stmt<'_>]) -> HashSet<String> {
    fn walk<'s>(nodes: &[Stmt<'s>], set: &mut Vec<&'s str>, out: &mut HashSet<String>) {
        let read = |e: &Term, set: &[&str], out: &mut HashSet<String>| {
            for path in e.paths() {
                let root = path.split('.').next().unwrap_or(&path);
                if !set.contains(&root) {
                    out.insert(path);
                }
            }
        };
        for node in nodes {
            match node {
                Stmt::Raw(_) => {}
                Stmt::Emit(e, _) => read(e, set, out),
                Stmt::If(test, _, yes, no) => {
                    read(test, set, out);
                    walk(yes, set, out);
                    walk(no, set, out);
                }
                Stmt::Set(name, e, _) => {
                    set.push(name);
                    read(e, set, out);
                }
                // minijinja assigns `loop` before it reads the iterable, the target after; the
                // body is a scope of its own, and so is the `else`.
                Stmt::For(l) => {
                    let outer = set.len();
                    set.push("loop");
                    read(&l.iter, set, out);
                    set.push(l.target);
                    if let Some(filter) = &l.filter {
                        read(filter, set, out);
                    }
                    walk(&l.body, set, out);
                    set.truncate(outer);
                    walk(&l.empty, set, out);
                    set.truncate(outer);
                }
            }
        }
    }
    let mut out = HashSet::new();
    // minijinja's tracking assigns `self` before it walks a template.
    walk(nodes, &mut vec!["self"], &mut out);
    out
}

/// What a text's expressions read besides its own names: the evaluation's values, and the item
/// the text is said for.
#[derive(Clone, Copy)]
struct TextInputs<'v> {
    slots: &'v [OnceLock<Value>],
    bound: Option<Bound<'v>>,
}

fn write(
    pieces: &[Piece],
    slots: TextInputs<'_>,
    locals: &mut Vec<Value>,
    out: &mut String,
) -> Result<(), String> {
    for piece in pieces {
        match piece {
            Piece::Raw(text) => out.push_str(text),
            Piece::Emit(e, source) => {
                let value = defined(e, slots, locals, &format!("`{{{{ {source} }}}}`"))?;
                // minijinja's formatter with no auto-escaping: the value's `Display`.
                let _ = write!(out, "{value}");
            }
            Piece::If(test, source, yes, no) => {
                let test = defined(test, slots, locals, &format!("`{{% if {source} %}}`"))?;
                let branch = if test.is_true() { yes } else { no };
                write(branch, slots, locals, out)?;
            }
            // An undefined value may be set (minijinja's strict undefined refuses it only where
            // it is written or tested).
            Piece::Set(e, source) => {
                let value = e
                    .eval_with_locals(slots.slots, slots.bound, locals)
                    .map_err(|fail| format!("`{{% set ... = {source} %}}`: {}", fail.message))?;
                locals.push(value);
            }
            Piece::For(f) => write_loop(f, slots, locals, out)?,
        }
    }
    Ok(())
}

/// The value of `e`, or why there is none: it failed, or it is undefined (which minijinja's
/// strict undefined values refuse too). `what` names the part of the text.
fn defined(e: &Code, slots: TextInputs<'_>, locals: &[Value], what: &str) -> Result<Value, String> {
    match e.eval_with_locals(slots.slots, slots.bound, locals) {
        Ok(v) if v.is_undefined() => Err(format!("{what} gave an undefined value")),
        Ok(v) => Ok(v),
        Err(fail) => Err(format!("{what}: {}", fail.message)),
    }
}

/// A `for` loop: the items the filter keeps, each rendered with `loop` and the item bound, or
/// the `else` branch when none is kept. `none` is iterated as nothing, as minijinja does.
fn write_loop(
    f: &ForPiece,
    slots: TextInputs<'_>,
    locals: &mut Vec<Value>,
    out: &mut String,
) -> Result<(), String> {
    let what = || format!("`{{% for ... in {} %}}`", f.source);
    let list = defined(&f.iter, slots, locals, &what())?;
    if !matches!(list.kind(), Kind::List | Kind::Map | Kind::None) {
        return Err(format!(
            "{} goes over a list or a map, not {} ({})",
            what(),
            list,
            list.kind()
        ));
    }
    let outer = locals.len();
    let mut kept = Vec::new();
    for item in list.try_iter().into_iter().flatten() {
        if let Some(filter) = &f.filter {
            // minijinja filters before it counts: `loop` is not there yet.
            locals.extend([Value::Undefined, item.clone()]);
            let keep = defined(filter, slots, locals, &format!("the filter of {}", what()));
            locals.truncate(outer);
            if !keep?.is_true() {
                continue;
            }
        }
        kept.push(item);
    }
    if kept.is_empty() {
        return write(&f.empty, slots, locals, out);
    }
    let length = kept.len();
    for (i, item) in kept.into_iter().enumerate() {
        locals.extend([loop_value(i, length), item]);
        let done = write(&f.body, slots, locals, out);
        locals.truncate(outer);
        done?;
    }
    Ok(())
}

/// minijinja's `loop` at item `i` of `length`, in the attributes a text reads (`index`,
/// `index0`, `revindex`, `revindex0`, `first`, `last`, `length`); any other attribute is
/// undefined, and a text that reads one fails.
fn loop_value(i: usize, length: usize) -> Value {
    Value::from_pairs([
        (Value::from("index"), Value::from(i + 1)),
        (Value::from("index0"), Value::from(i)),
        (Value::from("revindex"), Value::from(length - i)),
        (Value::from("revindex0"), Value::from(length - i - 1)),
        (Value::from("first"), Value::from(i == 0)),
        (Value::from("last"), Value::from(i + 1 == length)),
        (Value::from("length"), Value::from(length)),
    ])
}

/// What `{{ e }}` writes, as a rule expression: `{{ a if c }}` writes nothing when `c` is false
/// (minijinja's silent undefined), which is `{{ a if c else '' }}`; the rule language asks for
/// the `else`.
fn written(e: &Term) -> std::borrow::Cow<'_, Term> {
    match &e.kind {
        TermKind::If {
            test,
            yes,
            no: None,
        } => std::borrow::Cow::Owned(Term {
            kind: TermKind::If {
                test: test.clone(),
                yes: yes.clone(),
                no: Some(Box::new(Term {
                    kind: TermKind::Lit(Lit::Str("".into())),
                    span: e.span.clone(),
                })),
            },
            span: e.span.clone(),
        }),
        _ => std::borrow::Cow::Borrowed(e),
    }
}

struct TextCompiler<'a> {
    slots: &'a Slots,
    offers: &'a [Value],
    /// The item the text is said for, if any ([`Text::parse_bound`]).
    bound: &'a [&'a str],
    /// The names set so far, in order (a local's position is its value's).
    locals: Vec<&'a str>,
    /// Why the first expression that does not compile does not.
    fault: Option<String>,
}

impl<'a> TextCompiler<'a> {
    fn body(&mut self, nodes: &[Stmt<'a>]) -> Option<Vec<Piece>> {
        nodes.iter().map(|n| self.piece(n)).collect()
    }

    fn expr(&mut self, e: &Term, source: &str) -> Option<Code> {
        match Code::with_locals(e, self.slots, self.bound, &self.locals, self.offers) {
            Ok(code) => Some(code),
            Err(err) => {
                self.fault
                    .get_or_insert_with(|| format!("`{source}`: {}", err.message));
                None
            }
        }
    }

    fn piece(&mut self, node: &Stmt<'a>) -> Option<Piece> {
        Some(match node {
            Stmt::Raw(r) => Piece::Raw((*r).into()),
            Stmt::Emit(e, source) => Piece::Emit(self.expr(&written(e), source)?, (*source).into()),
            Stmt::If(test, source, yes, no) => Piece::If(
                self.expr(test, source)?,
                (*source).into(),
                self.body(yes)?,
                self.body(no)?,
            ),
            Stmt::For(l) => {
                let iter = self.expr(&l.iter, l.source)?;
                let outer = self.locals.len();
                self.locals.extend(["loop", l.target]);
                let filter = match &l.filter {
                    Some(f) => self.expr(f, l.source).map(Some),
                    None => Some(None),
                };
                let body = self.body(&l.body);
                self.locals.truncate(outer);
                Piece::For(Box::new(ForPiece {
                    iter,
                    source: l.source.into(),
                    filter: filter?,
                    body: body?,
                    empty: self.body(&l.empty)?,
                }))
            }
            Stmt::Set(name, e, source) => {
                // The value is read before the name is set (`set x = x + 1` reads the old x).
                let value = self.expr(e, source)?;
                self.locals.push(name);
                Piece::Set(value, (*source).into())
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, HashMap};

    use super::*;
    use crate::jinja::to_jinja;

    /// Slots for names `a`..`e` with the given values.
    fn slots(values: &[(&str, Value)]) -> (Slots, Vec<OnceLock<Value>>) {
        let index: HashMap<String, usize> = values
            .iter()
            .enumerate()
            .map(|(i, (k, _))| ((*k).to_owned(), i))
            .collect();
        let cells = values
            .iter()
            .map(|(_, v)| OnceLock::from(v.clone()))
            .collect();
        (Slots { index }, cells)
    }

    /// Renders `source` both ways over `values`: (fast form's answer, minijinja's).
    fn both(source: &str, values: &[(&str, Value)]) -> (Option<String>, Result<String, String>) {
        let (names, cells) = slots(values);
        let text = Text::parse("t.met", source, Some((&names, &[]))).unwrap();
        let fast = text.render(&cells).ok();
        let env = crate::environment();
        let ctx: BTreeMap<String, minijinja::Value> = values
            .iter()
            .map(|(k, v)| ((*k).to_owned(), to_jinja(v)))
            .collect();
        let ctx = minijinja::Value::from(ctx);
        let slow = env
            .template_from_named_str("t.met", source)
            .and_then(|t| t.render(ctx))
            .map_err(|e| e.to_string());
        (fast, slow)
    }

    fn values() -> Vec<(&'static str, Value)> {
        vec![
            ("a", Value::from(3)),
            ("b", Value::from(2.5)),
            ("c", Value::from("text")),
            ("d", Value::from(())),
            (
                "e",
                Value::from_pairs([
                    (Value::from("k"), Value::from(1)),
                    (
                        Value::from("l"),
                        [1, 2].into_iter().map(Value::from).collect(),
                    ),
                ]),
            ),
            ("f", ["x", "y"].into_iter().map(Value::from).collect()),
        ]
    }

    #[test]
    fn templates_the_fast_form_models_render_as_minijinja_renders_them() {
        for source in [
            "plain text",
            "{{ a }} and {{ b }} and {{ c }} and {{ d }}",
            "{{ a * b }} {{ a // 2 }} {{ c ~ '!' }} {{ e.k }} {{ e.l }} {{ f | join(', ') }}",
            "{% if a > 2 %}big{% elif a > 1 %}middling{% else %}small{% endif %}",
            "{% if d %}yes{% else %}no{% endif %}{% if not d %} none{% endif %}",
            "  {% if a %}\n  indented\n  {% endif %}\ntrailing\n",
            "before {%- if a -%} trimmed {%- endif %} after",
            "{% set x = a + 1 %}{{ x }} {% set x = x * 2 %}{{ x }} {% set a = 10 %}{{ a }}",
            "{% set p = e.l %}{% if 2 in p %}has two{% endif %} of {{ p | length }}",
            "{{ a | cny }} {{ b | num }} {{ 7 | plural('GPU') }} {{ 0.25 | pct }}",
            "{{ {'x': a, 'y': c} }} {{ [a, b, c] }} {{ e }}",
            "{{ '+' if a > 1 }}{{ '-' if a > 100 }}{{ a }}",
            "{% for x in f %}{{ x }}{% if not loop.last %}, {% endif %}{% endfor %}.",
            "{% for x in e.l if x > 1 %}[{{ loop.index }}/{{ loop.length }} {{ x * a }}]{% endfor %}",
            "{% for x in e.l if x > 5 %}never{% else %}none kept{% endfor %} {{ a }}",
            "{% for k in e %}{{ k }}{{ loop.first }}{{ loop.revindex0 }}{% endfor %}",
            "{% set n = 2 %}{% for x in f %}{% for y in e.l %}{{ x }}{{ y * n }}{% endfor %}{% endfor %}{{ n }}",
            "{% for x in [] %}a{% endfor %}{% set m = a %}{{ m }}",
            "{% for x in d %}{{ x }}{% else %}nothing{% endfor %}",
            "{% set z = e.missing %}set but never written",
            "{% for x in f %}{% if x == 'x' %}A{% else %}B{% endif %}{% endfor %}",
        ] {
            let (fast, slow) = both(source, &values());
            assert!(fast.is_some(), "no fast answer for {source:?}");
            assert_eq!(
                fast.as_deref(),
                slow.as_deref().ok(),
                "{source:?}: {slow:?}"
            );
        }
    }

    #[test]
    fn what_fails_says_where_and_fails_in_minijinja_too() {
        let (names, cells) = slots(&values());
        for (source, says) in [
            (
                "{{ e.missing }}",
                "`{{ e.missing }}` gave an undefined value",
            ),
            (
                "{% if e.missing %}x{% endif %}",
                "`{% if e.missing %}` gave an undefined value",
            ),
            ("{{ d + 1 }}", "`{{ d + 1 }}`: "),
            ("{{ a / 0 }}", "`{{ a / 0 }}`: "),
            (
                "{% set z = e.missing %}{{ z }}",
                "`{{ z }}` gave an undefined value",
            ),
            ("{{ missing }}", "`{{ missing }}` gave an undefined value"),
            (
                "{% for x in a %}{{ x }}{% endfor %}",
                "`{% for ... in a %}` goes over a list or a map, not 3 (number)",
            ),
        ] {
            let text = Text::parse("t.met", source, Some((&names, &[]))).unwrap();
            let err = text.render(&cells).unwrap_err();
            assert!(err.starts_with(says), "{source:?}: {err}");
            let (_, slow) = both(source, &values());
            assert!(slow.is_err(), "{source:?}: minijinja gave {slow:?}");
        }
        // minijinja's `loop` has more than the fast form's: a text reading it fails rather
        // than say something else.
        let text = Text::parse(
            "t.met",
            "{% for x in f %}{{ loop.previtem }}{% endfor %}",
            Some((&names, &[])),
        )
        .unwrap();
        assert_eq!(
            text.render(&cells).unwrap_err(),
            "`{{ loop.previtem }}` gave an undefined value"
        );
    }

    #[test]
    fn a_text_without_a_fast_form_says_why() {
        let (names, _) = slots(&values());
        for (source, says) in [
            ("{% if a %}{% set y = 1 %}{% endif %}{{ a }}", UNREAD),
            ("{% macro m() %}{% endmacro %}", UNREAD),
            (
                "{{ a ** 2 }}",
                "`{{ a ** 2 }}`: `**` is not part of the rule language",
            ),
        ] {
            let text = Text::parse("t.met", source, Some((&names, &[]))).unwrap();
            assert!(!text.has_fast_form(), "{source:?}");
            let fault = text.fault.clone().unwrap();
            assert!(fault.starts_with(says), "{source:?}: {fault}");
            assert_eq!(text.render(&[]).unwrap_err(), fault);
        }
    }

    #[test]
    fn names_are_minijinjas_undeclared_variables() {
        let env = crate::environment();
        for source in [
            "{{ a.b.c }} {{ d }}",
            "{% set p = q.r %}{{ p.s }} {{ p }} {{ q.t }}",
            "{% if x.y %}{{ z }}{% elif w %}{{ z.w }}{% else %}{{ v[0] }}{% endif %}{{ z }}",
            "{% set n = {'a': b.c} %}{{ n[d.e] }}",
            "{{ self }} {{ f(g.h) }} {{ u | join(v.w) }}",
            "{% set s = s.t %}{{ s }}",
            "{% for i in items.all if i.ok %}{{ i.v }} {{ loop.index }} {{ j.k }}{% else %}{{ i }}{% endfor %}{{ loop }}",
            "{% for x in p %}{{ names[x] }}{% if not loop.last %}、{% endif %}{% endfor %}",
        ] {
            let mine = mentioned(&read(source).unwrap());
            let theirs = env
                .template_from_str(source)
                .unwrap()
                .undeclared_variables(true);
            assert_eq!(mine, theirs, "{source:?}");
        }
        // Beyond what the rule language reads: minijinja says what these read.
        for source in [
            "{% if x.y %}{% set z = 1 %}{{ z }}{% endif %}",
            "{% for a, b in items %}{{ a }}{% endfor %}",
            "{% for i in items %}{% set n = i %}{% endfor %}",
            "{% if a %}x",
            "{{ a ** 2 }}",
            "{% macro m() %}{% endmacro %}",
        ] {
            assert!(read(source).is_none(), "{source:?}");
        }
    }
}
