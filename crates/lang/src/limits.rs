//! Bounds on the size of one rule expression and of each tag of a template, checked with the
//! rule language's tokenizer and template scanner (loops, no recursion) before a parser, a
//! compiler or an evaluator walks the tree (all recursive): a 100,000-term `1 + 1 + …` or a long `not not …` chain would
//! overflow the stack and abort the process. The bounds are ten times the largest expression
//! the default policy writes (about 110 tokens, the memo's trade chart) and keep the deepest
//! tree well inside the 2 MiB stack of a batch worker thread (`tests/bounds.rs`).

use super::lexer::{Token, tokens};
use super::template::{Segment, segments};

/// The most tokens one expression, `{{ … }}` or `{% … %}` may have.
pub const MAX_TOKENS: usize = 1_000;

/// The most brackets (`(`, `[`, `{`) open at once in one expression.
pub const MAX_BRACKETS: usize = 32;

/// The most template blocks (`{% if %}`, `{% for %}`, `{% macro %}` …) open at once.
pub const MAX_BLOCKS: usize = 32;

/// The longest line and the most lines of one text: minijinja's lexer counts both in 16 bits
/// and overflows past 65,535 (a panic in a debug build, a wrong place in a release build;
/// found by the `folder` fuzz target with a 224,000-character line).
pub const MAX_LINE: usize = 60_000;

/// Checks that `text` has at most [`MAX_LINE`] lines, each of at most [`MAX_LINE`] bytes, before
/// minijinja's lexer counts them.
fn lines(text: &str) -> Result<(), Limit> {
    for (i, line) in text.split('\n').enumerate() {
        if i >= MAX_LINE {
            return Err(Limit {
                what: format!("more than {MAX_LINE} lines (the limit)"),
                line: i + 1,
            });
        }
        if line.len() > MAX_LINE {
            return Err(Limit {
                what: format!("a line longer than {MAX_LINE} bytes (the limit)"),
                line: i + 1,
            });
        }
    }
    Ok(())
}

/// A bound an expression or template is over: what, and on which line of its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limit {
    pub what: String,
    /// The line of the text (1 for the first).
    pub line: usize,
}

impl std::fmt::Display for Limit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.what)
    }
}

impl From<Limit> for minijinja::Error {
    /// A syntax error for minijinja's callers, the line in its words where there is more than
    /// one.
    fn from(limit: Limit) -> Self {
        let what = if limit.line > 1 {
            format!("{} on line {}", limit.what, limit.line)
        } else {
            limit.what
        };
        minijinja::Error::new(minijinja::ErrorKind::SyntaxError, what)
    }
}

/// Checks one rule expression against [`MAX_TOKENS`] and [`MAX_BRACKETS`]; a text the
/// tokenizer refuses is counted up to what it refuses, and left to the parser, which words the
/// error.
///
/// # Errors
/// The expression is over a bound.
pub fn expression(text: &str) -> Result<(), Limit> {
    lines(text)?;
    let mut tag = Tag::default();
    let mut lines = Lines::new(text);
    for token in tokens(text) {
        let Ok((token, span)) = token else { break };
        tag.token(&token, lines.at(span.start))?;
    }
    Ok(())
}

/// The line (1 for the first) of a byte offset of a text, for offsets that only grow: the line
/// breaks are counted once, from the offset asked last (counting from the start for every token
/// made a long expression's check quadratic).
struct Lines<'t> {
    text: &'t str,
    offset: usize,
    line: usize,
}

impl<'t> Lines<'t> {
    fn new(text: &'t str) -> Self {
        Lines {
            text,
            offset: 0,
            line: 1,
        }
    }

    fn at(&mut self, offset: usize) -> usize {
        if offset < self.offset {
            *self = Lines::new(self.text);
        }
        let between = self.text.get(self.offset..offset).unwrap_or_default();
        self.line += between.matches('\n').count();
        self.offset = offset.max(self.offset);
        self.line
    }
}

/// Checks every tag of template `source` as [`expression`] does, and its blocks against
/// [`MAX_BLOCKS`].
///
/// # Errors
/// A tag or the nesting of blocks is over a bound.
pub fn template(source: &str) -> Result<(), Limit> {
    lines(source)?;
    // A template the scanner cannot read is left to minijinja, which words the error.
    let Ok(segments) = segments(source) else {
        return Ok(());
    };
    let mut blocks = 0usize;
    let mut lines = Lines::new(source);
    for segment in segments {
        let Segment::Tag { block, inner, at } = segment else {
            continue;
        };
        let mut tag = Tag::default();
        for (i, token) in tokens(inner).enumerate() {
            let Ok((token, span)) = token else { break };
            let line = lines.at(at + span.start);
            if i == 0
                && block
                && let Token::Ident(word) = token
            {
                if OPENS.contains(&word) {
                    blocks += 1;
                    if blocks > MAX_BLOCKS {
                        return Err(Limit {
                            what: format!("more than {MAX_BLOCKS} blocks open at once (the limit)"),
                            line,
                        });
                    }
                } else if word.starts_with("end") {
                    blocks = blocks.saturating_sub(1);
                }
            }
            tag.token(&token, line)?;
        }
    }
    Ok(())
}

/// The statements that open a block closed by an `end…` tag.
const OPENS: &[&str] = &[
    "if",
    "for",
    "macro",
    "call",
    "filter",
    "with",
    "block",
    "autoescape",
];

/// Counts of the expression or tag being read.
#[derive(Default)]
struct Tag {
    tokens: usize,
    brackets: usize,
}

impl Tag {
    fn token(&mut self, token: &Token<'_>, line: usize) -> Result<(), Limit> {
        self.tokens += 1;
        if self.tokens > MAX_TOKENS {
            return Err(Limit {
                what: format!("expression longer than {MAX_TOKENS} tokens (the limit)"),
                line,
            });
        }
        match token {
            Token::ParenOpen | Token::BracketOpen | Token::BraceOpen => {
                self.brackets += 1;
                if self.brackets > MAX_BRACKETS {
                    return Err(Limit {
                        what: format!("more than {MAX_BRACKETS} brackets open at once (the limit)"),
                        line,
                    });
                }
            }
            Token::ParenClose | Token::BracketClose | Token::BraceClose => {
                self.brackets = self.brackets.saturating_sub(1);
            }
            _ => {}
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_and_deep_expressions_are_refused_and_ordinary_ones_pass() {
        assert!(expression("profile.usage.gpus * 8 + (1 - 0.5) in [1, 2]").is_ok());
        let plus = vec!["1"; MAX_TOKENS].join("+");
        let e = expression(&plus).unwrap_err();
        assert!(e.to_string().contains("longer than 1000 tokens"), "{e}");
        let nots = format!("{}true", "not ".repeat(MAX_TOKENS));
        assert!(expression(&nots).is_err());
        let parens = format!("{}1{}", "(".repeat(33), ")".repeat(33));
        let e = expression(&parens).unwrap_err();
        assert!(e.to_string().contains("brackets"), "{e}");
        let fine = format!("{}1{}", "(".repeat(32), ")".repeat(32));
        assert!(expression(&fine).is_ok());
    }

    #[test]
    fn lines_too_long_for_the_lexer_are_refused_before_it() {
        // Found by the `folder` fuzz target: minijinja's lexer overflowed its column counter.
        let long = "{{ 'a' 'b' 'a' 'de }}".repeat(10_201);
        let e = template(&long).unwrap_err();
        assert!(e.what.contains("a line longer than 60000 bytes"), "{e}");
        assert!(expression(&"o".repeat(70_000)).is_err());
        assert!(template(&"x\n".repeat(70_000)).is_err());
        assert!(template(&"x\n".repeat(1_000)).is_ok());
    }

    #[test]
    fn template_tags_and_blocks_are_bounded() {
        let ok = "{% if a %}{{ 1 + 2 }}{% endif %}{% for x in y %}{{ x }}{% endfor %}";
        assert!(template(ok).is_ok());
        let long = format!("text\n{{{{ {} }}}}", vec!["'a'"; MAX_TOKENS].join(" ~ "));
        let e = template(&long).unwrap_err();
        assert_eq!(e.line, 2, "{e}");
        let nested = format!("{}x{}", "{% if a %}".repeat(33), "{% endif %}".repeat(33));
        assert!(template(&nested).is_err());
        // Sequential blocks are not nested.
        let sequential = "{% if a %}x{% endif %}".repeat(100);
        assert!(template(&sequential).is_ok());
    }
}
