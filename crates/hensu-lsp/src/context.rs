//! Where the cursor is, from the tokens before it (robust for half-typed documents): the block
//! it is in (resolved through the lowering schema from the names of the enclosing `{ … }`), the
//! call whose parentheses it is in and the argument index, the statement tokens before it, and
//! the token being typed.

use hensu_sema::schema::{self, BlockKind, StatementKind};
use hensu_syntax::{Token, TokenKind};

/// The block the cursor is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// Outside any block (the file's top level, or a `fun … { }` body).
    File,
    Block(BlockKind),
    /// Inside a block the schema does not know.
    Unknown,
}

#[derive(Clone, Debug)]
pub struct Paren {
    pub callee: Option<String>,
    pub arg: usize,
    depth: usize,
}

#[derive(Clone, Debug)]
pub struct CursorContext {
    pub scope: Scope,
    /// The innermost open parenthesis of the current block, if any.
    pub paren: Option<Paren>,
    /// The token the cursor is in or at the end of (an identifier or a string being typed).
    pub current: Option<Token>,
    /// The tokens of the current statement before `current`.
    pub before: Vec<Token>,
}

/// The block kind entered by `{` after the statement named `name` in `parent`.
fn child_scope(parent: Scope, name: Option<&str>, after_fun: bool) -> Scope {
    match parent {
        Scope::File => match name {
            Some("workflow") => Scope::Block(BlockKind::Workflow),
            _ if after_fun => Scope::File,
            _ => Scope::Unknown,
        },
        Scope::Block(kind) => {
            let Some(spec) = name.and_then(|n| schema::lookup(kind, n)) else {
                return Scope::Unknown;
            };
            match spec.kind {
                StatementKind::Block(k) => Scope::Block(k),
                StatementKind::CallBlock { block, .. }
                | StatementKind::CallOrBlock { block, .. } => Scope::Block(block),
                _ => Scope::Unknown,
            }
        }
        Scope::Unknown => Scope::Unknown,
    }
}

fn is_word(k: TokenKind) -> bool {
    matches!(
        k,
        TokenKind::Ident
            | TokenKind::BacktickIdent
            | TokenKind::KwTrue
            | TokenKind::KwFalse
            | TokenKind::KwNull
            | TokenKind::KwIn
            | TokenKind::KwFun
            | TokenKind::KwPackage
            | TokenKind::KwImport
            | TokenKind::KwReturn
            | TokenKind::KwVal
            | TokenKind::KwVar
            | TokenKind::KwIf
            | TokenKind::KwWhen
            | TokenKind::KwFor
            | TokenKind::KwWhile
            | TokenKind::KwDo
            | TokenKind::KwElse
            | TokenKind::KwClass
            | TokenKind::KwObject
    )
}

/// Where the walk of [`cursor_context_in`] may start instead of the first token: just after the
/// `{` of a graph node's block, in the state the walk from the start of the file is in there.
#[derive(Clone, Debug)]
pub struct Start {
    /// The index of the `{` token.
    brace: usize,
    /// The node's call (`node`, `fork`, …): the callee of the `(…)` closed before the `{`.
    call: String,
    scope: Scope,
}

/// The block start of the last graph node (of the last few) declared before `offset` whose
/// head `call(…) {` lies in the clean part of the analysed text (`Analysis::clean_until`): there
/// the walk from the start of the file has the workflow's, the graph's and the node's blocks
/// open and no parenthesis (the text before is free of syntax errors).
pub fn node_block_start(
    a: &crate::analysis::Analysis,
    tokens: &[Token],
    offset: u32,
) -> Option<Start> {
    let nodes = &a.index.nodes;
    let last = nodes.partition_point(|n| n.decl.start < offset);
    for n in nodes[..last].iter().rev().take(4) {
        let k = tokens.partition_point(|t| t.span.start < n.decl.start);
        let head = tokens.get(k)?;
        if head.kind != TokenKind::Ident
            || head.span.start != n.decl.start
            || a.text.get(head.span.range()) != Some(n.call.as_str())
            || tokens.get(k + 1).map(|t| t.kind) != Some(TokenKind::LParen)
        {
            return None;
        }
        // The `)` closing the call's arguments, then `{` right after it.
        let mut depth = 0usize;
        let mut close = None;
        for (j, t) in tokens.iter().enumerate().skip(k + 1) {
            match t.kind {
                TokenKind::LParen => depth += 1,
                TokenKind::RParen => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        close = Some(j);
                        break;
                    }
                }
                TokenKind::LBrace | TokenKind::RBrace => return None,
                _ => {}
            }
        }
        let brace = close? + 1;
        match tokens.get(brace) {
            Some(t) if t.kind == TokenKind::LBrace => {
                if t.span.end > a.clean_until || t.span.start >= offset {
                    return None;
                }
                let graph = Scope::Block(BlockKind::Graph);
                return Some(Start {
                    brace,
                    scope: child_scope(graph, Some(&n.call), false),
                    call: n.call.clone(),
                });
            }
            // A node without a block (`end(…)`): try the one before.
            _ => continue,
        }
    }
    None
}

/// The context from a walk of every token before the cursor (what [`cursor_context_in`] gives
/// faster; tests compare the two).
#[cfg(test)]
pub fn cursor_context(text: &str, tokens: &[Token], offset: u32) -> CursorContext {
    cursor_context_in(text, tokens, offset, None)
}

/// [`cursor_context`], walking from `start` when given (the same answer, fewer tokens).
pub fn cursor_context_in(
    text: &str,
    tokens: &[Token],
    offset: u32,
    start: Option<Start>,
) -> CursorContext {
    let slice = |t: &Token| text.get(t.span.range()).unwrap_or("");
    // The token being typed: the cursor is inside it or at its end.
    let end = tokens.partition_point(|t| t.span.start < offset);
    let current = end
        .checked_sub(1)
        .and_then(|i| tokens.get(i))
        .filter(|t| {
            t.span.start < offset
                && offset <= t.span.end
                && (is_word(t.kind) || t.kind.is_string())
                && !(matches!(t.kind, TokenKind::Str | TokenKind::RawStr) && offset == t.span.end)
        })
        .copied();
    let upto = if current.is_some() { end - 1 } else { end };

    let mut scopes: Vec<Scope> = Vec::new();
    let mut parens: Vec<Paren> = Vec::new();
    let mut last_closed: Option<String> = None;
    let mut last_closed_fun = false;
    let mut stmt_start = 0usize;
    let mut first = 0usize;
    if let Some(s) = start.filter(|s| s.brace < upto) {
        // The state after the node's `{`: the blocks of the workflow, the graph and the node.
        scopes = vec![
            Scope::Block(BlockKind::Workflow),
            Scope::Block(BlockKind::Graph),
            s.scope,
        ];
        last_closed = Some(s.call);
        stmt_start = s.brace + 1;
        first = s.brace + 1;
    }
    for i in first..upto {
        let Some(t) = tokens.get(i) else { break };
        match t.kind {
            TokenKind::LBrace => {
                let prev = i.checked_sub(1).and_then(|j| tokens.get(j));
                let (name, after_fun) = match prev.map(|p| p.kind) {
                    Some(TokenKind::RParen) => (last_closed.clone(), last_closed_fun),
                    Some(TokenKind::Ident) => (prev.map(|p| slice(p).to_string()), false),
                    _ => (None, false),
                };
                let parent = scopes.last().copied().unwrap_or(Scope::File);
                scopes.push(child_scope(parent, name.as_deref(), after_fun));
                stmt_start = i + 1;
            }
            TokenKind::RBrace => {
                scopes.pop();
                parens.retain(|p| p.depth <= scopes.len());
                stmt_start = i + 1;
            }
            TokenKind::LParen => {
                let prev = i.checked_sub(1).and_then(|j| tokens.get(j));
                let callee = prev
                    .filter(|p| p.kind == TokenKind::Ident)
                    .map(|p| slice(p).to_string());
                parens.push(Paren {
                    callee,
                    arg: 0,
                    depth: scopes.len(),
                });
            }
            TokenKind::RParen => {
                let p = parens.pop();
                // `fun name() {`: the ident before `(` follows `fun`.
                last_closed_fun = p.as_ref().is_some_and(|_| {
                    let mut j = i;
                    while j > 0 && tokens.get(j).is_some_and(|t| t.kind != TokenKind::LParen) {
                        j -= 1;
                    }
                    j >= 2
                        && tokens
                            .get(j - 2)
                            .is_some_and(|t| t.kind == TokenKind::KwFun)
                });
                last_closed = p.and_then(|p| p.callee);
            }
            TokenKind::Comma => {
                if let Some(p) = parens.last_mut() {
                    p.arg += 1;
                }
            }
            TokenKind::Semi => stmt_start = i + 1,
            TokenKind::Newline => {
                let in_parens = parens.last().is_some_and(|p| p.depth == scopes.len());
                let continues = i
                    .checked_sub(1)
                    .and_then(|j| tokens.get(j))
                    .is_some_and(|p| {
                        matches!(p.kind, TokenKind::Eq | TokenKind::Plus | TokenKind::DotDot)
                    });
                if !in_parens && !continues {
                    stmt_start = i + 1;
                }
            }
            _ => {}
        }
    }
    let scope = scopes.last().copied().unwrap_or(Scope::File);
    let paren = parens.last().filter(|p| p.depth == scopes.len()).cloned();
    let before = tokens
        .get(stmt_start.min(upto)..upto)
        .unwrap_or(&[])
        .iter()
        .filter(|t| t.kind != TokenKind::Newline)
        .copied()
        .collect();
    CursorContext {
        scope,
        paren,
        current,
        before,
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use hensu_diagnostics::FileId;
    use hensu_sema::files::NoFiles;

    use super::*;
    use crate::analysis::Analysis;
    use crate::line_index::LineIndex;
    use crate::shift::{ByteEdit, Shift};

    /// Every 7th offset of `a`'s text: the walk from a node's block and the full walk agree.
    /// Returns how often the shortcut was taken.
    fn compare(a: &Analysis, what: &str) -> usize {
        let tokens = &a.lexed().tokens;
        let mut taken = 0;
        for offset in (0..=a.text.len()).step_by(7) {
            let offset = u32::try_from(offset).unwrap_or(u32::MAX);
            let start = node_block_start(a, tokens, offset);
            taken += usize::from(start.is_some());
            let fast = cursor_context_in(&a.text, tokens, offset, start);
            let full = cursor_context(&a.text, tokens, offset);
            assert_eq!(
                format!("{fast:?}"),
                format!("{full:?}"),
                "{what} at {offset}"
            );
        }
        taken
    }

    #[test]
    fn starting_at_a_node_block_gives_the_context_of_the_full_walk() {
        const PIECES: &[&str] = &[
            "x",
            "{",
            "}",
            "(",
            ")",
            "\"",
            "\n",
            "node(\"q\") {",
            "// c",
            "/*",
        ];
        let mut taken = 0;
        for seed in 0..6u64 {
            let text = hensu_workload::generate(6_000, seed);
            let a = Analysis::new(FileId(0), Arc::new(text.clone()), &NoFiles);
            taken += compare(&a, &format!("seed {seed}"));
            // Moved through an edit (a provisional analysis): clean only before the edit, or
            // all of it when the edited node still parses alone.
            let mut rng = hensu_workload::Rng::new(seed);
            for round in 0..5 {
                let at = rng.below(text.len());
                let at = (0..=at)
                    .rev()
                    .find(|i| text.is_char_boundary(*i))
                    .unwrap_or(0);
                let piece = *rng.pick(PIECES);
                let mut edited = text.clone();
                edited.insert_str(at, piece);
                let mut shift = Shift::default();
                shift.push(ByteEdit {
                    start: u32::try_from(at).unwrap_or(0),
                    old_end: u32::try_from(at).unwrap_or(0),
                    new_len: u32::try_from(piece.len()).unwrap_or(0),
                });
                let lines = LineIndex::new(&edited);
                let p = a.provisional(Arc::new(edited), lines, &shift);
                taken += compare(
                    &p,
                    &format!("seed {seed} round {round} ({piece:?} at {at})"),
                );
            }
        }
        assert!(taken > 5_000, "the shortcut was taken {taken} times");
    }
}
