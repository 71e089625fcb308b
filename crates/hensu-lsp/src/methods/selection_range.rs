//! `textDocument/selectionRange` (expand selection): the word or string content under the
//! cursor, the string with its quotes, the statement's line, then every enclosing `( … )` and
//! `{ … }` (contents, then the statement that owns the block), up to the whole document.

use hensu_diagnostics::Span;
use hensu_syntax::TokenKind;
use lsp_types::{SelectionRange, SelectionRangeParams};

use crate::analysis::Analysis;
use crate::engine::Engine;

impl Engine {
    pub fn selection_range(&self, params: SelectionRangeParams) -> Option<Vec<SelectionRange>> {
        let a = self.analysis(&params.text_document.uri)?;
        Some(
            params
                .positions
                .iter()
                .map(|p| selection_at(&a, a.offset(*p)))
                .collect(),
        )
    }
}

fn selection_at(a: &Analysis, offset: u32) -> SelectionRange {
    let tokens = &a.lexed().tokens;
    let mut spans: Vec<Span> = Vec::new();
    // The token under the cursor (a string: its content first).
    let i = tokens.partition_point(|t| t.span.end < offset);
    if let Some(t) = tokens
        .get(i)
        .filter(|t| t.span.start <= offset && t.kind != TokenKind::Newline)
    {
        if t.kind.is_string() {
            let quote = if matches!(t.kind, TokenKind::RawStr) {
                3
            } else {
                1
            };
            if t.span.len() >= 2 * quote {
                spans.push(Span::new(t.span.start + quote, t.span.end - quote));
            }
        }
        spans.push(t.span);
    }
    // The statement's line, without indentation.
    let text = &a.text;
    let at = (offset as usize).min(text.len());
    let ls = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let le = text[at..].find('\n').map_or(text.len(), |i| at + i);
    let line = &text[ls..le];
    let lead = line.len() - line.trim_start().len();
    let trail = line.len() - line.trim_end().len();
    spans.push(Span::from_range(ls + lead..le - trail));
    // Enclosing brackets, innermost first.
    let mut stack: Vec<usize> = Vec::new();
    let mut enclosing: Vec<(usize, usize)> = Vec::new();
    for (j, t) in tokens.iter().enumerate() {
        match t.kind {
            TokenKind::LBrace | TokenKind::LParen => stack.push(j),
            TokenKind::RBrace | TokenKind::RParen => {
                if let Some(open) = stack.pop() {
                    let (o, c) = (&tokens[open], t);
                    if o.span.end <= offset && offset <= c.span.start {
                        enclosing.push((open, j));
                    }
                }
            }
            _ => {}
        }
    }
    enclosing.sort_by_key(|(o, c)| tokens[*c].span.end - tokens[*o].span.start);
    for (o, c) in enclosing {
        let (open, close) = (tokens[o].span, tokens[c].span);
        let inner = text
            .get(open.end as usize..close.start as usize)
            .unwrap_or("");
        let lead = inner.len() - inner.trim_start().len();
        let trail = inner.len() - inner.trim_end().len();
        spans.push(Span::new(
            open.end + u32::try_from(lead).unwrap_or(0),
            close.start - u32::try_from(trail).unwrap_or(0),
        ));
        spans.push(Span::new(open.start, close.end));
        // The statement owning the bracket: from the start of its line.
        let head_start = text[..open.start as usize].rfind('\n').map_or(0, |i| i + 1);
        let head = &text[head_start..open.start as usize];
        let lead = head.len() - head.trim_start().len();
        spans.push(Span::new(
            u32::try_from(head_start + lead).unwrap_or(0),
            close.end,
        ));
    }
    spans.push(Span::new(0, u32::try_from(text.len()).unwrap_or(u32::MAX)));
    // Each range must contain the previous one.
    let mut chain: Vec<Span> = Vec::new();
    for s in spans {
        let grows = chain
            .last()
            .is_none_or(|p| s.start <= p.start && p.end <= s.end && s != *p);
        if grows {
            chain.push(s);
        }
    }
    let mut result: Option<SelectionRange> = None;
    for s in chain.into_iter().rev() {
        result = Some(SelectionRange {
            range: a.range(s),
            parent: result.map(Box::new),
        });
    }
    result.unwrap_or(SelectionRange {
        range: a.range(Span::new(offset, offset)),
        parent: None,
    })
}
