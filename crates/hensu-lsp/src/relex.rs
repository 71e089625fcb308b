//! Incremental lexing: the tokens of an edited text from the tokens of the text before the edit,
//! re-lexing only a window around the edit (ARCHITECTURE.md, *hensu-lsp*). Completion and
//! semantic tokens need the tokens of the current text after every keystroke; lexing a 13 MB
//! document again took longer than the whole answer may.
//!
//! The lexer starts every token afresh (no state carries from one token to the next except the
//! byte-order mark at offset 0), so from a position where both the old and the new text start a
//! token and the bytes after it are the same, both lexings agree. The window starts two tokens
//! before the first token touching the edit (a token's match may look a little past its end)
//! and ends at an old token after the edit, whose moved start must be a token start of the new
//! text: the window is lexed alone and accepted only if its last token ends before the window's
//! end with only spaces between (nothing can run on into the next token). Otherwise, or when
//! the window would start at 0, the whole text is lexed again. Tested against a full lexing of
//! random edit sequences (`tests/lsp/incremental.rs`).

use hensu_diagnostics::{Diagnostic, Span};
use hensu_syntax::Lexed;

use crate::shift::ByteEdit;

/// The tokens, comments and lexical diagnostics of `new_text`, which is the text `old` was lexed
/// from with `edit` applied.
pub(crate) fn relex(old: &Lexed, new_text: &str, edit: ByteEdit) -> Lexed {
    window(old, new_text, edit).unwrap_or_else(|| hensu_syntax::lex(new_text))
}

fn window(old: &Lexed, new_text: &str, edit: ByteEdit) -> Option<Lexed> {
    let removed = edit.old_end.checked_sub(edit.start)?;
    let delta = i64::from(edit.new_len) - i64::from(removed);
    let toks = &old.tokens;
    // The first token (or comment) ending at or after the edit's start, two tokens further back.
    let i0 = toks.partition_point(|t| t.span.end < edit.start);
    let c0 = old.comments.partition_point(|c| c.span.end < edit.start);
    let mut ws = toks
        .get(i0.saturating_sub(2))
        .map_or(edit.start, |t| t.span.start)
        .min(edit.start);
    if let Some(c) = old.comments.get(c0) {
        ws = ws.min(c.span.start);
    }
    if i0 < 2 || ws == 0 {
        return None;
    }
    // The sync token: an old token starting after the edit's end, the first of the next few
    // whose moved start the window's lexing reaches cleanly.
    let j0 = toks.partition_point(|t| t.span.start <= edit.old_end);
    let (old_we, lexed) = (j0 + 1..j0 + 8).find_map(|j| {
        let old_we = toks.get(j)?.span.start;
        let we = u32::try_from(i64::from(old_we) + delta).ok()?;
        let piece = new_text.get(ws as usize..we as usize)?;
        if piece.starts_with('\u{feff}') {
            return None;
        }
        let lexed = hensu_syntax::lex(piece);
        // The window must end cleanly: its last token or comment ends before `we` with only
        // spaces and tabs after it.
        let last_end = lexed
            .tokens
            .last()
            .map_or(0, |t| t.span.end)
            .max(lexed.comments.last().map_or(0, |c| c.span.end));
        let tail = piece.as_bytes().get(last_end as usize..)?;
        (!tail.is_empty() && tail.iter().all(|b| matches!(b, b' ' | b'\t')))
            .then_some((old_we, lexed))
    })?;
    // A lexical diagnostic across either end of the window: lex everything.
    let crosses = |d: &Diagnostic, at: u32| d.primary.span.start < at && at < d.primary.span.end;
    if old
        .diagnostics
        .iter()
        .any(|d| crosses(d, ws) || crosses(d, old_we))
    {
        return None;
    }
    let moved = |s: Span, by: i64| -> Option<Span> {
        Some(Span::new(
            u32::try_from(i64::from(s.start) + by).ok()?,
            u32::try_from(i64::from(s.end) + by).ok()?,
        ))
    };
    let at = i64::from(ws);
    let mut tokens = Vec::with_capacity(toks.len() + lexed.tokens.len());
    tokens.extend_from_slice(toks.get(..toks.partition_point(|t| t.span.end <= ws))?);
    for t in &lexed.tokens {
        tokens.push(hensu_syntax::Token {
            kind: t.kind,
            span: moved(t.span, at)?,
        });
    }
    for t in toks.get(toks.partition_point(|t| t.span.start < old_we)..)? {
        tokens.push(hensu_syntax::Token {
            kind: t.kind,
            span: moved(t.span, delta)?,
        });
    }
    let oc = &old.comments;
    let mut comments = Vec::with_capacity(oc.len() + lexed.comments.len());
    comments.extend_from_slice(oc.get(..oc.partition_point(|c| c.span.end <= ws))?);
    for c in &lexed.comments {
        let mut c = *c;
        c.span = moved(c.span, at)?;
        comments.push(c);
    }
    for c in oc.get(oc.partition_point(|c| c.span.start < old_we)..)? {
        let mut c = *c;
        c.span = moved(c.span, delta)?;
        comments.push(c);
    }
    let mut diagnostics = Vec::new();
    for d in old.diagnostics.iter().filter(|d| d.primary.span.end <= ws) {
        diagnostics.push(d.clone());
    }
    for d in &lexed.diagnostics {
        diagnostics.push(moved_diagnostic(d, at, &moved)?);
    }
    for d in old
        .diagnostics
        .iter()
        .filter(|d| d.primary.span.start >= old_we)
    {
        diagnostics.push(moved_diagnostic(d, delta, &moved)?);
    }
    Some(Lexed {
        tokens,
        comments,
        diagnostics,
    })
}

fn moved_diagnostic(
    d: &Diagnostic,
    by: i64,
    moved: &impl Fn(Span, i64) -> Option<Span>,
) -> Option<Diagnostic> {
    let mut d = d.clone();
    d.primary.span = moved(d.primary.span, by)?;
    for l in &mut d.secondary {
        l.span = moved(l.span, by)?;
    }
    for s in &mut d.suggestions {
        s.span = moved(s.span, by)?;
    }
    Some(d)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// `text` with `start..end` replaced by `new`, and the edit.
    fn apply(text: &str, start: usize, end: usize, new: &str) -> (String, ByteEdit) {
        let mut t = text.to_string();
        t.replace_range(start..end, new);
        let edit = ByteEdit {
            start: start as u32,
            old_end: end as u32,
            new_len: new.len() as u32,
        };
        (t, edit)
    }

    #[test]
    fn an_edit_inside_a_node_relexes_only_a_window() {
        let src = hensu_workload::generate(20_000, 7);
        let old = hensu_syntax::lex(&src);
        let at = src.rfind("goto \"").unwrap() + "goto \"".len();
        for (new, end) in [("x", at), ("", at + 1), ("é\n", at), ("{topic}", at)] {
            let (text, edit) = apply(&src, at, end, new);
            let got = window(&old, &text, edit).expect("the window path, not a full lexing");
            assert_eq!(got.tokens, hensu_syntax::lex(&text).tokens);
        }
    }

    #[test]
    fn an_opened_raw_string_falls_back_to_a_full_lexing() {
        let src = hensu_workload::generate(20_000, 7);
        let old = hensu_syntax::lex(&src);
        let at = src.len() / 2;
        let at = (0..=at).rev().find(|&i| src.is_char_boundary(i)).unwrap();
        let (text, edit) = apply(&src, at, at, "\"\"\"");
        let fresh = hensu_syntax::lex(&text);
        assert_eq!(relex(&old, &text, edit).tokens, fresh.tokens);
    }
}
