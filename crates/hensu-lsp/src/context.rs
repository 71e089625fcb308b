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

pub fn cursor_context(text: &str, tokens: &[Token], offset: u32) -> CursorContext {
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
    for i in 0..upto {
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
