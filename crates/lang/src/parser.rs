//! The rule language's grammar: tokens ([`super::lexer`]) to a syntax tree ([`super::ast`]),
//! by recursive descent, one function per level of precedence.
//!
//! The surface is what policy owners write (Jinja's expression syntax, and the precedence
//! minijinja gives it), kept to what a rule needs. From the loosest binding to the tightest:
//!
//! ```text
//! expr     := or ("if" or ("else" expr)?)*
//! or       := and ("or" and)*
//! and      := not ("and" not)*
//! not      := "not" not | compare
//! compare  := sum (("==" | "!=" | "<" | "<=" | ">" | ">=" | "in" | "not in") sum)?
//! sum      := concat (("+" | "-") concat)*
//! concat   := product ("~" product)*
//! product  := unary (("*" | "/" | "//" | "%") unary)*
//! unary    := negated postfix* ("|" name ("(" args ")")? | "is" "not"? name)*
//! negated  := "-" negated postfix* | primary
//! postfix  := "." name | "[" expr "]" | "(" args ")"      (a call only of a bare name)
//! primary  := literal | name | "(" expr ")" | "[" exprs "]" | "{" (expr ":" expr),* "}"
//! ```
//!
//! So `-x | abs` is `(-x) | abs`, `-a.b` is `-(a.b)` and `a if b else c if d else e` nests to
//! the right. What Jinja has and a rule does not need is refused with a located error that says
//! what to write instead: `**`, chained comparisons (`a < b < c`), tuples, slices, keyword
//! arguments, method calls, tests with arguments, adjacent strings.

use std::ops::Range;

use super::ast::{BinaryOp, Lit, Name, Term, TermKind, UnaryOp};
use super::lexer::{SyntaxError, Token, tokenize};

/// How deep brackets may nest before the parser refuses the expression (far above what a rule
/// writes; [`super::limits`] bounds the text before it gets here, to 32).
const MAX_DEPTH: usize = 200;

/// How long a chain of `not` or `-` may be: as many as the tokens [`super::limits`] allows (each
/// link is one light frame here and in the compiler and evaluator; `tests/batch.rs` decides the
/// longest on a worker thread).
const MAX_CHAIN: usize = super::limits::MAX_TOKENS;

/// The words the language keeps for itself: never a name.
pub const KEYWORDS: &[&str] = &[
    "and", "or", "not", "in", "is", "if", "else", "true", "false", "none", "True", "False", "None",
];

/// Parses `text` as one expression.
pub fn parse(text: &str) -> Result<Term, SyntaxError> {
    let tokens = tokenize(text)?;
    let mut parser = Parser {
        tokens,
        at: 0,
        end: text.len(),
        depth: 0,
        chain: 0,
    };
    let expr = parser.expr()?;
    if let Some((token, span)) = parser.tokens.get(parser.at) {
        return Err(SyntaxError {
            message: format!("unexpected {} after the expression", token.describe()),
            span: span.clone(),
            help: Some(after_expression_help(token)),
        });
    }
    Ok(expr)
}

fn after_expression_help(token: &Token<'_>) -> String {
    match token {
        Token::Str(_) => "two strings are joined with `~`".to_owned(),
        Token::Comma => "a list is written in brackets: `[a, b]`".to_owned(),
        Token::Ident(_) | Token::Int(_) | Token::Float(_) => {
            "an operator is missing between two values, or a test takes no argument".to_owned()
        }
        _ => "an operator or a bracket is missing or extra".to_owned(),
    }
}

struct Parser<'s> {
    tokens: Vec<(Token<'s>, Range<usize>)>,
    at: usize,
    /// The text's length: where "the end of the expression" is.
    end: usize,
    depth: usize,
    chain: usize,
}

impl<'s> Parser<'s> {
    fn peek(&self) -> Option<&Token<'s>> {
        self.tokens.get(self.at).map(|(t, _)| t)
    }

    fn peek_at(&self, ahead: usize) -> Option<&Token<'s>> {
        self.tokens.get(self.at + ahead).map(|(t, _)| t)
    }

    fn span(&self) -> Range<usize> {
        self.tokens
            .get(self.at)
            .map_or(self.end..self.end, |(_, s)| s.clone())
    }

    /// Where the last token taken ends.
    fn last_end(&self) -> usize {
        self.at
            .checked_sub(1)
            .and_then(|i| self.tokens.get(i))
            .map_or(0, |(_, s)| s.end)
    }

    fn next(&mut self) -> Option<(Token<'s>, Range<usize>)> {
        let t = self.tokens.get(self.at).cloned();
        if t.is_some() {
            self.at += 1;
        }
        t
    }

    fn is_word(&self, word: &str) -> bool {
        matches!(self.peek(), Some(Token::Ident(w)) if *w == word)
    }

    fn eat(&mut self, token: &Token<'_>) -> bool {
        if self.peek() == Some(token) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn eat_word(&mut self, word: &str) -> bool {
        if self.is_word(word) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn error(&self, message: impl Into<String>, help: Option<&str>) -> SyntaxError {
        SyntaxError {
            message: message.into(),
            span: self.span(),
            help: help.map(str::to_owned),
        }
    }

    /// "expected X, found Y" at the current token.
    fn expected(&self, what: &str) -> SyntaxError {
        let found = self
            .peek()
            .map_or_else(|| "the end of the expression".to_owned(), Token::describe);
        self.error(format!("expected {what}, found {found}"), None)
    }

    fn expect(&mut self, token: &Token<'_>, what: &str) -> Result<(), SyntaxError> {
        if self.eat(token) {
            Ok(())
        } else {
            Err(self.expected(what))
        }
    }

    fn node(&self, kind: TermKind, start: usize) -> Term {
        Term {
            kind,
            span: start..self.last_end(),
        }
    }

    fn expr(&mut self) -> Result<Term, SyntaxError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.error(
                format!("the expression nests more than {MAX_DEPTH} deep"),
                Some("split it into facts, each one step of the calculation"),
            ));
        }
        let e = self.if_expr();
        self.depth -= 1;
        e
    }

    fn if_expr(&mut self) -> Result<Term, SyntaxError> {
        let start = self.span().start;
        let mut expr = self.or()?;
        while self.eat_word("if") {
            let test = self.or()?;
            let no = if self.eat_word("else") {
                Some(Box::new(self.expr()?))
            } else {
                None
            };
            expr = self.node(
                TermKind::If {
                    test: Box::new(test),
                    yes: Box::new(expr),
                    no,
                },
                start,
            );
        }
        Ok(expr)
    }

    fn or(&mut self) -> Result<Term, SyntaxError> {
        let start = self.span().start;
        let mut left = self.and()?;
        while self.eat_word("or") {
            let right = self.and()?;
            left = self.binary(BinaryOp::Or, left, right, start);
        }
        Ok(left)
    }

    fn and(&mut self) -> Result<Term, SyntaxError> {
        let start = self.span().start;
        let mut left = self.not()?;
        while self.eat_word("and") {
            let right = self.not()?;
            left = self.binary(BinaryOp::And, left, right, start);
        }
        Ok(left)
    }

    fn not(&mut self) -> Result<Term, SyntaxError> {
        let start = self.span().start;
        if self.eat_word("not") {
            self.chain += 1;
            if self.chain > MAX_CHAIN {
                return Err(
                    self.error(format!("more than {MAX_CHAIN} `not` or `-` in a row"), None)
                );
            }
            let operand = self.not();
            self.chain -= 1;
            return Ok(self.node(TermKind::Unary(UnaryOp::Not, Box::new(operand?)), start));
        }
        self.compare()
    }

    fn compare_op(&self) -> Option<(BinaryOp, usize)> {
        Some(match self.peek()? {
            Token::Eq => (BinaryOp::Eq, 1),
            Token::Ne => (BinaryOp::Ne, 1),
            Token::Lt => (BinaryOp::Lt, 1),
            Token::Lte => (BinaryOp::Lte, 1),
            Token::Gt => (BinaryOp::Gt, 1),
            Token::Gte => (BinaryOp::Gte, 1),
            Token::Ident("in") => (BinaryOp::In, 1),
            Token::Ident("not") if self.peek_at(1) == Some(&Token::Ident("in")) => {
                (BinaryOp::NotIn, 2)
            }
            _ => return None,
        })
    }

    fn compare(&mut self) -> Result<Term, SyntaxError> {
        let start = self.span().start;
        let left = self.sum()?;
        let Some((op, len)) = self.compare_op() else {
            if self.is_word("not") {
                self.at += 1;
                return Err(self.expected("`in` after `not`"));
            }
            return Ok(left);
        };
        self.at += len;
        let right = self.sum()?;
        if let Some((second, _)) = self.compare_op() {
            return Err(self.error(
                format!(
                    "`{}` after `{}`: comparisons do not chain",
                    second.symbol(),
                    op.symbol()
                ),
                Some("write each comparison and join them: `a < b and b < c`"),
            ));
        }
        Ok(self.binary(op, left, right, start))
    }

    fn sum(&mut self) -> Result<Term, SyntaxError> {
        let start = self.span().start;
        let mut left = self.concat()?;
        loop {
            let op = match self.peek() {
                Some(Token::Plus) => BinaryOp::Add,
                Some(Token::Minus) => BinaryOp::Sub,
                _ => return Ok(left),
            };
            self.at += 1;
            let right = self.concat()?;
            left = self.binary(op, left, right, start);
        }
    }

    fn concat(&mut self) -> Result<Term, SyntaxError> {
        let start = self.span().start;
        let mut left = self.product()?;
        while self.eat(&Token::Tilde) {
            let right = self.product()?;
            left = self.binary(BinaryOp::Concat, left, right, start);
        }
        Ok(left)
    }

    fn product(&mut self) -> Result<Term, SyntaxError> {
        let start = self.span().start;
        let mut left = self.unary()?;
        loop {
            let op = match self.peek() {
                Some(Token::Mul) => BinaryOp::Mul,
                Some(Token::Div) => BinaryOp::Div,
                Some(Token::FloorDiv) => BinaryOp::FloorDiv,
                Some(Token::Rem) => BinaryOp::Rem,
                Some(Token::Pow) => {
                    return Err(self.error(
                        "`**` is not part of the rule language",
                        Some("multiply (`x * x`), or compute the power in a fact per step"),
                    ));
                }
                _ => return Ok(left),
            };
            self.at += 1;
            let right = self.unary()?;
            left = self.binary(op, left, right, start);
        }
    }

    fn binary(&self, op: BinaryOp, left: Term, right: Term, start: usize) -> Term {
        self.node(TermKind::Binary(op, Box::new(left), Box::new(right)), start)
    }

    fn unary(&mut self) -> Result<Term, SyntaxError> {
        let start = self.span().start;
        let negated = self.negated()?;
        let mut expr = self.postfix(negated, start)?;
        loop {
            if self.eat(&Token::Pipe) {
                let name = self.name("a filter's name")?;
                let args = if self.peek() == Some(&Token::ParenOpen) {
                    self.args()?
                } else {
                    Vec::new()
                };
                expr = self.node(
                    TermKind::Filter {
                        name,
                        subject: Box::new(expr),
                        args,
                    },
                    start,
                );
            } else if self.eat_word("is") {
                let negated = self.eat_word("not");
                let name = self.name("a test's name (`defined`, `undefined` or `none`)")?;
                if self.peek() == Some(&Token::ParenOpen) {
                    return Err(self.error("a test takes no arguments", None));
                }
                expr = self.node(
                    TermKind::Test {
                        name,
                        subject: Box::new(expr),
                        negated,
                    },
                    start,
                );
            } else {
                return Ok(expr);
            }
        }
    }

    fn negated(&mut self) -> Result<Term, SyntaxError> {
        let start = self.span().start;
        if !self.eat(&Token::Minus) {
            return self.primary();
        }
        self.chain += 1;
        if self.chain > MAX_CHAIN {
            return Err(self.error(format!("more than {MAX_CHAIN} `not` or `-` in a row"), None));
        }
        let operand_start = self.span().start;
        let operand = self.negated();
        self.chain -= 1;
        let operand = self.postfix(operand?, operand_start)?;
        Ok(self.node(TermKind::Unary(UnaryOp::Neg, Box::new(operand)), start))
    }

    fn postfix(&mut self, mut expr: Term, start: usize) -> Result<Term, SyntaxError> {
        loop {
            match self.peek() {
                Some(Token::Dot) => {
                    self.at += 1;
                    match self.next() {
                        Some((Token::Ident(name), _)) if !KEYWORDS.contains(&name) => {
                            expr = self.node(TermKind::Attr(Box::new(expr), name.into()), start);
                        }
                        Some((Token::Int(_), span)) => {
                            return Err(SyntaxError {
                                message: "an item is read with brackets, not a dot".to_owned(),
                                span,
                                help: Some("write `x[0]`".to_owned()),
                            });
                        }
                        _ => {
                            self.at -= 1;
                            return Err(self.expected("an attribute's name after `.`"));
                        }
                    }
                }
                Some(Token::BracketOpen) => {
                    self.at += 1;
                    if self.peek() == Some(&Token::Colon) {
                        return Err(self.error("slices are not part of the rule language", None));
                    }
                    if self.peek() == Some(&Token::BracketClose) {
                        return Err(self.expected("a key or an index"));
                    }
                    let key = self.expr()?;
                    if self.peek() == Some(&Token::Colon) {
                        return Err(self.error("slices are not part of the rule language", None));
                    }
                    self.expect(&Token::BracketClose, "`]`")?;
                    expr = self.node(TermKind::Item(Box::new(expr), Box::new(key)), start);
                }
                Some(Token::ParenOpen) => {
                    let TermKind::Var(function) = &expr.kind else {
                        return Err(self.error(
                            "only a function's name can be called",
                            Some("the functions are `ceil`, `floor`, `days_between`, `range` and `cover`; a filter is written `value | name`"),
                        ));
                    };
                    let name = Name {
                        text: function.clone(),
                        span: expr.span.clone(),
                    };
                    let args = self.args()?;
                    expr = self.node(TermKind::Call { name, args }, start);
                }
                _ => return Ok(expr),
            }
        }
    }

    /// A filter's or test's name.
    fn name(&mut self, what: &str) -> Result<Name, SyntaxError> {
        match self.peek() {
            Some(Token::Ident(text)) => {
                let name = Name {
                    text: (*text).into(),
                    span: self.span(),
                };
                self.at += 1;
                if self.peek() == Some(&Token::Dot) {
                    return Err(self.error("a filter's or test's name has no dots", None));
                }
                Ok(name)
            }
            _ => Err(self.expected(what)),
        }
    }

    /// `(a, b, ...)`: positional arguments.
    fn args(&mut self) -> Result<Vec<Term>, SyntaxError> {
        self.expect(&Token::ParenOpen, "`(`")?;
        let mut args = Vec::new();
        loop {
            if self.eat(&Token::ParenClose) {
                return Ok(args);
            }
            if !args.is_empty() {
                self.expect(&Token::Comma, "`,` or `)`")?;
                if self.eat(&Token::ParenClose) {
                    return Ok(args);
                }
            }
            if matches!(self.peek(), Some(Token::Ident(_)))
                && self.peek_at(1) == Some(&Token::Assign)
            {
                return Err(self.error(
                    "keyword arguments are not part of the rule language",
                    Some("pass the arguments in order"),
                ));
            }
            args.push(self.expr()?);
        }
    }

    fn primary(&mut self) -> Result<Term, SyntaxError> {
        let span = self.span();
        let Some((token, _)) = self.next() else {
            return Err(self.expected("a value"));
        };
        let lit = |l: Lit| Term {
            kind: TermKind::Lit(l),
            span: span.clone(),
        };
        Ok(match token {
            Token::Ident("true" | "True") => lit(Lit::Bool(true)),
            Token::Ident("false" | "False") => lit(Lit::Bool(false)),
            Token::Ident("none" | "None") => lit(Lit::None),
            Token::Ident(word) if KEYWORDS.contains(&word) => {
                self.at -= 1;
                return Err(self.expected("a value"));
            }
            Token::Ident(name) => Term {
                kind: TermKind::Var(name.into()),
                span,
            },
            Token::Int(i) => lit(Lit::Int(i)),
            Token::Float(f) => lit(Lit::Float(f)),
            Token::Str(s) => lit(Lit::Str(s)),
            Token::ParenOpen => {
                if self.peek() == Some(&Token::ParenClose) {
                    return Err(self.error("tuples are not part of the rule language", None));
                }
                let inner = self.expr()?;
                if self.peek() == Some(&Token::Comma) {
                    return Err(self.error(
                        "tuples are not part of the rule language",
                        Some("a list is written in brackets: `[a, b]`"),
                    ));
                }
                self.expect(&Token::ParenClose, "`)`")?;
                // The brackets are part of what the inner expression was written as.
                Term {
                    kind: inner.kind,
                    span: span.start..self.last_end(),
                }
            }
            Token::BracketOpen => {
                let items = self.sequence(&Token::BracketClose, "`]`", Parser::expr)?;
                self.node(TermKind::List(items), span.start)
            }
            Token::BraceOpen => {
                let pairs = self.sequence(&Token::BraceClose, "`}`", |p| {
                    let key = p.expr()?;
                    p.expect(&Token::Colon, "`:` after a key")?;
                    Ok((key, p.expr()?))
                })?;
                self.node(TermKind::Map(pairs), span.start)
            }
            other => {
                self.at -= 1;
                let _ = other;
                return Err(self.expected("a value"));
            }
        })
    }

    /// Items separated by commas up to `close` (a trailing comma allowed).
    fn sequence<T>(
        &mut self,
        close: &Token<'_>,
        what: &str,
        mut item: impl FnMut(&mut Self) -> Result<T, SyntaxError>,
    ) -> Result<Vec<T>, SyntaxError> {
        let mut items = Vec::new();
        loop {
            if self.eat(close) {
                return Ok(items);
            }
            if !items.is_empty() {
                self.expect(&Token::Comma, &format!("`,` or {what}"))?;
                if self.eat(close) {
                    return Ok(items);
                }
            }
            items.push(item(self)?);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tree as a compact text: operators in prefix form, to check precedence.
    #[allow(clippy::format_collect)]
    fn show(e: &Term) -> String {
        match &e.kind {
            TermKind::Lit(Lit::Int(i)) => i.to_string(),
            TermKind::Lit(Lit::Float(f)) => format!("{f:?}"),
            TermKind::Lit(Lit::Str(s)) => format!("'{s}'"),
            TermKind::Lit(Lit::Bool(b)) => b.to_string(),
            TermKind::Lit(Lit::None) => "none".to_owned(),
            TermKind::Var(n) => n.to_string(),
            TermKind::Attr(e, n) => format!("{}.{n}", show(e)),
            TermKind::Item(e, k) => format!("{}[{}]", show(e), show(k)),
            TermKind::Unary(UnaryOp::Not, e) => format!("(not {})", show(e)),
            TermKind::Unary(UnaryOp::Neg, e) => format!("(- {})", show(e)),
            TermKind::Binary(op, l, r) => format!("({} {} {})", op.symbol(), show(l), show(r)),
            TermKind::If { test, yes, no } => format!(
                "(if {} {} {})",
                show(test),
                show(yes),
                no.as_ref().map_or("-".to_owned(), |n| show(n))
            ),
            TermKind::List(items) => {
                format!("[{}]", items.iter().map(show).collect::<Vec<_>>().join(" "))
            }
            TermKind::Map(pairs) => format!(
                "{{{}}}",
                pairs
                    .iter()
                    .map(|(k, v)| format!("{}:{}", show(k), show(v)))
                    .collect::<Vec<_>>()
                    .join(" ")
            ),
            TermKind::Filter {
                name,
                subject,
                args,
            } => format!(
                "(|{} {}{})",
                name.text,
                show(subject),
                args.iter()
                    .map(|a| format!(" {}", show(a)))
                    .collect::<String>()
            ),
            TermKind::Test {
                name,
                subject,
                negated,
            } => format!(
                "(is{} {} {})",
                if *negated { "not" } else { "" },
                name.text,
                show(subject)
            ),
            TermKind::Call { name, args } => format!(
                "({}{})",
                name.text,
                args.iter()
                    .map(|a| format!(" {}", show(a)))
                    .collect::<String>()
            ),
        }
    }

    fn tree(text: &str) -> String {
        show(&parse(text).unwrap_or_else(|e| panic!("{text}: {e:?}")))
    }

    #[test]
    fn precedence_is_jinjas() {
        assert_eq!(tree("1 + 2 * 3 - 4"), "(- (+ 1 (* 2 3)) 4)");
        assert_eq!(tree("a + b ~ c"), "(+ a (~ b c))");
        assert_eq!(tree("not a and b or c"), "(or (and (not a) b) c)");
        assert_eq!(tree("not a == b"), "(not (== a b))");
        assert_eq!(tree("a not in b"), "(not in a b)");
        assert_eq!(tree("-x | abs"), "(|abs (- x))");
        assert_eq!(tree("-a.b[c]"), "(- a.b[c])");
        assert_eq!(tree("x | round(1) | num"), "(|num (|round x 1))");
        assert_eq!(
            tree("x is not defined and y is none"),
            "(and (isnot defined x) (is none y))"
        );
        assert_eq!(tree("a if b else c if d else e"), "(if b a (if d c e))");
        assert_eq!(tree("a if b"), "(if b a -)");
        assert_eq!(tree("a if b if c"), "(if c (if b a -) -)");
        assert_eq!(tree("ceil(x / 8) * 8"), "(* (ceil (/ x 8)) 8)");
        assert_eq!(tree("{'a': [1, 2,], 'b': none}"), "{'a':[1 2] 'b':none}");
        assert_eq!(tree("(a + b) * c"), "(* (+ a b) c)");
        assert_eq!(tree("a - -b"), "(- a (- b))");
        assert_eq!(tree("1.5e3 // 2 % 7"), "(% (// 1500.0 2) 7)");
    }

    #[test]
    fn spans_cover_what_was_written() {
        let e = parse("  (a + b) * c ").unwrap();
        assert_eq!(e.span, 2..13);
        let TermKind::Binary(_, left, right) = &e.kind else {
            panic!()
        };
        assert_eq!((left.span.clone(), right.span.clone()), (2..9, 12..13));
    }

    fn error(text: &str) -> (String, Range<usize>) {
        let e = parse(text).unwrap_err();
        (e.message, e.span)
    }

    #[test]
    fn what_a_rule_does_not_need_is_refused_with_its_place() {
        assert_eq!(
            error("a < b < c").0,
            "`<` after `<`: comparisons do not chain"
        );
        assert_eq!(
            error("a ** 2"),
            ("`**` is not part of the rule language".into(), 2..4)
        );
        assert_eq!(
            error("(a, b)").0,
            "tuples are not part of the rule language"
        );
        assert_eq!(
            error("x[1:2]").0,
            "slices are not part of the rule language"
        );
        assert_eq!(
            error("f(x, y=1)").0,
            "keyword arguments are not part of the rule language"
        );
        assert_eq!(error("a.b(1)").0, "only a function's name can be called");
        assert_eq!(error("x is divisibleby(3)").0, "a test takes no arguments");
        assert_eq!(
            error("a b"),
            ("unexpected `b` after the expression".into(), 2..3)
        );
        assert_eq!(
            error("a +"),
            (
                "expected a value, found the end of the expression".into(),
                3..3
            )
        );
        assert_eq!(
            error("[1, 2"),
            (
                "expected `,` or `]`, found the end of the expression".into(),
                5..5
            )
        );
        assert_eq!(error("and"), ("expected a value, found `and`".into(), 0..3));
        assert_eq!(error("x.0").0, "an item is read with brackets, not a dot");
        assert_eq!(error("a not b").0, "expected `in` after `not`, found `b`");
    }

    #[test]
    fn nesting_is_bounded() {
        let deep = format!("{}1{}", "(".repeat(300), ")".repeat(300));
        assert!(error(&deep).0.contains("nests more than"));
        let nots = format!("{}x", "not ".repeat(1001));
        assert!(error(&nots).0.contains("in a row"));
        let negs = format!("{}x", "- ".repeat(1001));
        assert!(error(&negs).0.contains("in a row"));
        assert!(parse(&format!("{}x", "not ".repeat(999))).is_ok());
    }
}
