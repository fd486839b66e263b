//! The names an expression reads, found on the tree parsed once (minijinja's rules restated).
//!
//! minijinja's `Expression::undeclared_variables` parses the expression's text again at every
//! call; the compiler already holds the tree (the fast path is built from it), so the names are
//! read off that tree here. An expression assigns nothing, so minijinja's tracking reduces to
//! this: every variable is read; with `nested`, a chain of attribute lookups that ends in a
//! variable (`profile.usage.gpus`) is read as its dotted path and its variable is not listed on
//! its own. Unit tests compare both on every kind of expression node (here) and
//! on every shipped expression (`graph/scope.rs`).

use std::collections::HashSet;
use std::fmt::Write as _;

use minijinja::machinery::ast;

/// What minijinja's `undeclared_variables(nested)` gives for `expr`.
pub(crate) fn undeclared(expr: &ast::Expr<'_>, nested: bool) -> HashSet<String> {
    let mut out = HashSet::new();
    visit(expr, nested, &|_| false, &mut out);
    out
}

/// What minijinja's `Template::undeclared_variables(true)` gives for a text template parsed
/// into `template`, or `None` when it uses a statement other than text, `{{ }}`, `if`, `for`
/// and `set` of one name (the caller then asks minijinja). A name set or bound by a loop is
/// not read from outside while it is in scope: `for` and each branch of `if` open a scope, as
/// minijinja's tracking does.
pub(crate) fn template_undeclared(template: &ast::Stmt<'_>) -> Option<HashSet<String>> {
    let mut out = HashSet::new();
    // minijinja's tracking assigns `self` before it walks a template.
    let mut scopes: Vec<Vec<&str>> = vec![vec!["self"]];
    walk(template, &mut scopes, &mut out)?;
    Some(out)
}

fn walk<'a>(
    stmt: &ast::Stmt<'a>,
    scopes: &mut Vec<Vec<&'a str>>,
    out: &mut HashSet<String>,
) -> Option<()> {
    let read = |expr: &ast::Expr<'_>, scopes: &Vec<Vec<&'a str>>, out: &mut HashSet<String>| {
        visit(
            expr,
            true,
            &|name| scopes.iter().any(|s| s.contains(&name)),
            out,
        );
    };
    match stmt {
        ast::Stmt::Template(t) => {
            for s in &t.children {
                walk(s, scopes, out)?;
            }
        }
        ast::Stmt::EmitRaw(_) => {}
        ast::Stmt::EmitExpr(e) => read(&e.expr, scopes, out),
        ast::Stmt::IfCond(i) => {
            read(&i.expr, scopes, out);
            scoped(&i.true_body, scopes, out)?;
            scoped(&i.false_body, scopes, out)?;
        }
        ast::Stmt::ForLoop(f) => {
            let ast::Expr::Var(target) = &f.target else {
                return None;
            };
            // minijinja assigns `loop` before reading the iterable, the target after.
            scopes.push(vec!["loop"]);
            read(&f.iter, scopes, out);
            scopes.last_mut()?.push(target.id);
            if let Some(filter) = &f.filter_expr {
                read(filter, scopes, out);
            }
            for s in &f.body {
                walk(s, scopes, out)?;
            }
            scopes.pop();
            scoped(&f.else_body, scopes, out)?;
        }
        ast::Stmt::Set(s) => {
            let ast::Expr::Var(target) = &s.target else {
                return None;
            };
            // minijinja assigns the name before it reads the value.
            scopes.last_mut()?.push(target.id);
            read(&s.expr, scopes, out);
        }
        _ => return None,
    }
    Some(())
}

/// Walks `stmts` in a scope of their own.
fn scoped<'a>(
    stmts: &[ast::Stmt<'a>],
    scopes: &mut Vec<Vec<&'a str>>,
    out: &mut HashSet<String>,
) -> Option<()> {
    scopes.push(Vec::new());
    let walked = stmts.iter().try_for_each(|s| walk(s, scopes, out));
    scopes.pop();
    walked
}

/// Adds the names `expr` reads to `out`, skipping the names `assigned` says a template set.
fn visit(
    expr: &ast::Expr<'_>,
    nested: bool,
    assigned: &dyn Fn(&str) -> bool,
    out: &mut HashSet<String>,
) {
    let mut all = |exprs: &mut dyn Iterator<Item = &ast::Expr<'_>>| {
        for e in exprs {
            visit(e, nested, assigned, out);
        }
    };
    match expr {
        ast::Expr::Var(var) => {
            if !assigned(var.id) {
                out.insert(var.id.to_owned());
            }
        }
        ast::Expr::Const(_) => {}
        ast::Expr::UnaryOp(u) => all(&mut std::iter::once(&u.expr)),
        ast::Expr::BinOp(b) => all(&mut [&b.left, &b.right].into_iter()),
        ast::Expr::Compare(c) => {
            all(&mut std::iter::once(&c.expr).chain(c.ops.iter().map(|op| &op.expr)));
        }
        ast::Expr::IfExpr(i) => all(&mut [&i.test_expr, &i.true_expr]
            .into_iter()
            .chain(i.false_expr.as_ref())),
        ast::Expr::Filter(f) => {
            all(&mut f.expr.iter().chain(f.args.iter().map(call_arg)));
        }
        ast::Expr::Test(t) => all(&mut std::iter::once(&t.expr).chain(t.args.iter().map(call_arg))),
        ast::Expr::GetAttr(g) => {
            if nested
                && let Some((var, path)) = attribute_path(expr)
                && !assigned(var)
            {
                out.insert(path);
                return;
            }
            all(&mut std::iter::once(&g.expr));
        }
        ast::Expr::GetItem(g) => all(&mut [&g.expr, &g.subscript_expr].into_iter()),
        // minijinja reads a slice's bounds, not what is sliced (kept, to give its answer).
        ast::Expr::Slice(s) => all(&mut s.start.iter().chain(&s.stop).chain(&s.step)),
        ast::Expr::Call(c) => all(&mut std::iter::once(&c.expr).chain(c.args.iter().map(call_arg))),
        ast::Expr::List(l) => all(&mut l.items.iter()),
        ast::Expr::Tuple(t) => all(&mut t.items.iter()),
        ast::Expr::Map(m) => {
            for (k, v) in m.keys.iter().zip(&m.values) {
                visit(k, nested, assigned, out);
                visit(v, nested, assigned, out);
            }
        }
    }
}

fn call_arg<'e, 'a>(arg: &'e ast::CallArg<'a>) -> &'e ast::Expr<'a> {
    match arg {
        ast::CallArg::Pos(e)
        | ast::CallArg::Kwarg(_, e)
        | ast::CallArg::PosSplat(e)
        | ast::CallArg::KwargSplat(e) => e,
    }
}

/// Variable `a` and the path `a.b.c`, for a chain of attribute lookups that ends in `a`.
fn attribute_path<'a>(expr: &ast::Expr<'a>) -> Option<(&'a str, String)> {
    let mut attrs = Vec::new();
    let mut at = expr;
    loop {
        match at {
            ast::Expr::GetAttr(g) => {
                attrs.push(g.name);
                at = &g.expr;
            }
            ast::Expr::Var(var) => {
                let mut path = var.id.to_owned();
                for attr in attrs.iter().rev() {
                    let _ = write!(path, ".{attr}");
                }
                return Some((var.id, path));
            }
            _ => return None,
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn check(text: &str) {
        let env = crate::expr::environment();
        let compiled = env.compile_expression(text).unwrap();
        let tree = minijinja::machinery::parse_expr(text).unwrap();
        for nested in [true, false] {
            assert_eq!(
                undeclared(&tree, nested),
                compiled.undeclared_variables(nested),
                "{text} (nested: {nested})"
            );
        }
    }

    #[test]
    fn every_kind_of_expression_reads_what_minijinja_says() {
        for text in [
            "a",
            "a.b.c",
            "a.b[c].d",
            "a[b.c]",
            "f(a.b, k=c.d, *e, **g)",
            "a | f(b.c) | g",
            "a is divisibleby(b.c)",
            "not a.b and -c or d ~ e",
            "a < b.c < d",
            "a.b if c.d else e.f",
            "a.b if c",
            "[a.b, (c, d.e)]",
            "{a.b: c.d, 'k': e}",
            "a.b[c.d:e.f:g]",
            "a.b[:2]",
            "(a | f).b",
            "1 + 2",
            "f(a).b.c",
        ] {
            check(text);
        }
    }
}
