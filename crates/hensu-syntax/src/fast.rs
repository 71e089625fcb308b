//! The fast path: a hand-written recursive-descent parser for error-free input.
//!
//! It accepts exactly the language of the chumsky parser in [`crate::parser`] and builds the
//! identical tree (same nodes, same spans), but it has no error reporting and no recovery: at
//! the first thing it does not expect it gives up (`None`) and [`crate::parse`] runs the layout
//! pass and the chumsky parser, which report every error and recover. Almost every file a user
//! compiles is error-free, so this keeps the common case fast (chumsky's combinator ladder costs
//! hundreds of nanoseconds per token). The two parsers are checked against each other by a
//! differential property test (`tests/syntax/robustness.rs`).
//!
//! The layout pass is fused in: this parser reads the lexer's raw tokens and its [`Cursor`]
//! applies the newline rules of [`crate::layout`] (the same functions) while it moves, so the
//! happy path builds no second token vector. What the layout pass would report (an unmatched
//! or unclosed delimiter, nesting deeper than [`crate::layout::MAX_DEPTH`]) makes it give up:
//! every delimiter it consumes is consumed by the function that also consumes its partner, and
//! an opener past the depth limit fails, so this parser cannot overflow the stack either.

mod defer;

use defer::Deferring;
pub(crate) use defer::parse_deferring_graphs;

use crate::ast::*;
use crate::layout::{CSpan, MAX_DEPTH, newline_continues_after, newline_continues_before};
use crate::lexer::{Token, TokenKind as T};
use crate::parser::{Suffix, apply_suffix, number, string_lit, text};

/// A position in the raw token vector, and what the newline rules need to know there.
#[derive(Clone, Copy)]
struct Cursor {
    /// Index of the current token: never a line break the layout pass would drop; for a line
    /// break it keeps, the first of its run (the run is one separator). `toks.len()` at the end.
    pos: usize,
    /// Open delimiters.
    depth: u32,
    /// Bit `i`: the delimiter open at depth `i` is `(` (line breaks inside it are not
    /// separators). `MAX_DEPTH` bits.
    parens: u128,
    /// End offset of the last consumed token.
    prev_end: u32,
}

const _: () = assert!(
    MAX_DEPTH <= 128,
    "Cursor::parens holds one bit per open delimiter"
);

struct P<'t, 's> {
    toks: &'t [Token],
    at: Cursor,
    src: &'s str,
    // Scratch stacks: items are pushed here and moved into an exactly-sized `Vec` when their
    // list ends (a growing `Vec` per list would over-allocate large elements 2–4×).
    stmts: Vec<Stmt<'s>>,
    args: Vec<Arg<'s>>,
    links: Vec<Link<'s>>,
    /// Set by [`parse_deferring_graphs`]: which `graph { }` blocks to leave out of the tree.
    defer: Option<Deferring>,
}

/// Parse the lexer's tokens of an error-free file; `None` when anything would need a
/// diagnostic from the layout pass or the parser.
pub(crate) fn parse<'s>(src: &'s str, toks: &[Token]) -> Option<Vec<Stmt<'s>>> {
    P::new(src, toks, None, 64).file()
}

impl<'t, 's> P<'t, 's> {
    /// `scratch`: the initial capacity of the statement stack (a whole file's parse nests
    /// deeper than one statement's).
    fn new(src: &'s str, toks: &'t [Token], defer: Option<Deferring>, scratch: usize) -> Self {
        P {
            toks,
            at: Cursor {
                pos: 0,
                depth: 0,
                parens: 0,
                prev_end: 0,
            },
            src,
            stmts: Vec::with_capacity(scratch),
            args: Vec::with_capacity(scratch.min(16)),
            links: Vec::with_capacity(scratch.min(16)),
            defer,
        }
    }

    /// The items of the whole file.
    fn file(&mut self) -> Option<Vec<Stmt<'s>>> {
        self.at.pos = self.significant(0, self.at);
        self.skip_seps();
        let mut items = Vec::new();
        while self.at.pos < self.toks.len() {
            let item = self.item()?;
            items.push(item);
            if !self.stmt_end() {
                return None;
            }
        }
        Some(items)
    }
}

/// One statement of a block from the raw tokens of exactly its text (spans are offsets into
/// `src`), parsed as [`parse`] parses it inside `depth` open braces; `None` when the tokens hold
/// anything else than one error-free statement (see [`crate::parse_statement`]).
pub(crate) fn statement<'s>(src: &'s str, toks: &[Token], depth: u32) -> Option<Stmt<'s>> {
    statement_with(src, toks, depth, &mut Scratch::default())
}

/// The parser's scratch stacks, kept from one statement to the next by a caller that parses
/// many ([`crate::StatementParser`]): three allocations a statement fewer.
#[derive(Default)]
pub(crate) struct Scratch<'s> {
    stmts: Vec<Stmt<'s>>,
    args: Vec<Arg<'s>>,
    links: Vec<Link<'s>>,
}

/// [`statement`] with the scratch stacks of `scratch` (empty again when it returns).
pub(crate) fn statement_with<'s>(
    src: &'s str,
    toks: &[Token],
    depth: u32,
    scratch: &mut Scratch<'s>,
) -> Option<Stmt<'s>> {
    if depth as usize >= MAX_DEPTH || toks.first()?.kind == T::Newline {
        return None;
    }
    let mut p = P::new(src, toks, None, 0);
    if scratch.stmts.capacity() == 0 {
        scratch.stmts.reserve(16);
        scratch.args.reserve(16);
        scratch.links.reserve(16);
    }
    p.stmts = std::mem::take(&mut scratch.stmts);
    p.args = std::mem::take(&mut scratch.args);
    p.links = std::mem::take(&mut scratch.links);
    p.at.depth = depth;
    let stmt = p.stmt();
    let done = p.at.pos == toks.len() && p.at.depth == depth;
    // A parse that gave up may leave items on the stacks.
    p.stmts.clear();
    p.args.clear();
    p.links.clear();
    scratch.stmts = p.stmts;
    scratch.args = p.args;
    scratch.links = p.links;
    stmt.filter(|_| done)
}

#[inline]
fn cspan(s: Span) -> CSpan {
    CSpan::from(s.start..s.end)
}

impl<'t, 's> P<'t, 's> {
    /// The first token at or after raw index `i` that the layout pass keeps, for a cursor in
    /// the state `at` (its open delimiters); `i` follows a consumed token other than a line
    /// break, or is 0.
    #[inline]
    fn significant(&self, i: usize, at: Cursor) -> usize {
        match self.toks.get(i) {
            Some(t) if t.kind == T::Newline => self.newline_run(i, at),
            _ => i,
        }
    }

    /// A run of line breaks starting at `i`: `i` when it separates statements, else the index
    /// of the token after it. The rules are the layout pass's ([`crate::layout`]).
    #[cold]
    fn newline_run(&self, i: usize, at: Cursor) -> usize {
        let mut next = i + 1;
        while self.toks.get(next).is_some_and(|t| t.kind == T::Newline) {
            next += 1;
        }
        let in_parens = at.depth > 0 && at.parens & (1u128 << (at.depth - 1)) != 0;
        let Some(prev) = i.checked_sub(1).and_then(|p| self.toks.get(p)) else {
            return next;
        };
        let Some(after) = self.toks.get(next) else {
            return next;
        };
        if in_parens
            || newline_continues_after(self.src, prev.kind, prev.span)
            || newline_continues_before(self.src, after.kind, after.span, prev.kind)
        {
            next
        } else {
            i
        }
    }

    /// The cursor after consuming its current token; `None` past the nesting limit.
    #[inline]
    fn advanced(&self, mut at: Cursor) -> Option<Cursor> {
        let tok = self.toks.get(at.pos)?;
        at.prev_end = tok.span.end;
        match tok.kind {
            T::Newline => {
                // A kept run is one separator; what follows it is not a line break.
                at.pos += 1;
                while self.toks.get(at.pos).is_some_and(|t| t.kind == T::Newline) {
                    at.pos += 1;
                }
                return Some(at);
            }
            T::LParen | T::LBracket | T::LBrace => {
                if at.depth as usize >= MAX_DEPTH {
                    return None;
                }
                if tok.kind == T::LBrace {
                    at.parens &= !(1u128 << at.depth);
                } else {
                    at.parens |= 1u128 << at.depth;
                }
                at.depth += 1;
            }
            T::RParen | T::RBracket | T::RBrace => at.depth = at.depth.saturating_sub(1),
            _ => {}
        }
        at.pos = self.significant(at.pos + 1, at);
        Some(at)
    }

    /// Consume the current token; `None` past the nesting limit.
    #[inline]
    fn bump(&mut self) -> Option<()> {
        self.at = self.advanced(self.at)?;
        Some(())
    }

    #[inline]
    fn peek(&self) -> Option<T> {
        self.toks.get(self.at.pos).map(|t| t.kind)
    }

    /// The kind of the token after the current one.
    #[inline]
    fn peek_next(&self) -> Option<T> {
        let at = self.advanced(self.at)?;
        self.toks.get(at.pos).map(|t| t.kind)
    }

    #[inline]
    fn eat(&mut self, kind: T) -> Option<Span> {
        match self.toks.get(self.at.pos) {
            Some(&Token { kind: k, span }) if k == kind => {
                self.bump()?;
                Some(span)
            }
            _ => None,
        }
    }

    /// Span from the token at raw index `start` to the last consumed token.
    fn span_from(&self, start: usize) -> Option<Span> {
        let a = self.toks.get(start)?;
        Some(Span::new(a.span.start, self.at.prev_end))
    }

    fn skip_seps(&mut self) -> bool {
        let start = self.at.pos;
        while matches!(self.peek(), Some(T::Newline | T::Semi)) {
            if self.bump().is_none() {
                break;
            }
        }
        self.at.pos > start
    }

    /// `sep+`, or before `}` / at the end.
    fn stmt_end(&mut self) -> bool {
        self.skip_seps() || matches!(self.peek(), None | Some(T::RBrace))
    }

    fn ident(&mut self) -> Option<Ident<'s>> {
        let &Token { kind, span: s } = self.toks.get(self.at.pos)?;
        let id = match kind {
            T::Ident => Ident {
                name: text(self.src, cspan(s)),
                span: s,
            },
            T::BacktickIdent => {
                let inner = CSpan::from(s.start + 1..s.end.saturating_sub(1).max(s.start + 1));
                Ident {
                    name: text(self.src, inner),
                    span: s,
                }
            }
            _ => return None,
        };
        self.bump()?;
        Some(id)
    }

    fn path(&mut self) -> Option<Path<'s>> {
        let start = self.at.pos;
        let mut segments = vec![self.ident()?];
        while self.peek() == Some(T::Dot)
            && matches!(self.peek_next(), Some(T::Ident | T::BacktickIdent))
        {
            self.bump()?;
            segments.push(self.ident()?);
        }
        Some(Path {
            segments: segments.into_boxed_slice(),
            span: self.span_from(start)?,
        })
    }

    fn item(&mut self) -> Option<Stmt<'s>> {
        let start = self.at.pos;
        match self.peek()? {
            T::Annotation => self.annotated(Self::item),
            T::KwPackage => {
                self.bump()?;
                let p = self.path()?;
                Some(Stmt {
                    kind: StmtKind::Package(p),
                    span: self.span_from(start)?,
                    annotations: Box::default(),
                })
            }
            T::KwImport => {
                self.bump()?;
                let path = self.path()?;
                let star = self.peek() == Some(T::Dot) && self.peek_next() == Some(T::Star);
                if star {
                    self.bump()?;
                    self.bump()?;
                }
                Some(Stmt {
                    kind: StmtKind::Import { path, star },
                    span: self.span_from(start)?,
                    annotations: Box::default(),
                })
            }
            T::KwFun => {
                self.bump()?;
                let name = self.ident()?;
                self.eat(T::LParen)?;
                self.eat(T::RParen)?;
                if self.eat(T::Colon).is_some() {
                    self.path()?;
                }
                let body = if self.eat(T::Eq).is_some() {
                    FunBody::Expr(self.expr()?)
                } else {
                    FunBody::Block(self.fun_block()?)
                };
                Some(Stmt {
                    kind: StmtKind::Fun { name, body },
                    span: self.span_from(start)?,
                    annotations: Box::default(),
                })
            }
            _ => self.stmt(),
        }
    }

    fn fun_block(&mut self) -> Option<Block<'s>> {
        let start = self.at.pos;
        self.eat(T::LBrace)?;
        self.skip_seps();
        let base = self.stmts.len();
        while self.peek() != Some(T::RBrace) {
            let s = if matches!(self.peek(), Some(T::KwVal | T::KwVar)) {
                let s0 = self.at.pos;
                self.bump()?;
                self.ident()?;
                if self.eat(T::Colon).is_some() {
                    self.path()?;
                }
                self.eat(T::Eq)?;
                let v = self.expr()?;
                Stmt {
                    kind: StmtKind::Expr(v),
                    span: self.span_from(s0)?,
                    annotations: Box::default(),
                }
            } else {
                self.stmt()?
            };
            self.stmts.push(s);
            if !self.stmt_end() {
                return None;
            }
        }
        self.eat(T::RBrace)?;
        let stmts = self.stmts.drain(base..).collect();
        Some(Block {
            stmts,
            span: self.span_from(start)?,
        })
    }

    /// `{ stmt* }`; with `deferred`, each statement is parsed and dropped, and the block is
    /// listed as a [`DeferredGraph`] (kept whole if it holds an annotation).
    fn block(&mut self, deferred: bool) -> Option<Block<'s>> {
        let start = self.at.pos;
        self.eat(T::LBrace)?;
        // `{ a, b -> …}` is a lambda with parameters: the chumsky parser reports it.
        if matches!(self.peek(), Some(T::Ident | T::BacktickIdent)) {
            let kind_at = |at: Cursor| self.toks.get(at.pos).map(|t| t.kind);
            let mut look = self.advanced(self.at)?;
            loop {
                match kind_at(look) {
                    Some(T::Arrow) => return None,
                    Some(T::Comma) => {
                        let name = self.advanced(look)?;
                        if !matches!(kind_at(name), Some(T::Ident | T::BacktickIdent)) {
                            break;
                        }
                        look = self.advanced(name)?;
                    }
                    _ => break,
                }
            }
        }
        self.skip_seps();
        if deferred {
            return self.deferred_block(start);
        }
        let base = self.stmts.len();
        while self.peek() != Some(T::RBrace) {
            let s = self.stmt()?;
            self.stmts.push(s);
            if !self.stmt_end() {
                return None;
            }
        }
        self.eat(T::RBrace)?;
        let stmts = self.stmts.drain(base..).collect();
        Some(Block {
            stmts,
            span: self.span_from(start)?,
        })
    }

    fn stmt(&mut self) -> Option<Stmt<'s>> {
        let start = self.at.pos;
        match self.peek()? {
            T::Annotation => self.annotated(Self::stmt),
            T::KwReturn => {
                self.bump()?;
                let value = if self.starts_expr() {
                    Some(self.expr()?)
                } else {
                    None
                };
                Some(Stmt {
                    kind: StmtKind::Return(value),
                    span: self.span_from(start)?,
                    annotations: Box::default(),
                })
            }
            T::Ident | T::BacktickIdent if self.peek_next() == Some(T::Eq) => {
                let target = self.ident()?;
                self.bump()?;
                let value = self.expr()?;
                Some(Stmt {
                    kind: StmtKind::Assign { target, value },
                    span: self.span_from(start)?,
                    annotations: Box::default(),
                })
            }
            _ => {
                let e = self.expr()?;
                Some(Stmt {
                    span: e.span,
                    kind: StmtKind::Expr(e),
                    annotations: Box::default(),
                })
            }
        }
    }

    /// `@Name(args)` annotations (each may be followed by line breaks), then the statement
    /// `inner` parses; the statement's span grows to cover them.
    fn annotated(&mut self, inner: fn(&mut Self) -> Option<Stmt<'s>>) -> Option<Stmt<'s>> {
        let mut annotations = Vec::new();
        while let Some(&Token {
            kind: T::Annotation,
            span: at,
        }) = self.toks.get(self.at.pos)
        {
            let start = self.at.pos;
            self.bump()?;
            let name = crate::parser::annotation_name(self.src, cspan(at));
            let args = if self.peek() == Some(T::LParen) {
                Some(self.args()?)
            } else {
                None
            };
            let span = self.span_from(start)?;
            annotations.push(Annotation { name, args, span });
            while self.eat(T::Newline).is_some() {}
        }
        let mut stmt = inner(self)?;
        let first = annotations.first()?.span;
        stmt.span = first.to(stmt.span);
        stmt.annotations = annotations.into_boxed_slice();
        Some(stmt)
    }

    /// Tokens that can start an expression on the happy path.
    fn starts_expr(&self) -> bool {
        matches!(
            self.peek(),
            Some(
                T::Int
                    | T::Long
                    | T::Double
                    | T::Str
                    | T::RawStr
                    | T::KwTrue
                    | T::KwFalse
                    | T::KwNull
                    | T::Minus
                    | T::Ident
                    | T::BacktickIdent
                    | T::LParen
            )
        )
    }

    fn expr(&mut self) -> Option<Expr<'s>> {
        let head = self.range()?;
        let base = self.links.len();
        while matches!(self.peek(), Some(T::Ident | T::BacktickIdent)) {
            let word = self.ident()?;
            let mut arg = None;
            if self.starts_expr() {
                let before = self.at;
                let a = self.range()?;
                if matches!(a.kind, ExprKind::Name(_)) {
                    self.at = before;
                } else {
                    arg = Some(a);
                }
            }
            self.links.push(Link { word, arg });
        }
        if matches!(self.peek(), Some(T::KwIn)) {
            return None;
        }
        if self.links.len() == base {
            return Some(head);
        }
        let links: Box<[Link<'s>]> = self.links.drain(base..).collect();
        let end = links.last().map_or(head.span, |l| {
            l.arg.as_ref().map_or(l.word.span, |a| a.span)
        });
        let span = head.span.to(end);
        Some(Expr {
            kind: ExprKind::Chain {
                head: Box::new(head),
                links,
            },
            span,
        })
    }

    /// A literal or a name that no suffix, `+` or `..` follows (most arguments, values, infix
    /// heads and infix arguments: `"n1"`, `0.5`, `onSuccess`): [`Self::range`] would return
    /// what [`Self::primary`] builds, so it is parsed without descending the ladder.
    #[inline]
    fn is_lone_primary(&self) -> bool {
        let Some(&Token { kind, .. }) = self.toks.get(self.at.pos) else {
            return false;
        };
        if !matches!(
            kind,
            T::Str
                | T::RawStr
                | T::Int
                | T::Long
                | T::Double
                | T::KwTrue
                | T::KwFalse
                | T::KwNull
                | T::Ident
                | T::BacktickIdent
        ) {
            return false;
        }
        let Some(after) = self.advanced(self.at) else {
            return false;
        };
        !matches!(
            self.toks.get(after.pos).map(|t| t.kind),
            Some(T::Dot | T::LParen | T::LBrace | T::Plus | T::DotDot)
        )
    }

    fn range(&mut self) -> Option<Expr<'s>> {
        if self.is_lone_primary() {
            return self.primary();
        }
        let start = self.additive()?;
        if self.eat(T::DotDot).is_none() {
            return Some(start);
        }
        let end = self.additive()?;
        let span = start.span.to(end.span);
        Some(Expr {
            kind: ExprKind::Range {
                start: Box::new(start),
                end: Box::new(end),
            },
            span,
        })
    }

    fn additive(&mut self) -> Option<Expr<'s>> {
        let mut lhs = self.postfix()?;
        while self.eat(T::Plus).is_some() {
            let rhs = self.postfix()?;
            lhs = crate::parser::add(lhs, rhs);
        }
        Some(lhs)
    }

    fn postfix(&mut self) -> Option<Expr<'s>> {
        let mut cur = self.primary()?;
        loop {
            let suffix = match self.peek() {
                Some(T::Dot) => {
                    let start = self.at.pos;
                    self.bump()?;
                    let id = self.ident()?;
                    let args = if self.peek() == Some(T::LParen) {
                        Some(self.args()?)
                    } else {
                        None
                    };
                    let s = self.span_from(start)?;
                    Suffix::Member(id, args, cspan(s))
                }
                // The two suffixes of every node and call (`name(args)`, `call(args) { block }`)
                // are built in place: the same result as `apply_suffix` without moving the
                // expression through it.
                Some(T::LParen) if matches!(cur.kind, ExprKind::Name(_)) => {
                    let args = self.args()?;
                    if let ExprKind::Name(callee) = cur.kind {
                        cur = Expr {
                            span: cur.span.to(args.span),
                            kind: ExprKind::Call(Box::new(Call {
                                callee,
                                args: Some(args),
                                block: None,
                            })),
                        };
                    }
                    continue;
                }
                Some(T::LBrace) if matches!(&cur.kind, ExprKind::Call(c) if c.block.is_none()) => {
                    let callee = match &cur.kind {
                        ExprKind::Call(c) => Some(c.callee.name),
                        _ => None,
                    };
                    let block = self.call_block(callee)?;
                    cur.span = cur.span.to(block.span);
                    if let ExprKind::Call(c) = &mut cur.kind {
                        c.block = Some(Box::new(block));
                    }
                    continue;
                }
                Some(T::LParen) => Suffix::Args(self.args()?),
                Some(T::LBrace) => {
                    let callee = cur.as_name().map(|id| id.name);
                    Suffix::Block(self.call_block(callee)?)
                }
                _ => return Some(cur),
            };
            let mut failed = false;
            cur = apply_suffix(self.src, cur, suffix, &mut |_| failed = true);
            if failed {
                return None;
            }
        }
    }

    fn args(&mut self) -> Option<Args<'s>> {
        let start = self.at.pos;
        self.eat(T::LParen)?;
        let base = self.args.len();
        while self.peek() != Some(T::RParen) {
            let name = if matches!(self.peek(), Some(T::Ident | T::BacktickIdent))
                && self.peek_next() == Some(T::Eq)
            {
                let n = self.ident()?;
                self.bump()?;
                Some(n)
            } else {
                None
            };
            let value = self.expr()?;
            self.args.push(Arg { name, value });
            if self.eat(T::Comma).is_none() {
                break;
            }
        }
        self.eat(T::RParen)?;
        let items = self
            .args
            .drain(base..)
            .collect::<Vec<_>>()
            .into_boxed_slice();
        Some(Args {
            items,
            span: self.span_from(start)?,
        })
    }

    fn primary(&mut self) -> Option<Expr<'s>> {
        let &Token { kind, span: s } = self.toks.get(self.at.pos)?;
        let e = match kind {
            T::Int | T::Long | T::Double => number(self.src, cspan(s), false),
            T::KwTrue => Expr {
                kind: ExprKind::Bool(true),
                span: s,
            },
            T::KwFalse => Expr {
                kind: ExprKind::Bool(false),
                span: s,
            },
            T::KwNull => Expr {
                kind: ExprKind::Null,
                span: s,
            },
            T::Str | T::RawStr => Expr {
                kind: ExprKind::Str(string_lit(self.src, kind, cspan(s))),
                span: s,
            },
            T::Ident | T::BacktickIdent => {
                let id = self.ident()?;
                return Some(Expr {
                    kind: ExprKind::Name(id),
                    span: id.span,
                });
            }
            T::Minus => {
                let after = self.advanced(self.at)?;
                let &Token { kind: nk, span: ns } = self.toks.get(after.pos)?;
                if !matches!(nk, T::Int | T::Long | T::Double) {
                    return None;
                }
                self.at = self.advanced(after)?;
                let mut e = number(self.src, cspan(ns), true);
                e.span = Span::new(s.start, ns.end);
                return Some(e);
            }
            T::LParen => {
                self.bump()?;
                let inner = self.expr()?;
                self.eat(T::RParen)?;
                return Some(inner);
            }
            _ => return None,
        };
        if matches!(e.kind, ExprKind::Error) {
            return None;
        }
        self.bump()?;
        Some(e)
    }
}
