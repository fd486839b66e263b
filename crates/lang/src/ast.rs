//! The rule language's syntax tree: what [`super::parser`] builds from an expression's text,
//! every node with the byte range of the text it was written as.
//!
//! The tree knows nothing of values at run time or of minijinja: literals are the language's
//! own ([`Lit`]), names are text, and filters, tests and functions are names that the compiler
//! ([`super::fast`]) resolves against what the language offers.

use std::ops::Range;

/// An expression and where it is written in the expression's text (byte offsets).
#[derive(Debug, Clone, PartialEq)]
pub struct Term {
    pub kind: TermKind,
    pub span: Range<usize>,
}

/// A literal as written.
#[derive(Debug, Clone, PartialEq)]
pub enum Lit {
    None,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(Box<str>),
}

/// A name with where it is written: a filter's, a test's or a function's.
#[derive(Debug, Clone, PartialEq)]
pub struct Name {
    pub text: Box<str>,
    pub span: Range<usize>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum TermKind {
    Lit(Lit),
    /// A name the expression reads: a node, a root (`profile`, `offers`, ...), the item the node
    /// binds, or a name a text template set.
    Var(Box<str>),
    /// `subject.name`.
    Attr(Box<Term>, Box<str>),
    /// `subject[key]`.
    Item(Box<Term>, Box<Term>),
    Unary(UnaryOp, Box<Term>),
    Binary(BinaryOp, Box<Term>, Box<Term>),
    /// `yes if test else no` (`else` optional).
    If {
        test: Box<Term>,
        yes: Box<Term>,
        no: Option<Box<Term>>,
    },
    List(Vec<Term>),
    /// `{key: value, ...}`, in the order written.
    Map(Vec<(Term, Term)>),
    /// `subject | name(args)`.
    Filter {
        name: Name,
        subject: Box<Term>,
        args: Vec<Term>,
    },
    /// `subject is [not] name`.
    Test {
        name: Name,
        subject: Box<Term>,
        negated: bool,
    },
    /// `name(args)`: a function of the language.
    Call {
        name: Name,
        args: Vec<Term>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnaryOp {
    Not,
    Neg,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinaryOp {
    And,
    Or,
    Eq,
    Ne,
    Lt,
    Lte,
    Gt,
    Gte,
    In,
    NotIn,
    Add,
    Sub,
    Mul,
    Div,
    FloorDiv,
    Rem,
    /// `~`: both sides as text, joined.
    Concat,
}

impl BinaryOp {
    /// The operator as written.
    #[must_use]
    pub fn symbol(self) -> &'static str {
        match self {
            BinaryOp::And => "and",
            BinaryOp::Or => "or",
            BinaryOp::Eq => "==",
            BinaryOp::Ne => "!=",
            BinaryOp::Lt => "<",
            BinaryOp::Lte => "<=",
            BinaryOp::Gt => ">",
            BinaryOp::Gte => ">=",
            BinaryOp::In => "in",
            BinaryOp::NotIn => "not in",
            BinaryOp::Add => "+",
            BinaryOp::Sub => "-",
            BinaryOp::Mul => "*",
            BinaryOp::Div => "/",
            BinaryOp::FloorDiv => "//",
            BinaryOp::Rem => "%",
            BinaryOp::Concat => "~",
        }
    }
}

/// The keys of a map literal when all are distinct constant texts, in the order written: the
/// fields of the record it builds (which the compiler builds without hashing and the
/// typechecker types field by field); `None` for any other map literal.
#[must_use]
pub fn record_keys(pairs: &[(Term, Term)]) -> Option<Vec<&str>> {
    let mut keys: Vec<&str> = Vec::with_capacity(pairs.len());
    for (k, _) in pairs {
        let TermKind::Lit(Lit::Str(key)) = &k.kind else {
            return None;
        };
        if keys.contains(&&**key) {
            return None;
        }
        keys.push(key);
    }
    Some(keys)
}

impl Term {
    /// The literal value of a constant expression: a literal, or a list or map of them (what
    /// the compiler may fold into one constant).
    #[must_use]
    pub fn is_const(&self) -> bool {
        match &self.kind {
            TermKind::Lit(_) => true,
            TermKind::List(items) => items.iter().all(Term::is_const),
            TermKind::Map(pairs) => pairs.iter().all(|(k, v)| k.is_const() && v.is_const()),
            _ => false,
        }
    }

    /// Whether the expression chooses between values (`yes if test else no`) anywhere in it.
    #[must_use]
    pub fn chooses(&self) -> bool {
        match &self.kind {
            TermKind::If { .. } => true,
            TermKind::Lit(_) | TermKind::Var(_) => false,
            TermKind::Attr(e, _) | TermKind::Unary(_, e) | TermKind::Test { subject: e, .. } => {
                e.chooses()
            }
            TermKind::Item(a, b) | TermKind::Binary(_, a, b) => a.chooses() || b.chooses(),
            TermKind::List(items) | TermKind::Call { args: items, .. } => {
                items.iter().any(Term::chooses)
            }
            TermKind::Map(pairs) => pairs.iter().any(|(k, v)| k.chooses() || v.chooses()),
            TermKind::Filter { subject, args, .. } => {
                subject.chooses() || args.iter().any(Term::chooses)
            }
        }
    }

    /// Every name the expression reads, with the attribute path after it where there is one
    /// (`profile.workload.gpus` for `profile.workload.gpus * 2`), a function's name included.
    #[must_use]
    pub fn paths(&self) -> Vec<String> {
        let mut out = Vec::new();
        self.walk_paths(&mut out);
        out
    }

    fn walk_paths(&self, out: &mut Vec<String>) {
        if let Some(path) = self.path() {
            out.push(path);
            return;
        }
        match &self.kind {
            TermKind::Lit(_) | TermKind::Var(_) => {}
            TermKind::Attr(e, _) | TermKind::Unary(_, e) => e.walk_paths(out),
            TermKind::Item(e, k) | TermKind::Binary(_, e, k) => {
                e.walk_paths(out);
                k.walk_paths(out);
            }
            TermKind::If { test, yes, no } => {
                yes.walk_paths(out);
                test.walk_paths(out);
                if let Some(no) = no {
                    no.walk_paths(out);
                }
            }
            TermKind::List(items) => items.iter().for_each(|e| e.walk_paths(out)),
            TermKind::Map(pairs) => pairs.iter().for_each(|(k, v)| {
                k.walk_paths(out);
                v.walk_paths(out);
            }),
            TermKind::Filter { subject, args, .. } => {
                subject.walk_paths(out);
                for e in args {
                    e.walk_paths(out);
                }
            }
            TermKind::Test { subject, .. } => subject.walk_paths(out),
            // A function's name is read as a name too (as minijinja tracks it): a node of that
            // name would shadow the function.
            TermKind::Call { name, args } => {
                out.push(name.text.to_string());
                for e in args {
                    e.walk_paths(out);
                }
            }
        }
    }

    /// `name.a.b` as text when the expression is a name with attributes after it.
    pub(crate) fn path(&self) -> Option<String> {
        match &self.kind {
            TermKind::Var(name) => Some(name.to_string()),
            TermKind::Attr(e, name) => {
                let mut path = e.path()?;
                path.push('.');
                path.push_str(name);
                Some(path)
            }
            _ => None,
        }
    }
}
