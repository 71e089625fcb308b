//! The pass between the lexer and the parser: it turns the raw token vector into the stream the
//! parser reads.
//!
//! * Insignificant newlines are dropped: inside `( )`/`[ ]`, after a binary operator or a
//!   separator (`+ - .. = , -> .` and the infix word `to`), before a `.` (method-call continuation,
//!   `"""…"""\n.trimIndent()`), before a `{` that follows `)` or a name (Kotlin's trailing lambda
//!   may start on the next line), before a `}`, and repeated newlines are collapsed.
//! * Delimiters are balanced: a closer that matches an opener further down the stack closes the
//!   openers above it (E0011 on each), an unmatched closer is dropped (E0010), and every opener
//!   still open at the end of the file is reported (E0011) and closed by a zero-width synthetic
//!   closer. The parser therefore always sees a balanced stream, which keeps its recovery simple.
//! * Nesting deeper than [`MAX_DEPTH`] is refused (E0016): the too-deep group is replaced by one
//!   [`TokenKind::Error`] token, so the recursive parser never descends further than that.

use hensu_diagnostics::{Diagnostic, Span, codes};

use crate::lexer::{Token, TokenKind};

/// The deepest nesting of `{ }`, `( )` and `[ ]` the parser accepts.
pub const MAX_DEPTH: usize = 128;

pub(crate) type CSpan = chumsky::span::SimpleSpan<u32>;

fn cs(span: Span) -> CSpan {
    CSpan::from(span.start..span.end)
}

fn closer_of(open: TokenKind) -> TokenKind {
    match open {
        TokenKind::LParen => TokenKind::RParen,
        TokenKind::LBracket => TokenKind::RBracket,
        _ => TokenKind::RBrace,
    }
}

fn text_of(kind: TokenKind) -> &'static str {
    match kind {
        TokenKind::LParen => "(",
        TokenKind::RParen => ")",
        TokenKind::LBracket => "[",
        TokenKind::RBracket => "]",
        TokenKind::LBrace => "{",
        _ => "}",
    }
}

/// A line break right after `prev` (the token before it) continues the statement: after a
/// binary operator or a separator (`+ - .. = , -> .`, the infix word `to`), after `{`, `;` or
/// another line break.
#[inline]
pub(crate) fn newline_continues_after(src: &str, prev: TokenKind, prev_span: Span) -> bool {
    match prev {
        TokenKind::Newline
        | TokenKind::Semi
        | TokenKind::LBrace
        | TokenKind::Plus
        | TokenKind::Minus
        | TokenKind::DotDot
        | TokenKind::Eq
        | TokenKind::Comma
        | TokenKind::Arrow
        | TokenKind::Dot => true,
        TokenKind::Ident => src.get(prev_span.range()) == Some("to"),
        _ => false,
    }
}

/// A line break between `prev` and `next` continues the statement because of `next`: a
/// method-call continuation (`.`, `?.`), a `}`, or a `{` after `)` or a name (Kotlin's trailing
/// lambda may start on the next line).
#[inline]
pub(crate) fn newline_continues_before(
    src: &str,
    next: TokenKind,
    next_span: Span,
    prev: TokenKind,
) -> bool {
    match next {
        TokenKind::Dot | TokenKind::RBrace => true,
        TokenKind::Op => src.get(next_span.range()) == Some("?."),
        TokenKind::LBrace => matches!(
            prev,
            TokenKind::RParen | TokenKind::Ident | TokenKind::BacktickIdent
        ),
        _ => false,
    }
}

/// Build the parser's token stream. `src` is used only to recognise the infix word `to`.
pub(crate) fn layout(
    src: &str,
    tokens: &[Token],
    diags: &mut Vec<Diagnostic>,
) -> Vec<(TokenKind, CSpan)> {
    let mut out: Vec<(TokenKind, CSpan)> = Vec::with_capacity(tokens.len());
    // (opener kind, opener span)
    // (opener kind, opener span, indentation of the opener's line)
    let mut stack: Vec<(TokenKind, Span, u32)> = Vec::new();
    // Line tracking for the indentation heuristic: start of the current line, the column of its
    // first token, and whether the current token is the first on its line.
    let mut line_start = 0u32;
    let mut line_indent = 0u32;
    let mut at_line_start = true;
    let mut pending_newline: Option<Span> = None;
    // The first closer whose indentation differs from its opener's line: when delimiters are
    // left unclosed, this pair is the likely culprit.
    let mut suspect: Option<(Span, Span)> = None;
    let mut i = 0;
    while let Some(&tok) = tokens.get(i) {
        i += 1;
        let kind = tok.kind;
        if kind == TokenKind::Newline {
            line_start = tok.span.end;
            at_line_start = true;
            let in_parens = matches!(
                stack.last(),
                Some((TokenKind::LParen | TokenKind::LBracket, _, _))
            );
            let continues = match out.last() {
                None => true,
                Some(&(last, sp)) => {
                    newline_continues_after(src, last, Span::new(sp.start, sp.end))
                }
            };
            if !in_parens && !continues && pending_newline.is_none() {
                pending_newline = Some(tok.span);
            }
            continue;
        }
        let first_on_line = at_line_start;
        if at_line_start {
            line_indent = tok.span.start.saturating_sub(line_start);
            at_line_start = false;
        }
        if let Some(nl) = pending_newline.take() {
            // `out` is not empty: a line break is pending only after a token.
            let drop = out
                .last()
                .is_some_and(|&(prev, _)| newline_continues_before(src, kind, tok.span, prev));
            if !drop {
                out.push((TokenKind::Newline, cs(nl)));
            }
        }
        match kind {
            TokenKind::LBrace | TokenKind::LParen | TokenKind::LBracket => {
                if stack.len() >= MAX_DEPTH {
                    // Skip the whole group (balanced by kind-agnostic depth).
                    let mut depth = 1usize;
                    let mut end = tok.span.end;
                    while let Some(t) = tokens.get(i) {
                        i += 1;
                        end = t.span.end;
                        match t.kind {
                            TokenKind::LBrace | TokenKind::LParen | TokenKind::LBracket => {
                                depth += 1
                            }
                            TokenKind::RBrace | TokenKind::RParen | TokenKind::RBracket => {
                                depth -= 1;
                                if depth == 0 {
                                    break;
                                }
                            }
                            _ => {}
                        }
                    }
                    diags.push(
                        Diagnostic::new(
                            codes::E0016,
                            "nesting too deep",
                            tok.span,
                            format!("more than {MAX_DEPTH} nested blocks, calls or parentheses"),
                        )
                        .with_help(
                            "flatten the structure; a workflow never needs this much nesting",
                        ),
                    );
                    out.push((TokenKind::Error, cs(Span::new(tok.span.start, end))));
                    continue;
                }
                stack.push((kind, tok.span, line_indent));
                out.push((kind, cs(tok.span)));
            }
            TokenKind::RBrace | TokenKind::RParen | TokenKind::RBracket => {
                let matching = stack
                    .iter()
                    .rposition(|(open, _, _)| closer_of(*open) == kind);
                match matching {
                    Some(pos) => {
                        if suspect.is_none()
                            && first_on_line
                            && pos + 1 == stack.len()
                            && let Some(&(_, open_span, open_indent)) = stack.last()
                            && open_indent != tok.span.start.saturating_sub(line_start)
                        {
                            suspect = Some((open_span, tok.span));
                        }
                        while stack.len() > pos + 1 {
                            if let Some((open, open_span, _)) = stack.pop() {
                                report_unclosed(diags, open, open_span, tok.span.start, Some(kind));
                                out.push((
                                    closer_of(open),
                                    cs(Span::new(tok.span.start, tok.span.start)),
                                ));
                            }
                        }
                        stack.pop();
                        out.push((kind, cs(tok.span)));
                    }
                    None => {
                        diags.push(
                            Diagnostic::new(
                                codes::E0010,
                                format!("unexpected closing delimiter `{}`", text_of(kind)),
                                tok.span,
                                "no matching opening delimiter",
                            )
                            .with_help("remove it, or add the missing opening delimiter"),
                        );
                    }
                }
            }
            _ => out.push((kind, cs(tok.span))),
        }
    }
    let eof = u32::try_from(src.len()).unwrap_or(u32::MAX);
    let mut first = true;
    while let Some((open, open_span, _)) = stack.pop() {
        report_unclosed(diags, open, open_span, eof, None);
        if first && let (Some((s_open, s_close)), Some(d)) = (suspect, diags.last_mut()) {
            *d = d
                .clone()
                .with_label(s_open, "perhaps this delimiter is the one left open")
                .with_label(s_close, "it is closed here, at a different indentation");
        }
        first = false;
        out.push((closer_of(open), cs(Span::new(eof, eof))));
    }
    out
}
fn report_unclosed(
    diags: &mut Vec<Diagnostic>,
    open: TokenKind,
    open_span: Span,
    at: u32,
    found: Option<TokenKind>,
) {
    let close = text_of(closer_of(open));
    let here = match found {
        Some(k) => format!("expected `{close}` before this `{}`", text_of(k)),
        None => format!("expected `{close}` before the end of the file"),
    };
    diags.push(
        Diagnostic::new(
            codes::E0011,
            format!("unclosed delimiter `{}`", text_of(open)),
            open_span,
            "this delimiter is never closed",
        )
        .with_label(Span::new(at, at), here)
        .with_help(format!("add the missing `{close}`")),
    );
}
