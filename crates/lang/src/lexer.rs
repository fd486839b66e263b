//! The rule language's tokens: an expression's text cut into names, literals and operators,
//! each with its byte range, in one loop (no recursion, so any length of text is safe here).

use std::ops::Range;

/// What is wrong with an expression's text, where (byte range in the text), and what would be
/// valid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxError {
    pub message: String,
    pub span: Range<usize>,
    pub help: Option<String>,
}

/// One token of an expression.
#[derive(Debug, Clone, PartialEq)]
pub enum Token<'s> {
    /// A name or a keyword (`and`, `or`, `not`, `in`, `is`, `if`, `else`, `true`, ...).
    Ident(&'s str),
    Int(i64),
    Float(f64),
    Str(Box<str>),
    Plus,
    Minus,
    Mul,
    Div,
    FloorDiv,
    Rem,
    /// `**`: not part of the language; lexed so the parser can say so.
    Pow,
    Tilde,
    Dot,
    Comma,
    Colon,
    Pipe,
    Assign,
    Eq,
    Ne,
    Lt,
    Lte,
    Gt,
    Gte,
    ParenOpen,
    ParenClose,
    BracketOpen,
    BracketClose,
    BraceOpen,
    BraceClose,
}

impl Token<'_> {
    /// How an error names the token.
    pub fn describe(&self) -> String {
        match self {
            Token::Ident(name) => format!("`{name}`"),
            Token::Int(i) => format!("the number {i}"),
            Token::Float(f) => format!("the number {f}"),
            Token::Str(_) => "a string".to_owned(),
            other => format!("`{}`", other.symbol()),
        }
    }

    fn symbol(&self) -> &'static str {
        match self {
            Token::Plus => "+",
            Token::Minus => "-",
            Token::Mul => "*",
            Token::Div => "/",
            Token::FloorDiv => "//",
            Token::Rem => "%",
            Token::Pow => "**",
            Token::Tilde => "~",
            Token::Dot => ".",
            Token::Comma => ",",
            Token::Colon => ":",
            Token::Pipe => "|",
            Token::Assign => "=",
            Token::Eq => "==",
            Token::Ne => "!=",
            Token::Lt => "<",
            Token::Lte => "<=",
            Token::Gt => ">",
            Token::Gte => ">=",
            Token::ParenOpen => "(",
            Token::ParenClose => ")",
            Token::BracketOpen => "[",
            Token::BracketClose => "]",
            Token::BraceOpen => "{",
            Token::BraceClose => "}",
            Token::Ident(_) | Token::Int(_) | Token::Float(_) | Token::Str(_) => "",
        }
    }
}

/// The tokens of `text`, each with its byte range, or the first thing that is not a token.
pub fn tokenize(text: &str) -> Result<Vec<(Token<'_>, Range<usize>)>, SyntaxError> {
    tokens(text).collect()
}

/// The tokens of `text` one at a time, up to and including the first error.
pub fn tokens(text: &str) -> Tokens<'_> {
    Tokens {
        text,
        at: 0,
        failed: false,
    }
}

/// An iterator over the tokens of a text ([`tokens`]).
pub struct Tokens<'s> {
    text: &'s str,
    at: usize,
    failed: bool,
}

impl<'s> Iterator for Tokens<'s> {
    type Item = Result<(Token<'s>, Range<usize>), SyntaxError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        let next = self.token();
        if matches!(next, Some(Err(_))) {
            self.failed = true;
        }
        next
    }
}

impl<'s> Tokens<'s> {
    fn token(&mut self) -> Option<Result<(Token<'s>, Range<usize>), SyntaxError>> {
        let text = self.text;
        let bytes = text.as_bytes();
        while self.at < bytes.len() && bytes[self.at].is_ascii_whitespace() {
            self.at += 1;
        }
        let at = self.at;
        let c = *bytes.get(at)?;
        let start = at;
        let (token, len) = if c.is_ascii_alphabetic() || c == b'_' {
            let len = bytes[at..]
                .iter()
                .take_while(|b| b.is_ascii_alphanumeric() || **b == b'_')
                .count();
            (Token::Ident(&text[start..start + len]), len)
        } else if c.is_ascii_digit() {
            match number(&text[at..]) {
                Ok(found) => found,
                Err(message) => {
                    return Some(Err(SyntaxError {
                        message,
                        span: start..start + 1,
                        help: None,
                    }));
                }
            }
        } else if c == b'\'' || c == b'"' {
            match string(&text[at..], start) {
                Ok((value, len)) => (Token::Str(value.into()), len),
                Err(e) => return Some(Err(e)),
            }
        } else {
            let two = bytes.get(at..at + 2).unwrap_or_default();
            match two {
                b"//" => (Token::FloorDiv, 2),
                b"**" => (Token::Pow, 2),
                b"==" => (Token::Eq, 2),
                b"!=" => (Token::Ne, 2),
                b"<=" => (Token::Lte, 2),
                b">=" => (Token::Gte, 2),
                _ => match c {
                    b'+' => (Token::Plus, 1),
                    b'-' => (Token::Minus, 1),
                    b'*' => (Token::Mul, 1),
                    b'/' => (Token::Div, 1),
                    b'%' => (Token::Rem, 1),
                    b'~' => (Token::Tilde, 1),
                    b'.' => (Token::Dot, 1),
                    b',' => (Token::Comma, 1),
                    b':' => (Token::Colon, 1),
                    b'|' => (Token::Pipe, 1),
                    b'=' => (Token::Assign, 1),
                    b'<' => (Token::Lt, 1),
                    b'>' => (Token::Gt, 1),
                    b'(' => (Token::ParenOpen, 1),
                    b')' => (Token::ParenClose, 1),
                    b'[' => (Token::BracketOpen, 1),
                    b']' => (Token::BracketClose, 1),
                    b'{' => (Token::BraceOpen, 1),
                    b'}' => (Token::BraceClose, 1),
                    _ => {
                        let ch = text[at..].chars().next().unwrap_or('?');
                        return Some(Err(SyntaxError {
                            message: format!("unexpected character `{ch}`"),
                            span: start..start + ch.len_utf8(),
                            help: Some(
                                "names are ASCII letters, digits and `_`; text goes in quotes"
                                    .to_owned(),
                            ),
                        }));
                    }
                },
            }
        };
        self.at = start + len;
        Some(Ok((token, start..start + len)))
    }
}

/// A number at the start of `text` (which starts with a digit): an integer, or a float with a
/// fraction or an exponent; `_` may separate digits. Its token and length.
fn number(text: &str) -> Result<(Token<'static>, usize), String> {
    let bytes = text.as_bytes();
    let digits = |from: usize| {
        bytes[from..]
            .iter()
            .take_while(|b| b.is_ascii_digit() || **b == b'_')
            .count()
    };
    let mut len = digits(0);
    let mut float = false;
    // A fraction needs a digit after the dot (`x.0` stays an attribute-like access).
    if bytes.get(len) == Some(&b'.') && bytes.get(len + 1).is_some_and(u8::is_ascii_digit) {
        float = true;
        len += 1 + digits(len + 1);
    }
    if matches!(bytes.get(len), Some(b'e' | b'E')) {
        let sign = usize::from(matches!(bytes.get(len + 1), Some(b'+' | b'-')));
        if bytes.get(len + 1 + sign).is_some_and(u8::is_ascii_digit) {
            float = true;
            len += 1 + sign + digits(len + 1 + sign);
        }
    }
    let written = &text[..len];
    if written.ends_with('_') || written.contains("__") || written.contains("_.") {
        return Err(format!(
            "`{written}` is not a number: `_` may only stand between digits"
        ));
    }
    let clean = written.replace('_', "");
    if float {
        clean
            .parse::<f64>()
            .ok()
            .filter(|f| f.is_finite())
            .map(|f| (Token::Float(f), len))
            .ok_or_else(|| format!("`{written}` is too large a number"))
    } else {
        clean
            .parse::<i64>()
            .map(|i| (Token::Int(i), len))
            .map_err(|_| format!("`{written}` is too large a whole number (at most 2^63 - 1)"))
    }
}

/// A string at the start of `text` (which starts with its quote), unescaped, and its length
/// with the quotes. `offset` is where `text` starts (for errors).
fn string(text: &str, offset: usize) -> Result<(String, usize), SyntaxError> {
    let quote = text.as_bytes()[0] as char;
    let mut out = String::new();
    let mut chars = text.char_indices().skip(1);
    while let Some((i, c)) = chars.next() {
        match c {
            c if c == quote => return Ok((out, i + 1)),
            '\\' => {
                let Some((j, e)) = chars.next() else { break };
                let escape_error = |what: &str| SyntaxError {
                    message: format!("{what} in a string"),
                    span: offset + i..offset + j + e.len_utf8(),
                    help: Some(
                        "the escapes are \\\\, \\', \\\", \\n, \\t, \\r, \\b, \\f, \\/ and \\uXXXX"
                            .to_owned(),
                    ),
                };
                out.push(match e {
                    '\\' | '\'' | '"' | '/' => e,
                    'n' => '\n',
                    't' => '\t',
                    'r' => '\r',
                    'b' => '\x08',
                    'f' => '\x0C',
                    'u' => {
                        let hex: String = text[j + 1..].chars().take(4).collect();
                        let code = (hex.len() == 4)
                            .then(|| u32::from_str_radix(&hex, 16).ok())
                            .flatten()
                            .and_then(char::from_u32)
                            .ok_or_else(|| escape_error("a bad `\\u` escape"))?;
                        for _ in 0..4 {
                            chars.next();
                        }
                        code
                    }
                    _ => return Err(escape_error(&format!("an unknown escape `\\{e}`"))),
                });
            }
            c => out.push(c),
        }
    }
    Err(SyntaxError {
        message: "a string is not closed".to_owned(),
        span: offset..offset + text.len(),
        help: Some(format!("end it with {quote}")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<Token<'_>> {
        tokenize(text)
            .unwrap()
            .into_iter()
            .map(|(t, _)| t)
            .collect()
    }

    #[test]
    fn numbers_strings_and_operators() {
        assert_eq!(
            kinds("1_000 + 2.5e-3 // x.y"),
            vec![
                Token::Int(1000),
                Token::Plus,
                Token::Float(0.0025),
                Token::FloorDiv,
                Token::Ident("x"),
                Token::Dot,
                Token::Ident("y"),
            ]
        );
        assert_eq!(
            kinds(r#"'a\'b' "c\u00e9\n""#),
            vec![Token::Str("a'b".into()), Token::Str("cé\n".into())]
        );
        assert_eq!(
            kinds("a<=b!=c>d==e"),
            vec![
                Token::Ident("a"),
                Token::Lte,
                Token::Ident("b"),
                Token::Ne,
                Token::Ident("c"),
                Token::Gt,
                Token::Ident("d"),
                Token::Eq,
                Token::Ident("e"),
            ]
        );
        // `1.` without a digit after it is a number and a dot; `1e` an integer and a name.
        assert_eq!(
            kinds("1.x"),
            vec![Token::Int(1), Token::Dot, Token::Ident("x")]
        );
        assert_eq!(kinds("2e"), vec![Token::Int(2), Token::Ident("e")]);
    }

    #[test]
    fn spans_are_byte_ranges() {
        let tokens = tokenize("  'é' + ab").unwrap();
        assert_eq!(tokens[0].1, 2..6);
        assert_eq!(tokens[1].1, 7..8);
        assert_eq!(tokens[2].1, 9..11);
    }

    #[test]
    fn what_is_not_a_token_is_named_with_its_place() {
        let e = tokenize("a $ b").unwrap_err();
        assert_eq!(
            (e.message.as_str(), e.span),
            ("unexpected character `$`", 2..3)
        );
        let e = tokenize("'open").unwrap_err();
        assert_eq!(
            (e.message.as_str(), e.span),
            ("a string is not closed", 0..5)
        );
        let e = tokenize(r"'\q'").unwrap_err();
        assert_eq!(e.message, "an unknown escape `\\q` in a string");
        let e = tokenize("99999999999999999999").unwrap_err();
        assert!(e.message.contains("too large"), "{}", e.message);
        let e = tokenize("1__0").unwrap_err();
        assert!(e.message.contains("between digits"), "{}", e.message);
    }
}
