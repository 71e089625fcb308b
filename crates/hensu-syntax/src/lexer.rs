//! The lexer: source text → a flat vector of [`Token`]s (logos, behind the hand-written path of
//! `ascii` for the common tokens), a side table of comments and the lexical diagnostics
//! (E0001–E0006). Lexing never stops at an error: a bad character becomes an
//! [`TokenKind::Error`] token, a bad string is still a string token.

use hensu_diagnostics::{Diagnostic, Span, codes};
use logos::Logos;

use crate::ast::{Comment, CommentKind};

mod ascii;
mod number;

pub use number::{Number, NumberError, classify_number};

/// Flags the string/comment callbacks leave for the driver loop.
#[derive(Default, Clone, Copy)]
pub struct Extras {
    /// Set by the callbacks: the token was unterminated.
    unterminated: bool,
    /// Set by the block-comment callback: this is a KDoc comment (`/** … */`).
    doc: bool,
}

/// The kind of a token. The text of a token is the source slice of its span.
#[derive(Logos, Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[logos(extras = Extras)]
#[logos(skip r"[ \t\x0C]+")]
#[repr(u8)]
pub enum TokenKind {
    /// A Kotlin identifier.
    #[regex(r"[\p{L}_][\p{L}\p{Nd}_]*")]
    Ident,
    /// `` `name` `` — the span includes the backticks.
    #[regex(r"`[^`\r\n]+`")]
    BacktickIdent,
    /// A number literal, classified after lexing into `Int`, `Long`, `Double` or `BadNumber`:
    /// every Kotlin form (`3`, `60_000`, `0xFF`, `0b101`, `30L`, `1.5`, `.5`, `1e-1`, `2.5E3`,
    /// `1.5f`; docs/language.md, *Numbers*). Digits before the point are optional (`.9`).
    #[regex(r"[0-9][0-9A-Za-z_]*(\.[0-9][0-9A-Za-z_]*)?([eE][+-][0-9A-Za-z_]*)?")]
    #[regex(r"\.[0-9][0-9A-Za-z_]*([eE][+-][0-9A-Za-z_]*)?")]
    Int,
    /// An integer literal with an `L` suffix.
    Long,
    /// A floating-point literal.
    Double,
    /// A malformed or out-of-range number (E0006 already reported).
    BadNumber,
    /// `"…"` (span includes the quotes).
    #[token("\"", lex_string)]
    Str,
    /// `"""…"""` (span includes the quotes).
    #[token("\"\"\"", lex_raw_string)]
    RawStr,
    /// `"…` up to the end of the line (E0002 already reported).
    UnterminatedStr,
    /// `"""…` up to the end of the file (E0002 already reported).
    UnterminatedRawStr,

    #[token("fun")]
    KwFun,
    #[token("package")]
    KwPackage,
    #[token("import")]
    KwImport,
    #[token("return")]
    KwReturn,
    #[token("true")]
    KwTrue,
    #[token("false")]
    KwFalse,
    #[token("null")]
    KwNull,
    #[token("val")]
    KwVal,
    #[token("var")]
    KwVar,
    #[token("if")]
    KwIf,
    #[token("when")]
    KwWhen,
    #[token("for")]
    KwFor,
    #[token("while")]
    KwWhile,
    #[token("do")]
    KwDo,
    #[token("else")]
    KwElse,
    #[token("in")]
    KwIn,
    #[token("class")]
    KwClass,
    #[token("object")]
    KwObject,

    #[token("{")]
    LBrace,
    #[token("}")]
    RBrace,
    #[token("(")]
    LParen,
    #[token(")")]
    RParen,
    #[token("[")]
    LBracket,
    #[token("]")]
    RBracket,
    #[token(",")]
    Comma,
    #[token(";")]
    Semi,
    #[token(":")]
    Colon,
    #[token("=")]
    Eq,
    #[token(".")]
    Dot,
    #[token("..")]
    DotDot,
    #[token("+")]
    Plus,
    #[token("-")]
    Minus,
    #[token("*")]
    Star,
    #[token("->")]
    Arrow,
    /// `@Name`: a Kotlin annotation before a statement (`@Suppress("W0307")`, docs/language.md,
    /// *Suppressing a warning*); the span includes the `@`. A lone `@` is an [`TokenKind::Op`].
    #[regex(r"@[\p{L}_][\p{L}\p{Nd}_]*")]
    Annotation,
    /// Any other Kotlin operator (`/ % < > ! ? & | @ == != <= >= && || ?: ?. :: += ++ !!` …):
    /// valid Kotlin, never valid in a workflow.
    #[regex(
        r"[/%<>!?&|@]|==|!=|<=|>=|&&|\|\||\?:|\?\.|::|\+=|-=|\*=|/=|%=|\+\+|--|!!|===|!==|\.\.<"
    )]
    Op,
    /// A line break (`\n`, `\r\n` or a lone `\r`).
    #[regex(r"\r\n|\n|\r")]
    Newline,
    /// `// …` (moved to the comment table, never in the token vector)
    #[regex(r"//[^\r\n]*", allow_greedy = true)]
    LineComment,
    /// `/* … */` or `/** … */` (moved to the comment table)
    #[token("/*", lex_block_comment)]
    BlockComment,
    /// `\u{FEFF}` (skipped at offset 0, an unexpected character elsewhere)
    #[token("\u{FEFF}")]
    Bom,
    /// Unexpected characters (E0001 already reported), or a region the parser must not
    /// descend into (E0016 already reported). The parser turns it into an error node silently.
    Error,
}

impl TokenKind {
    /// A short human name for messages: `` `{` ``, `identifier`, `newline` …
    pub fn describe(self) -> &'static str {
        use TokenKind::*;
        match self {
            Ident | BacktickIdent => "identifier",
            Int | Long | Double | BadNumber => "number",
            Str | RawStr | UnterminatedStr | UnterminatedRawStr => "string",
            KwFun => "`fun`",
            KwPackage => "`package`",
            KwImport => "`import`",
            KwReturn => "`return`",
            KwTrue => "`true`",
            KwFalse => "`false`",
            KwNull => "`null`",
            KwVal => "`val`",
            KwVar => "`var`",
            KwIf => "`if`",
            KwWhen => "`when`",
            KwFor => "`for`",
            KwWhile => "`while`",
            KwDo => "`do`",
            KwElse => "`else`",
            KwIn => "`in`",
            KwClass => "`class`",
            KwObject => "`object`",
            LBrace => "`{`",
            RBrace => "`}`",
            LParen => "`(`",
            RParen => "`)`",
            LBracket => "`[`",
            RBracket => "`]`",
            Comma => "`,`",
            Semi => "`;`",
            Colon => "`:`",
            Eq => "`=`",
            Dot => "`.`",
            DotDot => "`..`",
            Plus => "`+`",
            Minus => "`-`",
            Star => "`*`",
            Arrow => "`->`",
            Annotation => "annotation",
            Op => "operator",
            Newline => "newline",
            LineComment | BlockComment => "comment",
            Bom => "byte order mark",
            Error => "invalid token",
        }
    }

    pub fn is_string(self) -> bool {
        matches!(
            self,
            TokenKind::Str
                | TokenKind::RawStr
                | TokenKind::UnterminatedStr
                | TokenKind::UnterminatedRawStr
        )
    }
}

/// One token: its kind and byte span.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Token {
    pub kind: TokenKind,
    pub span: Span,
}

/// The result of [`crate::lex`].
#[derive(Clone, Debug, Default)]
pub struct Lexed {
    /// Every token in order, newlines included, comments and whitespace excluded.
    pub tokens: Vec<Token>,
    /// Every comment in source order.
    pub comments: Vec<Comment>,
    /// Lexical diagnostics (E0001–E0006).
    pub diagnostics: Vec<Diagnostic>,
}

fn lex_string(lex: &mut logos::Lexer<TokenKind>) {
    let (len, unterminated) = string_len(lex.remainder().as_bytes());
    lex.bump(len);
    lex.extras.unterminated = unterminated;
}

/// The rest of a `"…"` string after its opening quote: its length (the closing quote included)
/// and whether it is unterminated (then it runs to the end of the line).
fn string_len(rest: &[u8]) -> (usize, bool) {
    let mut i = 0;
    while let Some(&b) = rest.get(i) {
        match b {
            b'"' => return (i + 1, false),
            b'\\' => {
                // An escape: skip the next byte unless it ends the line (then it is unterminated).
                match rest.get(i + 1) {
                    Some(b'\n') | Some(b'\r') | None => i += 1,
                    Some(_) => i += 2,
                }
            }
            b'\n' | b'\r' => break,
            _ => i += 1,
        }
    }
    (i.min(rest.len()), true)
}

fn lex_raw_string(lex: &mut logos::Lexer<TokenKind>) {
    let (len, unterminated) = raw_string_len(lex.remainder().as_bytes());
    lex.bump(len);
    lex.extras.unterminated = unterminated;
}

/// [`string_len`] for a raw string (after its opening `"""`); unterminated, it runs to the end
/// of the file.
fn raw_string_len(bytes: &[u8]) -> (usize, bool) {
    match find_triple_quote(bytes) {
        Some(pos) => {
            // Kotlin: extra quotes before the closing `"""` belong to the content.
            let mut end = pos + 3;
            while bytes.get(end) == Some(&b'"') {
                end += 1;
            }
            (end, false)
        }
        None => (bytes.len(), true),
    }
}

/// The first `"""` in `bytes` (memchr for each `"`: prompts contain few quotes).
fn find_triple_quote(bytes: &[u8]) -> Option<usize> {
    let mut from = 0;
    while let Some(i) = bytes
        .get(from..)
        .and_then(|rest| memchr::memchr(b'"', rest))
    {
        let at = from + i;
        if bytes.get(at + 1) == Some(&b'"') && bytes.get(at + 2) == Some(&b'"') {
            return Some(at);
        }
        from = at + 1;
    }
    None
}

fn lex_block_comment(lex: &mut logos::Lexer<TokenKind>) {
    let rest = lex.remainder().as_bytes();
    // `/**` starts a KDoc unless it is the empty comment `/**/`.
    lex.extras.doc = rest.first() == Some(&b'*') && rest.get(1) != Some(&b'/');
    let mut depth = 1usize;
    let mut i = 0;
    while i < rest.len() {
        match (rest[i], rest.get(i + 1)) {
            (b'*', Some(b'/')) => {
                depth -= 1;
                i += 2;
                if depth == 0 {
                    lex.bump(i);
                    lex.extras.unterminated = false;
                    return;
                }
            }
            (b'/', Some(b'*')) => {
                depth += 1;
                i += 2;
            }
            _ => i += 1,
        }
    }
    lex.bump(rest.len());
    lex.extras.unterminated = true;
}

fn span(r: std::ops::Range<usize>) -> Span {
    Span::from_range(r)
}

/// Estimate of the number of tokens for `len` bytes of source. Small files are mostly code (4–6
/// bytes per token); in large ones prompts dominate (the 10 MB benchmark workflow has 12.5 bytes
/// per token). An estimate too high stays allocated for the whole parse (the token vector was
/// 2.5× too large at 10 MB, 1.4 bytes per input byte of the peak heap); one too low costs one
/// doubling.
fn estimate_tokens(len: usize) -> usize {
    if len <= 64 * 1024 {
        len / 4 + 16
    } else {
        len / 11
    }
}

/// Lex a whole source file. The caller guarantees `src.len() <= u32::MAX`.
pub(crate) fn lex_source(src: &str) -> Lexed {
    lex_with(src, true)
}

/// [`lex_source`] with every token from logos (for the differential test of the hand-written
/// path, `ascii`).
pub(crate) fn lex_source_logos(src: &str) -> Lexed {
    lex_with(src, false)
}

fn lex_with(src: &str, fast_path: bool) -> Lexed {
    let mut out = Lexed {
        tokens: Vec::with_capacity(estimate_tokens(src.len())),
        comments: Vec::new(),
        diagnostics: Vec::new(),
    };
    let mut lexer = TokenKind::lexer(src);
    // A pending run of unexpected characters, merged into one E0001.
    let mut bad: Option<std::ops::Range<usize>> = None;

    let flush_bad = |bad: &mut Option<std::ops::Range<usize>>,
                     tokens: &mut Vec<Token>,
                     diags: &mut Vec<Diagnostic>| {
        if let Some(r) = bad.take() {
            let text = src.get(r.clone()).unwrap_or("");
            diags.push(unexpected_char(text, span(r.clone())));
            tokens.push(Token {
                kind: TokenKind::Error,
                span: span(r),
            });
        }
    };

    let bytes = src.as_bytes();
    // Where the next token starts (or the spaces before it).
    let mut pos = 0;
    loop {
        // The common tokens by hand (`ascii`), the rest through logos: the logos lexer stays
        // behind and is moved to the token it lexes (`bump` moves the end it starts from).
        let fast = if fast_path {
            ascii::token(bytes, pos)
        } else {
            ascii::Fast::Slow { start: pos }
        };
        let result = match fast {
            ascii::Fast::Token {
                kind,
                start,
                end,
                unterminated,
            } => {
                pos = end;
                let extras = Extras {
                    unterminated,
                    doc: false,
                };
                Some((Ok(kind), start..end, extras))
            }
            ascii::Fast::End => None,
            ascii::Fast::Slow { start } => {
                lexer.bump(start.saturating_sub(lexer.span().end));
                lexer.next().map(|result| {
                    let r = lexer.span();
                    pos = r.end;
                    (result, r, lexer.extras)
                })
            }
        };
        let Some((result, r, extras)) = result else {
            break;
        };
        let kind = match result {
            Ok(kind) => kind,
            Err(()) => {
                let r = snap_to_chars(src, r);
                match &mut bad {
                    Some(b) if b.end == r.start => b.end = r.end,
                    _ => {
                        flush_bad(&mut bad, &mut out.tokens, &mut out.diagnostics);
                        bad = Some(r);
                    }
                }
                continue;
            }
        };
        if bad.is_some() {
            flush_bad(&mut bad, &mut out.tokens, &mut out.diagnostics);
        }
        push_token(src, kind, r, extras, &mut out);
    }
    flush_bad(&mut bad, &mut out.tokens, &mut out.diagnostics);
    out
}

/// Records one token of `kind` at `r` (a comment goes to the comment table; strings, numbers,
/// an unterminated comment and a stray byte-order mark get their diagnostics).
#[inline]
fn push_token(
    src: &str,
    kind: TokenKind,
    r: std::ops::Range<usize>,
    extras: Extras,
    out: &mut Lexed,
) {
    let sp = span(r.clone());
    match kind {
        TokenKind::LineComment => out.comments.push(Comment {
            kind: CommentKind::Line,
            span: sp,
        }),
        TokenKind::BlockComment => {
            let kind = if extras.doc {
                CommentKind::Doc
            } else {
                CommentKind::Block
            };
            out.comments.push(Comment { kind, span: sp });
            if extras.unterminated {
                out.diagnostics.push(
                    Diagnostic::new(
                        codes::E0004,
                        "unterminated block comment",
                        Span::new(sp.start, sp.start.saturating_add(2)),
                        "this comment is never closed",
                    )
                    .with_help(
                        "close it with `*/` (block comments nest: every `/*` needs its own `*/`)",
                    ),
                );
            }
        }
        TokenKind::Bom if r.start == 0 => {}
        TokenKind::Bom => {
            out.diagnostics.push(
                Diagnostic::new(
                    codes::E0001,
                    "unexpected character U+FEFF",
                    sp,
                    "byte order mark in the middle of the file",
                )
                .with_help("remove it"),
            );
            out.tokens.push(Token {
                kind: TokenKind::Error,
                span: sp,
            });
        }
        TokenKind::Str => {
            let unterminated = extras.unterminated;
            let (kind, content) = if unterminated {
                out.diagnostics.push(
                    Diagnostic::new(codes::E0002, "unterminated string", Span::new(sp.start, sp.start + 1), "this string is never closed")
                        .with_help("add the closing `\"` on the same line, or use a raw string `\"\"\"…\"\"\"` for text spanning lines"),
                );
                (TokenKind::UnterminatedStr, r.start + 1..r.end)
            } else {
                (TokenKind::Str, r.start + 1..r.end - 1)
            };
            check_string(src, content, false, &mut out.diagnostics);
            out.tokens.push(Token { kind, span: sp });
        }
        TokenKind::RawStr => {
            let unterminated = extras.unterminated;
            let (kind, content) = if unterminated {
                out.diagnostics.push(
                    Diagnostic::new(
                        codes::E0002,
                        "unterminated raw string",
                        Span::new(sp.start, sp.start + 3),
                        "this raw string is never closed",
                    )
                    .with_help("add the closing `\"\"\"`"),
                );
                (TokenKind::UnterminatedRawStr, r.start + 3..r.end)
            } else {
                (TokenKind::RawStr, r.start + 3..r.end - 3)
            };
            check_string(src, content, true, &mut out.diagnostics);
            out.tokens.push(Token { kind, span: sp });
        }
        TokenKind::Int => {
            let text = src.get(r.clone()).unwrap_or("");
            let kind = match classify_number(text) {
                Ok(n) => n.kind(),
                Err(msg) => {
                    out.diagnostics.push(
                        Diagnostic::new(codes::E0006, msg.message(), sp, msg.label())
                            .with_help(msg.help()),
                    );
                    TokenKind::BadNumber
                }
            };
            out.tokens.push(Token { kind, span: sp });
        }
        kind => out.tokens.push(Token { kind, span: sp }),
    }
}

/// Widen a byte range so that both ends are on char boundaries.
fn snap_to_chars(src: &str, mut r: std::ops::Range<usize>) -> std::ops::Range<usize> {
    while r.start > 0 && !src.is_char_boundary(r.start) {
        r.start -= 1;
    }
    while r.end < src.len() && !src.is_char_boundary(r.end) {
        r.end += 1;
    }
    r
}

fn unexpected_char(text: &str, sp: Span) -> Diagnostic {
    let first = text.chars().next().unwrap_or('?');
    let shown = if first.is_control() || first.is_whitespace() && first != ' ' {
        format!("U+{:04X}", first as u32)
    } else {
        format!("`{first}`")
    };
    let count = text.chars().count();
    let message = if count > 1 {
        format!("unexpected characters starting with {shown}")
    } else {
        format!("unexpected character {shown}")
    };
    let mut d = Diagnostic::new(codes::E0001, message, sp, "not valid here");
    match first {
        '\u{201C}' | '\u{201D}' | '\u{201E}' => {
            d = d.with_help("use straight double quotes `\"` for strings")
        }
        '\u{2018}' | '\u{2019}' => d = d.with_help("use straight double quotes `\"` for strings"),
        '$' => d = d.with_help("`$` is only valid inside strings"),
        '#' => d = d.with_help("comments start with `//`"),
        '\'' => d = d.with_help("strings use double quotes `\"`"),
        _ => {}
    }
    d
}

/// Check escapes (regular strings) and Kotlin templates (all strings) inside `content`.
fn check_string(
    src: &str,
    content: std::ops::Range<usize>,
    raw: bool,
    diags: &mut Vec<Diagnostic>,
) {
    let Some(text) = src.get(content.clone()) else {
        return;
    };
    let bytes = text.as_bytes();
    // Fast path: nothing to look at.
    // Short strings (ids, names) in a plain loop: the memchr call costs more there.
    let interesting = if bytes.len() < 32 {
        bytes.iter().any(|&b| b == b'$' || (!raw && b == b'\\'))
    } else if raw {
        memchr::memchr(b'$', bytes).is_some()
    } else {
        memchr::memchr2(b'$', b'\\', bytes).is_some()
    };
    if !interesting {
        return;
    }
    let base = content.start;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' if !raw => {
                let esc_start = i;
                match bytes.get(i + 1) {
                    Some(b't' | b'b' | b'n' | b'r' | b'\'' | b'"' | b'\\' | b'$') => i += 2,
                    Some(b'u') => {
                        let hex = text.get(i + 2..i + 6).unwrap_or("");
                        if hex.len() == 4 && hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                            i += 6;
                        } else {
                            let end = text[i + 2..]
                                .char_indices()
                                .take(4)
                                .take_while(|(_, c)| c.is_ascii_hexdigit())
                                .last()
                                .map_or(i + 2, |(j, c)| i + 2 + j + c.len_utf8());
                            diags.push(
                                Diagnostic::new(
                                    codes::E0003,
                                    "invalid unicode escape",
                                    span(base + esc_start..base + end),
                                    "expected 4 hex digits after `\\u`",
                                )
                                .with_help("write `\\u` followed by exactly four hex digits, e.g. `\\u00e9`"),
                            );
                            i = end.max(i + 2);
                        }
                    }
                    Some(_) => {
                        let c = text[i + 1..].chars().next().unwrap_or(' ');
                        let end = i + 1 + c.len_utf8();
                        diags.push(
                            Diagnostic::new(
                                codes::E0003,
                                format!("invalid escape sequence `\\{c}`"),
                                span(base + esc_start..base + end),
                                "unknown escape",
                            )
                            .with_help("valid escapes are \\t \\b \\n \\r \\' \\\" \\\\ \\$ and \\uXXXX; write `\\\\` for a backslash"),
                        );
                        i = end;
                    }
                    None => i += 1,
                }
            }
            b'$' => {
                let next = text[i + 1..].chars().next();
                let end = match next {
                    Some('{') => Some(i + 2),
                    Some(c) if c.is_alphabetic() || c == '_' || c == '`' => {
                        let len: usize = text[i + 1..]
                            .chars()
                            .take_while(|c| c.is_alphanumeric() || *c == '_')
                            .map(char::len_utf8)
                            .sum();
                        Some(i + 1 + len.max(1))
                    }
                    _ => None,
                };
                match end {
                    Some(end) => {
                        diags.push(
                            Diagnostic::new(
                                codes::E0005,
                                "kotlin string templates are not supported",
                                span(base + i..base + end),
                                "string template",
                            )
                            .with_help("prompts use {name} placeholders")
                            .with_note(if raw {
                                "a literal `$` followed by a name cannot be written in a raw string; use a regular string with `\\$`"
                            } else {
                                "write `\\$` for a literal dollar sign"
                            }),
                        );
                        i = end;
                    }
                    None => i += 1,
                }
            }
            _ => i += 1,
        }
    }
}
