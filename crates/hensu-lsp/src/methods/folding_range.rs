//! `textDocument/foldingRange`: every `{ … }` and `( … )` spanning lines (blocks, multi-line
//! argument lists), multi-line comments (KDoc shown as comments), and runs of `import` lines.
//! Computed from the tokens, so a half-typed document folds too.

use hensu_syntax::TokenKind;
use lsp_types::{FoldingRange, FoldingRangeKind, FoldingRangeParams};

use crate::engine::Engine;

impl Engine {
    pub fn folding_range(&self, params: FoldingRangeParams) -> Option<Vec<FoldingRange>> {
        let a = self.analysis(&params.text_document.uri)?;
        let lexed = a.lexed();
        let line = |offset: u32| a.lines.position(&a.text, offset).line;
        let mut out = Vec::new();
        let mut open: Vec<(TokenKind, u32)> = Vec::new();
        for t in &lexed.tokens {
            match t.kind {
                TokenKind::LBrace | TokenKind::LParen => open.push((t.kind, t.span.start)),
                TokenKind::RBrace | TokenKind::RParen => {
                    let opener = if t.kind == TokenKind::RBrace {
                        TokenKind::LBrace
                    } else {
                        TokenKind::LParen
                    };
                    if let Some(i) = open.iter().rposition(|(k, _)| *k == opener) {
                        let (_, start) = open[i];
                        open.truncate(i);
                        let (first, last) = (line(start), line(t.span.start));
                        // The closing line stays visible.
                        if last > first + 1 || (last > first && t.kind == TokenKind::RParen) {
                            out.push(fold(first, last - 1, None));
                        }
                    }
                }
                _ => {}
            }
        }
        for c in &lexed.comments {
            let (first, last) = (line(c.span.start), line(c.span.end.saturating_sub(1)));
            if last > first {
                out.push(fold(first, last, Some(FoldingRangeKind::Comment)));
            }
        }
        // Runs of `import` lines.
        let mut run: Option<(u32, u32)> = None;
        for t in &lexed.tokens {
            if t.kind != TokenKind::KwImport {
                continue;
            }
            let l = line(t.span.start);
            run = match run {
                Some((first, last)) if l == last + 1 => Some((first, l)),
                Some((first, last)) => {
                    if last > first {
                        out.push(fold(first, last, Some(FoldingRangeKind::Imports)));
                    }
                    Some((l, l))
                }
                None => Some((l, l)),
            };
        }
        if let Some((first, last)) = run
            && last > first
        {
            out.push(fold(first, last, Some(FoldingRangeKind::Imports)));
        }
        out.sort_by_key(|f| (f.start_line, std::cmp::Reverse(f.end_line)));
        Some(out)
    }
}

fn fold(start_line: u32, end_line: u32, kind: Option<FoldingRangeKind>) -> FoldingRange {
    FoldingRange {
        start_line,
        start_character: None,
        end_line,
        end_character: None,
        kind,
        collapsed_text: None,
    }
}
