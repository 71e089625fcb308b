//! The fast path: a hand-written recursive-descent parser for error-free input.
//!
//! It accepts exactly the language of the chumsky parser in [`crate::parser`] and builds the
//! identical tree (same nodes, same spans), but it has no error reporting and no recovery: at
//! the first thing it does not expect it gives up (`None`) and [`crate::parse`] runs the chumsky
//! parser, which reports every error and recovers. Almost every file a user compiles is
//! error-free, so this keeps the common case fast (chumsky's combinator ladder costs hundreds of
//! nanoseconds per token). The two parsers are checked against each other by a differential
//! property test (`tests/syntax/robustness.rs`).
//!
//! Recursion depth is bounded by the layout pass (at most [`crate::layout::MAX_DEPTH`] nested
//! delimiters), so this parser cannot overflow the stack.

use crate::ast::*;
use crate::layout::CSpan;
use crate::lexer::TokenKind as T;
use crate::parser::{Suffix, apply_suffix, number, sp, string_lit, text};

type Tok = (T, CSpan);

struct P<'t, 's> {
    toks: &'t [Tok],
    pos: usize,
    src: &'s str,
    // Scratch stacks: items are pushed here and moved into an exactly-sized `Vec` when their
    // list ends (a growing `Vec` per list would over-allocate large elements 2–4×).
    stmts: Vec<Stmt<'s>>,
    args: Vec<Arg<'s>>,
    links: Vec<Link<'s>>,
}

/// Parse an error-free token stream; `None` when anything would need a diagnostic.
pub(crate) fn parse<'s>(src: &'s str, toks: &[Tok]) -> Option<Vec<Stmt<'s>>> {
    let mut p = P {
        toks,
        pos: 0,
        src,
        stmts: Vec::with_capacity(64),
        args: Vec::with_capacity(16),
        links: Vec::with_capacity(16),
    };
    p.skip_seps();
    let mut items = Vec::new();
    while p.pos < toks.len() {
        let item = p.item()?;
        items.push(item);
        if !p.stmt_end() {
            return None;
        }
    }
    Some(items)
}

impl<'t, 's> P<'t, 's> {
    #[inline]
    fn peek(&self) -> Option<T> {
        self.toks.get(self.pos).map(|t| t.0)
    }

    #[inline]
    fn peek_at(&self, n: usize) -> Option<T> {
        self.toks.get(self.pos + n).map(|t| t.0)
    }

    #[inline]
    fn span_at(&self, i: usize) -> Option<CSpan> {
        self.toks.get(i).map(|t| t.1)
    }

    #[inline]
    fn eat(&mut self, kind: T) -> Option<CSpan> {
        match self.toks.get(self.pos) {
            Some(&(k, s)) if k == kind => {
                self.pos += 1;
                Some(s)
            }
            _ => None,
        }
    }

    /// Span from the token at `start` to the last consumed token.
    fn span_from(&self, start: usize) -> Option<Span> {
        let a = self.span_at(start)?;
        let b = self.span_at(self.pos.checked_sub(1)?)?;
        Some(Span::new(a.start, b.end))
    }

    fn skip_seps(&mut self) -> bool {
        let start = self.pos;
        while matches!(self.peek(), Some(T::Newline | T::Semi)) {
            self.pos += 1;
        }
        self.pos > start
    }

    /// `sep+`, or before `}` / at the end.
    fn stmt_end(&mut self) -> bool {
        self.skip_seps() || matches!(self.peek(), None | Some(T::RBrace))
    }

    fn ident(&mut self) -> Option<Ident<'s>> {
        let &(kind, s) = self.toks.get(self.pos)?;
        let id = match kind {
            T::Ident => Ident {
                name: text(self.src, s),
                span: sp(s),
                backticked: false,
            },
            T::BacktickIdent => {
                let inner = CSpan::from(s.start + 1..s.end.saturating_sub(1).max(s.start + 1));
                Ident {
                    name: text(self.src, inner),
                    span: sp(s),
                    backticked: true,
                }
            }
            _ => return None,
        };
        self.pos += 1;
        Some(id)
    }

    fn path(&mut self) -> Option<Path<'s>> {
        let start = self.pos;
        let mut segments = vec![self.ident()?];
        while self.peek() == Some(T::Dot)
            && matches!(self.peek_at(1), Some(T::Ident | T::BacktickIdent))
        {
            self.pos += 1;
            segments.push(self.ident()?);
        }
        Some(Path {
            segments,
            span: self.span_from(start)?,
        })
    }

    fn item(&mut self) -> Option<Stmt<'s>> {
        let start = self.pos;
        match self.peek()? {
            T::Annotation => self.annotated(Self::item),
            T::KwPackage => {
                self.pos += 1;
                let p = self.path()?;
                Some(Stmt {
                    kind: StmtKind::Package(p),
                    span: self.span_from(start)?,
                    annotations: Box::default(),
                })
            }
            T::KwImport => {
                self.pos += 1;
                let path = self.path()?;
                let star = self.peek() == Some(T::Dot) && self.peek_at(1) == Some(T::Star);
                if star {
                    self.pos += 2;
                }
                Some(Stmt {
                    kind: StmtKind::Import { path, star },
                    span: self.span_from(start)?,
                    annotations: Box::default(),
                })
            }
            T::KwFun => {
                self.pos += 1;
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
        let start = self.pos;
        self.eat(T::LBrace)?;
        self.skip_seps();
        let base = self.stmts.len();
        while self.peek() != Some(T::RBrace) {
            let s = if matches!(self.peek(), Some(T::KwVal | T::KwVar)) {
                let s0 = self.pos;
                self.pos += 1;
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

    fn block(&mut self) -> Option<Block<'s>> {
        let start = self.pos;
        self.eat(T::LBrace)?;
        // `{ a, b -> …}` is a lambda with parameters: the chumsky parser reports it.
        if matches!(self.peek(), Some(T::Ident | T::BacktickIdent)) {
            let mut i = self.pos + 1;
            loop {
                match self.toks.get(i).map(|t| t.0) {
                    Some(T::Arrow) => return None,
                    Some(T::Comma)
                        if matches!(
                            self.toks.get(i + 1).map(|t| t.0),
                            Some(T::Ident | T::BacktickIdent)
                        ) =>
                    {
                        i += 2
                    }
                    _ => break,
                }
            }
        }
        self.skip_seps();
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
        let start = self.pos;
        match self.peek()? {
            T::Annotation => self.annotated(Self::stmt),
            T::KwReturn => {
                self.pos += 1;
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
            T::Ident | T::BacktickIdent if self.peek_at(1) == Some(T::Eq) => {
                let target = self.ident()?;
                self.pos += 1;
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
        while let Some(&(T::Annotation, at)) = self.toks.get(self.pos) {
            let start = self.pos;
            self.pos += 1;
            let name = crate::parser::annotation_name(self.src, at);
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
                let before = self.pos;
                let a = self.range()?;
                if matches!(a.kind, ExprKind::Name(_)) {
                    self.pos = before;
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
        let links: Vec<Link<'s>> = self.links.drain(base..).collect();
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

    fn range(&mut self) -> Option<Expr<'s>> {
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
                    let start = self.pos;
                    self.pos += 1;
                    let id = self.ident()?;
                    let args = if self.peek() == Some(T::LParen) {
                        Some(self.args()?)
                    } else {
                        None
                    };
                    let s = self.span_from(start)?;
                    Suffix::Member(id, args, CSpan::from(s.start..s.end))
                }
                Some(T::LParen) => Suffix::Args(self.args()?),
                Some(T::LBrace) => Suffix::Block(self.block()?),
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
        let start = self.pos;
        self.eat(T::LParen)?;
        let base = self.args.len();
        while self.peek() != Some(T::RParen) {
            let name = if matches!(self.peek(), Some(T::Ident | T::BacktickIdent))
                && self.peek_at(1) == Some(T::Eq)
            {
                let n = self.ident()?;
                self.pos += 1;
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
        let &(kind, s) = self.toks.get(self.pos)?;
        let e = match kind {
            T::Int | T::Long | T::Double => number(self.src, s, false),
            T::KwTrue => Expr {
                kind: ExprKind::Bool(true),
                span: sp(s),
            },
            T::KwFalse => Expr {
                kind: ExprKind::Bool(false),
                span: sp(s),
            },
            T::KwNull => Expr {
                kind: ExprKind::Null,
                span: sp(s),
            },
            T::Str | T::RawStr => Expr {
                kind: ExprKind::Str(string_lit(self.src, kind, s)),
                span: sp(s),
            },
            T::Ident | T::BacktickIdent => {
                let id = self.ident()?;
                return Some(Expr {
                    kind: ExprKind::Name(id),
                    span: id.span,
                });
            }
            T::Minus => {
                let &(nk, ns) = self.toks.get(self.pos + 1)?;
                if !matches!(nk, T::Int | T::Long | T::Double) {
                    return None;
                }
                self.pos += 2;
                let mut e = number(self.src, ns, true);
                e.span = Span::new(s.start, ns.end);
                return Some(e);
            }
            T::LParen => {
                self.pos += 1;
                let inner = self.expr()?;
                self.eat(T::RParen)?;
                return Some(inner);
            }
            _ => return None,
        };
        if matches!(e.kind, ExprKind::Error) {
            return None;
        }
        self.pos += 1;
        Some(e)
    }
}
