//! `textDocument/codeAction`: quick fixes for did-you-mean diagnostics — the diagnostic's span
//! (the text inside the quotes for a string, the last segment of `A.B`) is replaced by the
//! suggestion of its help text ``did you mean `x`?``.

use std::collections::HashMap;

use hensu_diagnostics::Span;
use lsp_types::{
    CodeAction, CodeActionKind, CodeActionOrCommand, CodeActionParams, CodeActionResponse,
    NumberOrString, TextEdit, WorkspaceEdit,
};

use crate::engine::Engine;

/// The `x` of ``did you mean `x`?``.
pub(crate) fn suggestion(help: &str) -> Option<&str> {
    let rest = &help[help.find("did you mean `")? + "did you mean `".len()..];
    let end = rest.find('`')?;
    Some(&rest[..end]).filter(|s| !s.is_empty())
}

/// The first `` `quoted` `` word of a message.
fn backticked(message: &str) -> Option<&str> {
    let start = message.find('`')? + 1;
    let len = message[start..].find('`')?;
    Some(&message[start..start + len])
}

/// The byte offset of `word` in `text` where it is not part of a longer identifier.
fn find_word(text: &str, word: &str) -> Option<usize> {
    let is_id = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    let mut from = 0;
    while let Some(i) = text.get(from..)?.find(word) {
        let at = from + i;
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        if !before.is_some_and(is_id) && !after.is_some_and(is_id) {
            return Some(at);
        }
        from = at + word.len().max(1);
    }
    None
}

/// The part of `span` a suggestion replaces.
fn replaced(text: &str, span: Span, suggestion: &str) -> Span {
    let s = text.get(span.range()).unwrap_or("");
    if s.len() >= 2 && s.starts_with('"') && s.ends_with('"') && !s.starts_with("\"\"\"") {
        return Span::new(span.start + 1, span.end - 1);
    }
    if s.len() >= 2 && s.starts_with('{') && s.ends_with('}') {
        return Span::new(span.start + 1, span.end - 1);
    }
    if !suggestion.contains('.')
        && let Some(dot) = s.rfind('.')
    {
        let start = span.start + u32::try_from(dot + 1).unwrap_or(0);
        return Span::new(start.min(span.end), span.end);
    }
    span
}

impl Engine {
    pub fn code_action(&self, params: CodeActionParams) -> Option<CodeActionResponse> {
        let uri = &params.text_document.uri;
        let a = self.analysis(uri)?;
        let want = a.lines.span(&a.text, params.range);
        let mut out = Vec::new();
        for d in &a.diagnostics {
            let span = d.primary.span;
            if span.end < want.start || span.start > want.end {
                continue;
            }
            let Some(fix) = d.help.iter().find_map(|h| suggestion(h)) else {
                continue;
            };
            let written = a.slice(span);
            // `Models.GPT_4O` suggested for a span holding only `GPT_4P`.
            let fix = match fix.rfind('.') {
                Some(dot) if !written.contains('.') => &fix[dot + 1..],
                _ => fix,
            };
            // The unknown name the message quotes, found inside the span (a `{name}` inside a
            // prompt whose diagnostic spans the whole string), else the span itself.
            let edit_span = backticked(&d.message)
                .map(|bad| bad.trim_matches(['{', '}']))
                .filter(|bad| !bad.is_empty())
                .and_then(|bad| {
                    let bad = match bad.rfind('.') {
                        Some(dot) if !fix.contains('.') => &bad[dot + 1..],
                        _ => bad,
                    };
                    let at = find_word(written, bad)?;
                    let start = span.start + u32::try_from(at).ok()?;
                    Some(Span::new(start, start + u32::try_from(bad.len()).ok()?))
                })
                .unwrap_or_else(|| replaced(&a.text, span, fix));
            let range = a.range(edit_span);
            let matching: Vec<lsp_types::Diagnostic> = params
                .context
                .diagnostics
                .iter()
                .filter(|c| {
                    c.range == a.range(span)
                        && c.code == Some(NumberOrString::String(d.code.to_string()))
                })
                .cloned()
                .collect();
            let mut changes = HashMap::new();
            changes.insert(
                uri.clone(),
                vec![TextEdit {
                    range,
                    new_text: fix.to_string(),
                }],
            );
            out.push(CodeActionOrCommand::CodeAction(CodeAction {
                title: format!("Replace with `{fix}`"),
                kind: Some(CodeActionKind::QUICKFIX),
                diagnostics: if matching.is_empty() {
                    None
                } else {
                    Some(matching)
                },
                edit: Some(WorkspaceEdit {
                    changes: Some(changes),
                    ..WorkspaceEdit::default()
                }),
                is_preferred: Some(true),
                ..CodeAction::default()
            }));
        }
        Some(out)
    }
}
