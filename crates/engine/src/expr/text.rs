//! Text templates (`met:`, `message:`, `text:`) parsed once: the names they mention, and a fast
//! form that renders them straight from an evaluation's slots.
//!
//! A criterion's, warning's or checklist item's text is a minijinja template, rendered for every
//! profile after the graph is evaluated. Through minijinja each render builds a `State` and runs
//! its VM (most of a render's cost is still the filters that format numbers, the same either
//! way). Most texts use only
//! raw text, `{{ expression }}`, `{% if %}`/`{% elif %}`/`{% else %}` and a top-level
//! `{% set name = expression %}`; for those the template's tree gives a fast form whose
//! expressions are the fast path's ([`super::fast`]), each `set` evaluated once, in order, where
//! it stands. A value is written as minijinja writes it with no auto-escaping (its `Display`),
//! which is what a rule text gets (its template name, `node.part`, never ends in `.html`).
//!
//! As for expressions, the fast form is only a fast path: a template with anything else (a
//! `for` loop, a `set` inside a branch, an expression without a fast form) has none, and
//! whenever a render meets what minijinja would refuse or leave undefined, the caller renders
//! the template with minijinja, whose output and errors are the meaning. `decide validate`
//! renders every text both ways over generated profiles ([`crate::check`]).
//!
//! Parsing here also replaces minijinja's compile at load time: minijinja compiles a text the
//! first time the fast form cannot answer for it (the graph's environment loads it by name).

use std::collections::HashSet;
use std::fmt::Write as _;
use std::sync::OnceLock;

use minijinja::machinery::{self, ast};
use minijinja::value::Value;
use serde_saphyr::Location;

use super::Slots;
use super::fast::Fast;

/// A text template, parsed.
#[derive(Debug)]
pub(crate) struct Text {
    /// The names it mentions (minijinja's `undeclared_variables(true)`).
    pub names: HashSet<String>,
    /// Its fast form, when every part of it has one.
    fast: Option<Vec<Piece>>,
    /// Whether it is rendered from an evaluation's slots (criteria, warnings, checklist items,
    /// invariant messages), rather than with values of its own (the sensitivity texts).
    pub from_evaluation: bool,
    /// Where it is written: rule file index and position.
    pub file: usize,
    pub location: Location,
}

/// One part of a text's fast form.
#[derive(Debug)]
enum Piece {
    /// Text written as it stands (whitespace control already applied by the parser).
    Raw(Box<str>),
    /// `{{ expression }}`.
    Emit(Fast),
    /// `{% if %}` with its branches (`elif` is an `if` in the `else` branch).
    If(Fast, Vec<Piece>, Vec<Piece>),
    /// `{% set name = expression %}` at the top level: the next local value.
    Set(Fast),
}

impl Text {
    /// Parses template `source` (named `name`, as the graph's environment knows it). With
    /// `slots`, also builds its fast form over those names and the catalog's `offers`; without,
    /// the text is rendered with a context of its own (minijinja alone).
    pub(crate) fn parse(
        name: &str,
        source: &str,
        slots: Option<(&Slots, &[Value])>,
        file: usize,
        location: Location,
    ) -> Result<Text, minijinja::Error> {
        // Bounded before the parser (and everything after it) recurses over the tree.
        super::limits::template(source)?;
        let tree = machinery::parse(source, name, super::functions::syntax())?;
        let names = match super::names::template_undeclared(&tree) {
            Some(names) => names,
            None => super::expression_environment()
                .template_from_named_str(name, source)?
                .undeclared_variables(true),
        };
        let fast = slots.and_then(|(slots, offers)| {
            let ast::Stmt::Template(t) = &tree else {
                return None;
            };
            let mut compiler = TextCompiler {
                slots,
                offers,
                locals: Vec::new(),
            };
            compiler.body(&t.children, true)
        });
        Ok(Text {
            names,
            fast,
            from_evaluation: slots.is_some(),
            file,
            location,
        })
    }

    /// Whether the text has a fast form.
    pub(crate) fn has_fast_form(&self) -> bool {
        self.fast.is_some()
    }

    /// The text rendered by the fast form from `slots`, or `None` where minijinja must render
    /// it (no fast form, or a value on the way that minijinja would refuse or leave undefined).
    pub(crate) fn render(&self, slots: &[OnceLock<Value>]) -> Option<String> {
        let pieces = self.fast.as_ref()?;
        let mut out = String::new();
        let mut locals = Vec::new();
        write(pieces, slots, &mut locals, &mut out)?;
        Some(out)
    }
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
            Piece::Emit(e) => {
                let value = e.eval_with_locals(slots, None, locals)?;
                // minijinja's formatter with no auto-escaping: the value's `Display`.
                let _ = write!(out, "{value}");
            }
            Piece::If(test, yes, no) => {
                let test = test.eval_with_locals(slots, None, locals)?;
                let branch = if test.is_true() { yes } else { no };
                write(branch, slots, locals, out)?;
            }
            Piece::Set(e) => {
                let value = e.eval_with_locals(slots, None, locals)?;
                locals.push(value);
            }
        }
    }
    Some(())
}

struct TextCompiler<'a> {
    slots: &'a Slots,
    offers: &'a [Value],
    /// The names set so far, in order (a local's position is its value's).
    locals: Vec<&'a str>,
}

impl<'a> TextCompiler<'a> {
    /// The fast form of `stmts`; `top` when they are the template's own (where a `set` stays
    /// in scope to the end, so it may be one).
    fn body(&mut self, stmts: &[ast::Stmt<'a>], top: bool) -> Option<Vec<Piece>> {
        stmts.iter().map(|s| self.piece(s, top)).collect()
    }

    fn expr(&self, e: &ast::Expr<'_>) -> Option<Fast> {
        Fast::with_locals(e, self.slots, &[], &self.locals, self.offers)
    }

    fn piece(&mut self, stmt: &ast::Stmt<'a>, top: bool) -> Option<Piece> {
        Some(match stmt {
            ast::Stmt::EmitRaw(r) => Piece::Raw(r.raw.into()),
            ast::Stmt::EmitExpr(e) => Piece::Emit(self.expr(&e.expr)?),
            ast::Stmt::IfCond(i) => Piece::If(
                self.expr(&i.expr)?,
                self.body(&i.true_body, false)?,
                self.body(&i.false_body, false)?,
            ),
            ast::Stmt::Set(s) if top => {
                let ast::Expr::Var(target) = &s.target else {
                    return None;
                };
                // The value is read before the name is set (`set x = x + 1` reads the old x).
                let value = self.expr(&s.expr)?;
                self.locals.push(target.id);
                Piece::Set(value)
            }
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, HashMap};

    use super::*;

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
        let text = Text::parse("t.met", source, Some((&names, &[])), 0, Location::UNKNOWN).unwrap();
        let fast = text.render(&cells);
        let env = crate::expr::environment();
        let ctx: BTreeMap<String, Value> = values
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.clone()))
            .collect();
        let ctx = Value::from(ctx);
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
                Value::from(BTreeMap::from([
                    ("k", Value::from(1)),
                    ("l", Value::from(vec![1, 2])),
                ])),
            ),
            ("f", Value::from(vec!["x", "y"])),
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
            // A loop, a set inside a branch, an expression without a fast form.
            "{% for x in f %}{{ x }}{% if not loop.last %}, {% endif %}{% endfor %}",
            "{% if a %}{% set y = 1 %}{% endif %}{{ a }}",
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
        let env = crate::expr::environment();
        for source in [
            "{{ a.b.c }} {{ d }}",
            "{% set p = q.r %}{{ p.s }} {{ p }} {{ q.t }}",
            "{% if x.y %}{% set z = 1 %}{{ z }}{% else %}{{ z.w }}{% endif %}{{ z }}",
            "{% for i in items.all if i.ok %}{{ i.v }} {{ loop.index }} {{ j.k }}{% else %}{{ i }}{% endfor %}{{ loop }}",
            "{% set n = {'a': b.c} %}{{ n[d.e] }}",
            "{{ self }} {{ f(g.h) }} {{ u | join(v.w) }}",
            "{% set s = s.t %}{{ s }}",
        ] {
            let tree = machinery::parse(source, "t", crate::expr::functions::syntax()).unwrap();
            let mine = crate::expr::names::template_undeclared(&tree).unwrap();
            let theirs = env
                .template_from_str(source)
                .unwrap()
                .undeclared_variables(true);
            assert_eq!(mine, theirs, "{source:?}");
        }
    }
}
