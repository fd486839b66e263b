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
    visit(expr, nested, &mut out);
    out
}

fn visit(expr: &ast::Expr<'_>, nested: bool, out: &mut HashSet<String>) {
    let mut all = |exprs: &mut dyn Iterator<Item = &ast::Expr<'_>>| {
        for e in exprs {
            visit(e, nested, out);
        }
    };
    match expr {
        ast::Expr::Var(var) => {
            out.insert(var.id.to_owned());
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
            if nested && let Some(path) = attribute_path(expr) {
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
                visit(k, nested, out);
                visit(v, nested, out);
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

/// `a.b.c` for a chain of attribute lookups that ends in variable `a`.
fn attribute_path(expr: &ast::Expr<'_>) -> Option<String> {
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
                return Some(path);
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
