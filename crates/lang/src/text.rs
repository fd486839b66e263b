//! Text templates (`met:`, `message:`, `text:`) parsed once: the names they mention, and a fast
//! form that renders them straight from an evaluation's slots.
//!
//! A criterion's, warning's or checklist item's text is a minijinja template, rendered for every
//! profile after the graph is evaluated. Through minijinja each render builds a `State` and runs
//! its VM (most of a render's cost is still the filters that format numbers, the same either
//! way). Texts use only raw text, `{{ expression }}`, `{% if %}`/`{% elif %}`/`{% else %}`,
//! `{% for %}` (what a phrase said for each item of a list becomes) and a top-level
//! `{% set name = expression %}`; for those the template's tree gives a fast form whose
//! expressions are the rule language's code ([`super::code`]), each `set` evaluated once, in order, where
//! it stands. A value is written as minijinja writes it with no auto-escaping (its `Display`),
//! which is what a rule text gets (its template name, `node.part`, never ends in `.html`).
//!
//! Texts are minijinja's (the design keeps minijinja for prose and the memo), so the fast form is
//! only a fast path: a template with anything else (a `set` inside a branch, a loop over two
//! names, a macro) has none, and whenever a render meets an error or an
//! undefined value, the caller renders the template with minijinja, whose output and errors are
//! the meaning. `tests/interp.rs` renders every text both ways over generated profiles.
//!
//! Parsing here also replaces minijinja's compile at load time: minijinja compiles a text the
//! first time the fast form cannot answer for it (the graph's environment loads it by name).

use std::collections::HashSet;
use std::fmt::Write as _;
use std::sync::OnceLock;

use super::Slots;
use super::ast::{Lit, Term, TermKind};
use super::code::Code;
use super::template::{Segment, segments};
use super::value::{Kind, Value};

/// A text template, parsed.
#[derive(Debug)]
pub struct Text {
    /// The names it mentions (minijinja's `undeclared_variables(true)`).
    pub names: HashSet<String>,
    /// Its fast form, when every part of it has one.
    fast: Option<Vec<Piece>>,
    /// Whether it is rendered from an evaluation's slots (criteria, warnings, checklist items,
    /// invariant messages), rather than with values of its own (the sensitivity texts).
    pub from_evaluation: bool,
}

/// One part of a text's fast form.
#[derive(Debug)]
enum Piece {
    /// Text written as it stands (whitespace control already applied by the scanner).
    Raw(Box<str>),
    /// `{{ expression }}`.
    Emit(Code),
    /// `{% if %}` with its branches (`elif` is an `if` in the `else` branch).
    If(Code, Vec<Piece>, Vec<Piece>),
    /// `{% set name = expression %}` at the top level: the next local value.
    Set(Code),
    /// `{% for %}` over a list or a map's keys.
    For(Box<ForPiece>),
}

/// A `for` loop's fast form: while the filter and the body are rendered, `loop` and the target
/// are the next two locals.
#[derive(Debug)]
struct ForPiece {
    iter: Code,
    filter: Option<Code>,
    body: Vec<Piece>,
    empty: Vec<Piece>,
}

/// A template in the syntax the rule language reads itself: raw text, `{{ }}`, `if`/`elif`/
/// `else`, and `set` of one name at the top level.
#[derive(Debug)]
enum Stmt<'s> {
    Raw(&'s str),
    Emit(Term),
    If(Term, Vec<Stmt<'s>>, Vec<Stmt<'s>>),
    /// `{% for target in iter if filter %}body{% else %}empty{% endfor %}`: read for the names
    /// the text mentions only (it has no fast form).
    For(Box<Loop<'s>>),
    Set(&'s str, Term),
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
        // Bounded before the parser (and everything after it) recurses over the tree.
        super::limits::template(source)?;
        let (names, fast) = match read(source) {
            Some(nodes) => {
                let fast = slots.and_then(|(slots, offers)| {
                    TextCompiler {
                        slots,
                        offers,
                        locals: Vec::new(),
                    }
                    .body(&nodes)
                });
                (mentioned(&nodes), fast)
            }
            // Beyond what the rule language reads: minijinja parses it and says what it reads
            // (or why it does not compile).
            None => (
                super::shared_environment()
                    .template_from_named_str(name, source)?
                    .undeclared_variables(true),
                None,
            ),
        };
        Ok(Text {
            names,
            fast,
            from_evaluation: slots.is_some(),
        })
    }

    /// Whether the text has a fast form.
    pub fn has_fast_form(&self) -> bool {
        self.fast.is_some()
    }

    /// The text rendered by the fast form from `slots`, or `None` where minijinja must render
    /// it (no fast form, or a value on the way that minijinja would refuse or leave undefined).
    pub fn render(&self, slots: &[OnceLock<Value>]) -> Option<String> {
        let pieces = self.fast.as_ref()?;
        let mut out = String::new();
        let mut locals = Vec::new();
        write(pieces, slots, &mut locals, &mut out)?;
        Some(out)
    }
}

/// A `for` loop's parts.
#[derive(Debug)]
struct Loop<'s> {
    target: &'s str,
    iter: Term,
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
enum Close {
    Eof,
    Else,
    Elif(Term),
    Endif,
    Endfor,
}

fn block<'s>(
    segments: &[Segment<'s>],
    at: &mut usize,
    top: bool,
) -> Option<(Vec<Stmt<'s>>, Close)> {
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
            } => nodes.push(Stmt::Emit(super::parser::parse(inner).ok()?)),
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
                        nodes.push(if_node(segments, at, test)?);
                    }
                    "elif" => return Some((nodes, Close::Elif(condition(rest)?))),
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
                        nodes.push(Stmt::Set(target, super::parser::parse(value).ok()?));
                    }
                    _ => return None,
                }
            }
        }
    }
    Some((nodes, Close::Eof))
}

/// An `if` whose test was read: its branches up to the matching `endif`.
fn if_node<'s>(segments: &[Segment<'s>], at: &mut usize, test: Term) -> Option<Stmt<'s>> {
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
        Close::Elif(test) => vec![if_node(segments, at, test)?],
        Close::Eof | Close::Endfor => return None,
    };
    Some(Stmt::If(test, yes, no))
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
                Stmt::Emit(e) => read(e, set, out),
                Stmt::If(test, yes, no) => {
                    read(test, set, out);
                    walk(yes, set, out);
                    walk(no, set, out);
                }
                Stmt::Set(name, e) => {
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

fn write(
    pieces: &[Piece],
    slots: &[OnceLock<Value>],
    locals: &mut Vec<Value>,
    out: &mut String,
) -> Option<()> {
    for piece in pieces {
        match piece {
            Piece::Raw(text) => out.push_str(text),
            // An undefined value, or an error, is left to minijinja's rendering (and words).
            Piece::Emit(e) => {
                let value = e.eval_with_locals(slots, None, locals).ok()?;
                if value.is_undefined() {
                    return None;
                }
                // minijinja's formatter with no auto-escaping: the value's `Display`.
                let _ = write!(out, "{value}");
            }
            Piece::If(test, yes, no) => {
                let test = test.eval_with_locals(slots, None, locals).ok()?;
                if test.is_undefined() {
                    return None;
                }
                let branch = if test.is_true() { yes } else { no };
                write(branch, slots, locals, out)?;
            }
            Piece::Set(e) => {
                let value = e.eval_with_locals(slots, None, locals).ok()?;
                if value.is_undefined() {
                    return None;
                }
                locals.push(value);
            }
            Piece::For(f) => write_loop(f, slots, locals, out)?,
        }
    }
    Some(())
}

/// A `for` loop: the items the filter keeps, each rendered with `loop` and the item bound, or
/// the `else` branch when none is kept. Anything but a list or a map to iterate (minijinja
/// iterates `none` as nothing but refuses a number) is left to minijinja.
fn write_loop(
    f: &ForPiece,
    slots: &[OnceLock<Value>],
    locals: &mut Vec<Value>,
    out: &mut String,
) -> Option<()> {
    let list = f.iter.eval_with_locals(slots, None, locals).ok()?;
    if !matches!(list.kind(), Kind::List | Kind::Map) {
        return None;
    }
    let outer = locals.len();
    let mut kept = Vec::new();
    for item in list.try_iter()? {
        if let Some(filter) = &f.filter {
            // minijinja filters before it counts: `loop` is not there yet.
            locals.extend([Value::Undefined, item.clone()]);
            let keep = filter.eval_with_locals(slots, None, locals).ok();
            locals.truncate(outer);
            let keep = keep.filter(|k| !k.is_undefined())?;
            if !keep.is_true() {
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
    Some(())
}

/// minijinja's `loop` at item `i` of `length`, in the attributes a text reads (`index`,
/// `index0`, `revindex`, `revindex0`, `first`, `last`, `length`); any other attribute is
/// undefined, which leaves the text to minijinja.
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
    /// The names set so far, in order (a local's position is its value's).
    locals: Vec<&'a str>,
}

impl<'a> TextCompiler<'a> {
    fn body(&mut self, nodes: &[Stmt<'a>]) -> Option<Vec<Piece>> {
        nodes.iter().map(|n| self.piece(n)).collect()
    }

    fn expr(&self, e: &Term) -> Option<Code> {
        Code::with_locals(e, self.slots, &[], &self.locals, self.offers).ok()
    }

    fn piece(&mut self, node: &Stmt<'a>) -> Option<Piece> {
        Some(match node {
            Stmt::Raw(r) => Piece::Raw((*r).into()),
            Stmt::Emit(e) => Piece::Emit(self.expr(&written(e))?),
            Stmt::If(test, yes, no) => Piece::If(self.expr(test)?, self.body(yes)?, self.body(no)?),
            Stmt::For(l) => {
                let iter = self.expr(&l.iter)?;
                let outer = self.locals.len();
                self.locals.extend(["loop", l.target]);
                let filter = match &l.filter {
                    Some(f) => self.expr(f).map(Some),
                    None => Some(None),
                };
                let body = self.body(&l.body);
                self.locals.truncate(outer);
                Piece::For(Box::new(ForPiece {
                    iter,
                    filter: filter?,
                    body: body?,
                    empty: self.body(&l.empty)?,
                }))
            }
            Stmt::Set(name, e) => {
                // The value is read before the name is set (`set x = x + 1` reads the old x).
                let value = self.expr(e)?;
                self.locals.push(name);
                Piece::Set(value)
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
        let fast = text.render(&cells);
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
    fn what_the_fast_form_does_not_model_is_left_to_minijinja() {
        for source in [
            // A set inside a branch, an expression without a fast form, a loop over what is
            // neither a list nor a map, or reading what the fast form's `loop` does not have.
            "{% if a %}{% set y = 1 %}{% endif %}{{ a }}",
            "{% for x in a %}{{ x }}{% endfor %}",
            "{% for x in d %}{{ x }}{% endfor %}",
            "{% for x in f %}{{ loop.previtem }}{% endfor %}",
            "{{ a ** 2 }}",
            // Undefined values and errors: minijinja words them.
            "{{ missing }}",
            "{{ e.missing }}",
            "{% if e.missing %}x{% endif %}",
            "{{ d + 1 }}",
            "{{ a / 0 }}",
            "{% set z = e.missing %}never read",
        ] {
            let (fast, _) = both(source, &values());
            assert_eq!(fast, None, "{source:?} should fall back to minijinja");
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
