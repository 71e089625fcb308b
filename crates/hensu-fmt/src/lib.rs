//! The canonical formatter of hensu workflow files (`.hwf`, and JVM Hensu `.kt` files).
//!
//! [`format()`] parses the file with `hensu-syntax` and re-emits every token from its source text,
//! guided by the syntax tree. A file with syntax errors is refused ([`FormatError::Syntax`]) and
//! must be left untouched by the caller.
//!
//! # Style
//! * 4-space indentation, one statement per line. A block stays on one line (`{ a; b }`) only
//!   when the source had it on one line, it holds at most three statements without nested
//!   blocks, and the line fits in [`MAX_WIDTH`] columns; otherwise it is broken.
//! * Nothing is aligned: one space around `=`, `+`, infix words and `{`, one space after `,`
//!   and `:`, none around `.`, `..` and inside `( )`; no space before call parentheses.
//! * Line breaks inside a statement are kept where the source had them (after `+`, inside
//!   argument lists, after `=`), each continuation line indented one level further than its
//!   statement (or than the line that opened the enclosing parenthesis); a closing `)` on its own
//!   line goes back to the opening line's indentation. Breaks before `.` (`""".trimIndent()`)
//!   and before a trailing-lambda `{` are joined.
//! * Bare enum constants are qualified where the expected enum is known from the call:
//!   `input`/`variable` 2nd argument → `VarType`, `end` 2nd argument → `ExitStatus`,
//!   `review(X)` → `ReviewMode`, and the assignments `mode` in `review { }` → `ReviewMode`,
//!   `strategy` in `consensus { }` → `ConsensusStrategy`, `mergeStrategy` in `join { }` →
//!   `MergeStrategy`, `logLevel` in `observability { }` → `LogLevel`, `onItemFailure` in
//!   `map { }` → `ItemFailure`.
//! * Comments (line, block, KDoc; own-line or trailing) are all kept, in order. A trailing
//!   comment is separated from the code by one space; line comments lose trailing whitespace;
//!   the continuation lines of a multi-line block comment move with the comment's new column.
//! * Blank lines between statements and comments are kept, runs collapsed to one; never right
//!   after `{`, before `}` or inside a statement.
//! * String literals, raw strings and numbers are reproduced byte for byte from the source.
//! * Line endings: the file's own are kept. A file whose first line break (outside string
//!   literals and comments) is `\r\n` is written with `\r\n`, any other with `\n`; the output ends with one line break (an empty file stays
//!   empty); a leading byte order mark is dropped. The content of a raw string is kept byte for
//!   byte (its line breaks are part of its value) unless the raw string is directly followed by
//!   `.trimIndent()` / `.trimMargin()`, whose value is the same with either line ending.
//!
//! # Guarantees
//! Formatting is idempotent, never panics, and never changes what the file means: before
//! returning, [`format()`] re-parses its output and checks that the syntax tree (modulo spans and
//! the enum qualification) and the comments are unchanged; if not, it returns
//! [`FormatError::Internal`] instead of a wrong result.

mod collect;
mod printer;
mod verify;

use std::fmt;

pub use hensu_diagnostics::Diagnostic;

/// The enums whose bare constants the formatter qualifies, with their constants.
pub use collect::ENUMS as QUALIFIED_ENUMS;

/// The widest line a one-line block may produce.
pub const MAX_WIDTH: usize = 100;

/// Why a file was not formatted.
#[derive(Clone, Debug)]
pub enum FormatError {
    /// The file has lexical or syntax errors (all of them, sorted by position). Leave it untouched.
    Syntax(Vec<Diagnostic>),
    /// A formatter bug: the output would not parse or would mean something else. The message says
    /// what differed. Leave the file untouched.
    Internal(String),
}

impl fmt::Display for FormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FormatError::Syntax(d) => {
                let n = d.iter().filter(|d| d.is_error()).count();
                write!(f, "{n} syntax error{}", if n == 1 { "" } else { "s" })
            }
            FormatError::Internal(msg) => write!(f, "internal formatter error: {msg}"),
        }
    }
}

impl std::error::Error for FormatError {}

/// Format a workflow file in the canonical style (see the crate documentation).
pub fn format(src: &str) -> Result<String, FormatError> {
    let parsed = hensu_syntax::parse(src);
    if parsed.has_errors() {
        return Err(FormatError::Syntax(parsed.diagnostics));
    }
    let lexed = hensu_syntax::lex(src);
    let info = collect::collect(&parsed.file);
    let out = printer::print(src, &parsed.file, &lexed.tokens, &info)?;
    verify::verify(src, &parsed.file, &info, &out)?;
    if uses_crlf(src, &lexed.tokens) {
        return Ok(with_crlf(&out));
    }
    Ok(out)
}

/// Whether the file's first line break outside string literals and comments is `\r\n`.
/// (One inside a raw string is part of its value, which the output keeps as it is: counting it
/// would make a second formatting pick the other line ending.)
fn uses_crlf(src: &str, tokens: &[hensu_syntax::Token]) -> bool {
    tokens
        .iter()
        .find(|t| t.kind == hensu_syntax::TokenKind::Newline)
        .is_some_and(|t| src.get(t.span.range()) == Some("\r\n"))
}

/// The (LF) formatter output with `\r\n` line breaks, except inside raw strings whose value
/// would change (those not followed by `.trimIndent()` / `.trimMargin()`).
fn with_crlf(out: &str) -> String {
    use hensu_syntax::TokenKind;
    let lexed = hensu_syntax::lex(out);
    let tokens = &lexed.tokens;
    let text = |i: usize| {
        tokens
            .get(i)
            .and_then(|t| out.get(t.span.range()))
            .unwrap_or("")
    };
    // A trim may follow on the next line (`""" // comment` then `.trimIndent()`).
    let trimmed = |i: usize| {
        let mut j = i + 1;
        while tokens.get(j).is_some_and(|t| t.kind == TokenKind::Newline) {
            j += 1;
        }
        tokens.get(j).is_some_and(|d| d.kind == TokenKind::Dot)
            && matches!(text(j + 1), "trimIndent" | "trimMargin")
    };
    let verbatim: Vec<std::ops::Range<usize>> = tokens
        .iter()
        .enumerate()
        .filter(|(i, t)| {
            matches!(t.kind, TokenKind::RawStr | TokenKind::UnterminatedRawStr) && !trimmed(*i)
        })
        .map(|(_, t)| t.span.range())
        .collect();
    let mut result = String::with_capacity(out.len() + out.len() / 16);
    let mut inside = verbatim.iter().peekable();
    let mut last = 0;
    for (i, _) in out.match_indices('\n') {
        while inside.peek().is_some_and(|r| r.end <= i) {
            inside.next();
        }
        if inside.peek().is_some_and(|r| r.start <= i) || out[..i].ends_with('\r') {
            continue;
        }
        result.push_str(&out[last..i]);
        result.push_str("\r\n");
        last = i + 1;
    }
    result.push_str(&out[last..]);
    result
}

/// True when `src` is already formatted (`format(src) == src`).
pub fn is_formatted(src: &str) -> Result<bool, FormatError> {
    Ok(format(src)? == src)
}
