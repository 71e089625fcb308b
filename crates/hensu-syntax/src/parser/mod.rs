//! The parser (chumsky 0.12) over the token stream built by [`crate::layout`].
//!
//! The grammar is in `grammar/hwf.ebnf`. Errors use the cheap [`PErr`] type (bit sets, no
//! allocation on the happy path); Kotlin constructs that are not part of the language produce
//! specific diagnostics instead of a generic "expected …" message.

use std::borrow::Cow;

use chumsky::prelude::*;
use hensu_diagnostics::{Span, codes};

use crate::ast::*;
use crate::layout::CSpan;
use crate::lexer::{Number, TokenKind, classify_number};
use crate::strings;

mod error;
mod suffix;

pub(crate) use error::{Ex, In, Lbl, PErr};
pub(crate) use suffix::apply_suffix;

pub(crate) fn sp(s: CSpan) -> Span {
    Span::new(s.start, s.end)
}

pub(crate) fn text(src: &str, s: CSpan) -> &str {
    src.get(s.start as usize..s.end as usize).unwrap_or("")
}

fn expr(kind: ExprKind<'_>, span: Span) -> Expr<'_> {
    Expr { kind, span }
}

/// A string literal token → a folded string expression.
pub(crate) fn string_lit<'s>(src: &'s str, kind: TokenKind, s: CSpan) -> Box<StrExpr<'s>> {
    let (start, end) = (s.start, s.end);
    let (content, raw) = match kind {
        TokenKind::Str => (
            Span::new(start + 1, end.saturating_sub(1).max(start + 1)),
            false,
        ),
        TokenKind::UnterminatedStr => (Span::new((start + 1).min(end), end), false),
        TokenKind::RawStr => (
            Span::new(start + 3, end.saturating_sub(3).max(start + 3)),
            true,
        ),
        _ => (Span::new((start + 3).min(end), end), true),
    };
    let body = src.get(content.range()).unwrap_or("");
    let value = if raw {
        Cow::Borrowed(body)
    } else {
        strings::unescape(body)
    };
    let verbatim = matches!(value, Cow::Borrowed(_));
    Box::new(StrExpr {
        value,
        parts: StrParts::One(StrLit {
            span: Span::new(start, end),
            content,
            raw,
        }),
        verbatim,
    })
}

pub(crate) fn number<'s>(src: &'s str, s: CSpan, negate: bool) -> Expr<'s> {
    let span = sp(s);
    let kind = match classify_number(text(src, s)) {
        Ok(Number::Int(v)) => ExprKind::Int(if negate { v.wrapping_neg() } else { v }),
        Ok(Number::Long(v)) => ExprKind::Long(if negate { v.wrapping_neg() } else { v }),
        Ok(Number::Double(v)) => ExprKind::Double(if negate { -v } else { v }),
        Err(_) => ExprKind::Error,
    };
    expr(kind, span)
}

/// `a + b`: two strings fold into one, anything else is an `Add` node.
pub(crate) fn add<'s>(lhs: Expr<'s>, rhs: Expr<'s>) -> Expr<'s> {
    let span = lhs.span.to(rhs.span);
    match (lhs.kind, rhs.kind) {
        (ExprKind::Str(mut a), ExprKind::Str(b)) => {
            let mut v = a.value.into_owned();
            v.push_str(&b.value);
            a.value = Cow::Owned(v);
            a.parts.extend(b.parts);
            a.verbatim = false;
            expr(ExprKind::Str(a), span)
        }
        (l, r) => expr(
            ExprKind::Add {
                lhs: Box::new(Expr {
                    kind: l,
                    span: lhs.span,
                }),
                rhs: Box::new(Expr {
                    kind: r,
                    span: rhs.span,
                }),
            },
            span,
        ),
    }
}

/// The name of an annotation token `@Name` (the `@` is one byte).
pub(crate) fn annotation_name(src: &str, at: CSpan) -> Ident<'_> {
    let name = CSpan::from((at.start + 1).min(at.end)..at.end);
    Ident {
        name: text(src, name),
        span: sp(name),
    }
}

/// Moves annotations onto the statement they precede; the statement's span grows to cover them.
fn annotate<'s>((annotations, mut stmt): (Vec<Annotation<'s>>, Stmt<'s>)) -> Stmt<'s> {
    if let Some(first) = annotations.first() {
        stmt.span = first.span.to(stmt.span);
        stmt.annotations = annotations.into_boxed_slice();
    }
    stmt
}

pub(crate) enum Suffix<'s> {
    Member(Ident<'s>, Option<Args<'s>>, CSpan),
    Args(Args<'s>),
    Block(Block<'s>),
}

fn kotlin_keyword_error(kind: TokenKind, span: CSpan) -> PErr {
    let (msg, label, help): (&str, &str, &str) = match kind {
        TokenKind::KwVal | TokenKind::KwVar => (
            "variable declarations are not supported",
            "kotlin `val`/`var` declaration",
            "a workflow file is declarative: write values inline where they are used",
        ),
        TokenKind::KwIf | TokenKind::KwWhen => (
            "conditional expressions are not supported",
            "kotlin `if`/`when`",
            "branch between nodes with transitions: `onCondition(\"var\") { whenValue … }` or `onScore { … }`",
        ),
        TokenKind::KwFor | TokenKind::KwWhile | TokenKind::KwDo => (
            "loops are not supported",
            "kotlin loop",
            "repeat work with bounded transitions: `revise \"node\" retry N otherwise \"fallback\"`",
        ),
        TokenKind::KwFun => (
            "user functions are not supported",
            "function declaration",
            "a file declares exactly one `fun name() = workflow(\"…\") { … }` and nothing else",
        ),
        TokenKind::KwClass | TokenKind::KwObject => (
            "class and object declarations are not supported",
            "kotlin declaration",
            "a workflow file contains only the `workflow(\"…\") { … }` definition",
        ),
        TokenKind::KwImport | TokenKind::KwPackage => (
            "`import` and `package` must come before the workflow",
            "declaration inside a block",
            "move it to the top of the file",
        ),
        TokenKind::KwElse => (
            "`else` without `if`",
            "unexpected `else`",
            "conditional expressions are not supported",
        ),
        _ => (
            "`in` is a keyword",
            "kotlin keyword",
            "write the infix word with backticks: ``whenScore `in` 50.0..79.0 goto \"x\"``",
        ),
    };
    PErr::custom(span, codes::E0010, msg, label, help)
}

/// Build the parser for a whole file.
pub(crate) fn file_parser<'t, 's: 't>(
    src: &'s str,
) -> impl Parser<'t, In<'t>, SourceFile<'s>, Ex> + 't {
    use TokenKind as T;

    let sep = select! { T::Newline => (), T::Semi => () }
        .repeated()
        .at_least(1)
        .ignored()
        .boxed();

    let ident = select! {
        T::Ident = e => Ident { name: text(src, e.span()), span: sp(e.span()) },
        T::BacktickIdent = e => {
            let s: CSpan = e.span();
            let inner = CSpan::from(s.start + 1..s.end.saturating_sub(1).max(s.start + 1));
            Ident { name: text(src, inner), span: sp(s) }
        },
    }
    .labelled(Lbl::Identifier)
    .boxed();

    // A balanced group or a single non-delimiter token, for skipping.
    let balanced = recursive(|bal| {
        let inner = bal.clone().repeated();
        // A skipped `{ … }` may hold several statements (a Kotlin `when` with arms on lines of
        // their own): its separators are part of the group, not the end of the skipped one.
        let block_inner =
            choice((bal, just(T::Newline).ignored(), just(T::Semi).ignored())).repeated();
        choice((
            block_inner.delimited_by(just(T::LBrace), just(T::RBrace)),
            inner.clone().delimited_by(just(T::LParen), just(T::RParen)),
            inner.delimited_by(just(T::LBracket), just(T::RBracket)),
            none_of([
                T::LBrace,
                T::RBrace,
                T::LParen,
                T::RParen,
                T::LBracket,
                T::RBracket,
                T::Newline,
                T::Semi,
            ])
            .ignored(),
        ))
    })
    .boxed();
    // Everything up to the end of the statement (newline/`;` at this depth, or the closing `}`).
    let skip_stmt = balanced
        .clone()
        .repeated()
        .at_least(1)
        .then_ignore(sep.clone().or_not())
        .boxed();

    let kotlin_kw = select! {
        T::KwVal = e => (T::KwVal, e.span()), T::KwVar = e => (T::KwVar, e.span()),
        T::KwIf = e => (T::KwIf, e.span()), T::KwWhen = e => (T::KwWhen, e.span()),
        T::KwFor = e => (T::KwFor, e.span()), T::KwWhile = e => (T::KwWhile, e.span()),
        T::KwDo = e => (T::KwDo, e.span()), T::KwFun = e => (T::KwFun, e.span()),
        T::KwClass = e => (T::KwClass, e.span()), T::KwObject = e => (T::KwObject, e.span()),
        T::KwImport = e => (T::KwImport, e.span()), T::KwPackage = e => (T::KwPackage, e.span()),
        T::KwElse = e => (T::KwElse, e.span()), T::KwIn = e => (T::KwIn, e.span()),
    }
    .try_map(|(k, s), _| Err::<Expr<'s>, _>(kotlin_keyword_error(k, s)))
    .boxed();

    // ---- expressions -------------------------------------------------------------------------

    // The expression parser. Blocks are built inside the `recursive` closure (they contain
    // expressions and expressions contain blocks); `recursive` holds only a weak reference to
    // itself, so the parser graph is freed after each parse (a `declare`/`define` pair with
    // strong clones would leak it through an `Rc` cycle).
    let expr = recursive(|expr_p| {
        let expr_p = expr_p.boxed();
        let (_, _, block_p, _) = statements(
            src,
            expr_p.clone(),
            sep.clone(),
            ident.clone(),
            kotlin_kw.clone(),
            skip_stmt.clone(),
            balanced.clone(),
        );
        let arg = ident
            .clone()
            .then_ignore(just(T::Eq))
            .or_not()
            .then(expr_p.clone())
            .map(|(name, value)| Arg { name, value });
        let args = arg
            .separated_by(just(T::Comma))
            .allow_trailing()
            .collect::<Vec<_>>()
            .delimited_by(just(T::LParen), just(T::RParen))
            .map_with(|items: Vec<_>, e| Args {
                items: items.into_boxed_slice(),
                span: sp(e.span()),
            })
            .labelled(Lbl::CallArgs)
            .as_context()
            .recover_with(via_parser(
                just(T::LParen)
                    .then(balanced.clone().repeated())
                    .then(just(T::RParen))
                    .map_with(|_, e| Args {
                        items: Box::default(),
                        span: sp(e.span()),
                    }),
            ))
            .boxed();

        let literal = select! {
            T::Int = e => number(src, e.span(), false),
            T::Long = e => number(src, e.span(), false),
            T::Double = e => number(src, e.span(), false),
            T::BadNumber = e => expr(ExprKind::Error, sp(e.span())),
            T::KwTrue = e => expr(ExprKind::Bool(true), sp(e.span())),
            T::KwFalse = e => expr(ExprKind::Bool(false), sp(e.span())),
            T::KwNull = e => expr(ExprKind::Null, sp(e.span())),
            T::Error = e => expr(ExprKind::Error, sp(e.span())),
            T::Str = e => expr(ExprKind::Str(string_lit(src, T::Str, e.span())), sp(e.span())),
            T::RawStr = e => expr(ExprKind::Str(string_lit(src, T::RawStr, e.span())), sp(e.span())),
            T::UnterminatedStr = e => expr(ExprKind::Str(string_lit(src, T::UnterminatedStr, e.span())), sp(e.span())),
            T::UnterminatedRawStr = e => expr(ExprKind::Str(string_lit(src, T::UnterminatedRawStr, e.span())), sp(e.span())),
        };

        let negative = just(T::Minus)
            .ignore_then(
                select! {
                    T::Int = e => e.span(),
                    T::Long = e => e.span(),
                    T::Double = e => e.span(),
                }
                .or_not(),
            )
            .try_map_with(|num, e| {
                let whole: CSpan = e.span();
                match num {
                    Some(n) => {
                        let mut ex = number(src, n, true);
                        ex.span = sp(whole);
                        Ok(ex)
                    }
                    None => Err(PErr::custom(
                        whole,
                        codes::E0010,
                        "unary minus applies only to numbers",
                        "expected a number after `-`",
                        "write a negative number like `-1` or `-0.5`",
                    )),
                }
            });

        let paren = expr_p
            .clone()
            .delimited_by(just(T::LParen), just(T::RParen));

        let primary = choice((
            literal,
            negative,
            ident.clone().map(|id| expr(ExprKind::Name(id), id.span)),
            paren,
            kotlin_kw.clone(),
        ))
        .labelled(Lbl::Expression)
        .boxed();

        let suffix = choice((
            just(T::Dot)
                .ignore_then(ident.clone())
                .then(args.clone().or_not())
                .map_with(|(id, a), e| Suffix::Member(id, a, e.span())),
            args.clone().map(Suffix::Args),
            block_p.clone().map(Suffix::Block),
        ));

        let postfix = primary
            .then(suffix.repeated().collect::<Vec<_>>())
            .validate(move |(head, suffixes), _, emitter| {
                let mut cur = head;
                for s in suffixes {
                    cur = apply_suffix(src, cur, s, &mut |err| emitter.emit(err));
                }
                cur
            })
            .boxed();

        let additive = postfix
            .clone()
            .foldl(just(T::Plus).ignore_then(postfix.clone()).repeated(), add)
            .boxed();

        let range = additive
            .clone()
            .then(just(T::DotDot).ignore_then(additive).or_not())
            .map(|(start, end)| match end {
                None => start,
                Some(end) => {
                    let span = start.span.to(end.span);
                    expr(
                        ExprKind::Range {
                            start: Box::new(start),
                            end: Box::new(end),
                        },
                        span,
                    )
                }
            })
            .boxed();

        // A chain argument: anything but a bare simple name (a bare name starts the next link).
        let link_arg = range
            .clone()
            .filter(|e: &Expr<'_>| !matches!(e.kind, ExprKind::Name(_)));
        let link_word =
            ident.clone().or(select! { T::KwIn = e => e.span() }
                .try_map(|s, _| Err(kotlin_keyword_error(T::KwIn, s))));
        let link = link_word
            .then(link_arg.or_not())
            .map(|(word, arg)| Link { word, arg });

        range
            .then(link.repeated().collect::<Vec<_>>())
            .map(|(head, links)| {
                if links.is_empty() {
                    head
                } else {
                    let end = links.last().map_or(head.span, |l| {
                        l.arg.as_ref().map_or(l.word.span, |a| a.span)
                    });
                    let span = head.span.to(end);
                    expr(
                        ExprKind::Chain {
                            head: Box::new(head),
                            links: links.into_boxed_slice(),
                        },
                        span,
                    )
                }
            })
            .boxed()
    })
    .boxed();
    let expr_p = expr.clone();
    let (stmt_end, stmt_line, _, annotations) = statements(
        src,
        expr.clone(),
        sep.clone(),
        ident.clone(),
        kotlin_kw.clone(),
        skip_stmt.clone(),
        balanced.clone(),
    );

    // ---- file level ----------------------------------------------------------------------------

    let path = ident
        .clone()
        .separated_by(just(T::Dot))
        .at_least(1)
        .collect::<Vec<_>>()
        .map_with(|segments: Vec<_>, e| Path {
            segments: segments.into_boxed_slice(),
            span: sp(e.span()),
        })
        .boxed();

    let package = just(T::KwPackage)
        .ignore_then(path.clone())
        .map_with(|p, e| Stmt {
            kind: StmtKind::Package(p),
            span: sp(e.span()),
            annotations: Box::default(),
        })
        .labelled(Lbl::Package)
        .as_context();
    let import = just(T::KwImport)
        .ignore_then(path.clone())
        .then(just(T::Dot).then(just(T::Star)).or_not())
        .map_with(|(path, star), e| Stmt {
            kind: StmtKind::Import {
                path,
                star: star.is_some(),
            },
            span: sp(e.span()),
            annotations: Box::default(),
        })
        .labelled(Lbl::Import)
        .as_context();

    // In a block-bodied `fun`, `val w = workflow(…) { … }` is accepted (upstream runs it); the
    // binding is dropped and the value kept as an expression statement.
    let fun_val = select! { T::KwVal => (), T::KwVar => () }
        .ignore_then(ident.clone())
        .ignore_then(just(T::Colon).ignore_then(path.clone()).or_not())
        .ignore_then(just(T::Eq))
        .ignore_then(expr_p.clone())
        .map_with(|v, e| Stmt {
            kind: StmtKind::Expr(v),
            span: sp(e.span()),
            annotations: Box::default(),
        });
    let fun_stmt_line = fun_val
        .then_ignore(stmt_end.clone())
        .or(stmt_line.clone())
        .recover_with(via_parser(skip_stmt.clone().map_with(|_, e| Stmt {
            kind: StmtKind::Error,
            span: sp(e.span()),
            annotations: Box::default(),
        })));
    let fun_block = just(T::LBrace)
        .ignore_then(sep.clone().or_not())
        .ignore_then(fun_stmt_line.repeated().collect::<Vec<_>>())
        .then_ignore(just(T::RBrace))
        .map_with(|stmts, e| Block {
            stmts,
            span: sp(e.span()),
        });

    let params = just(T::LParen)
        .ignore_then(
            balanced
                .clone()
                .repeated()
                .count()
                .map_with(|n, e| (n, e.span())),
        )
        .then_ignore(just(T::RParen))
        .validate(|(n, s): (usize, CSpan), _, emitter| {
            if n > 0 {
                emitter.emit(PErr::custom(
                    s,
                    codes::E0010,
                    "the workflow function takes no parameters",
                    "parameters are not supported",
                    "declare it as `fun name() = workflow(\"…\") { … }`",
                ));
            }
        });

    let fun = just(T::KwFun)
        .ignore_then(ident.clone())
        .then_ignore(params)
        .then_ignore(just(T::Colon).ignore_then(path).or_not())
        .then(choice((
            just(T::Eq).ignore_then(expr_p.clone()).map(FunBody::Expr),
            fun_block.map(FunBody::Block),
        )))
        .map_with(|(name, body), e| Stmt {
            kind: StmtKind::Fun { name, body },
            span: sp(e.span()),
            annotations: Box::default(),
        })
        .labelled(Lbl::FunDecl);

    let item_line = annotations
        .then(choice((package, import, fun)))
        .map(annotate)
        .then_ignore(stmt_end)
        .or(stmt_line)
        .recover_with(via_parser(skip_stmt.map_with(|_, e| Stmt {
            kind: StmtKind::Error,
            span: sp(e.span()),
            annotations: Box::default(),
        })));

    sep.or_not()
        .ignore_then(item_line.repeated().collect::<Vec<_>>())
        .then_ignore(end())
        .map_with(|items, e| SourceFile {
            items,
            comments: Vec::new(),
            span: sp(e.span()),
        })
}

type Bx<'t, O> = chumsky::Boxed<'t, 't, In<'t>, O, Ex>;

/// Statements and blocks over a given expression parser: `(stmt_end, stmt_line, block,
/// annotations)`.
#[allow(clippy::type_complexity)] // the four parsers of one grammar layer, named at the call
fn statements<'t, 's: 't>(
    src: &'s str,
    expr_p: Bx<'t, Expr<'s>>,
    sep: Bx<'t, ()>,
    ident: Bx<'t, Ident<'s>>,
    kotlin_kw: Bx<'t, Expr<'s>>,
    skip_stmt: Bx<'t, ()>,
    balanced: Bx<'t, ()>,
) -> (
    Bx<'t, ()>,
    Bx<'t, Stmt<'s>>,
    Bx<'t, Block<'s>>,
    Bx<'t, Vec<Annotation<'s>>>,
) {
    use TokenKind as T;
    // ---- statements and blocks ---------------------------------------------------------------

    // `@Suppress("W0307")` before a statement, each optionally followed by line breaks.
    let annotation_args = ident
        .clone()
        .then_ignore(just(T::Eq))
        .or_not()
        .then(expr_p.clone())
        .map(|(name, value)| Arg { name, value })
        .separated_by(just(T::Comma))
        .allow_trailing()
        .collect::<Vec<_>>()
        .delimited_by(just(T::LParen), just(T::RParen))
        .map_with(|items: Vec<_>, e| Args {
            items: items.into_boxed_slice(),
            span: sp(e.span()),
        })
        .labelled(Lbl::CallArgs);
    let annotation = select! { T::Annotation = e => e.span() }
        .then(annotation_args.or_not())
        .map_with(move |(at, args), e| Annotation {
            name: annotation_name(src, at),
            args,
            span: sp(e.span()),
        })
        .then_ignore(just(T::Newline).repeated())
        .boxed();
    let annotations = annotation.clone().repeated().collect::<Vec<_>>().boxed();
    // Annotations with nothing after them in their block: one specific error, not "expected
    // an expression".
    let dangling = annotation
        .repeated()
        .at_least(1)
        .then_ignore(just(T::RBrace).rewind())
        .validate(|_, e, emitter| {
            let span: CSpan = e.span();
            emitter.emit(PErr::custom(
                span,
                codes::E0010,
                "an annotation must be followed by a statement",
                "annotates nothing",
                "put it on the line before the statement it applies to, such as a `node(…)`",
            ));
            Stmt {
                kind: StmtKind::Error,
                span: sp(span),
                annotations: Box::default(),
            }
        });

    let stmt_end = choice((sep.clone(), just(T::RBrace).rewind().ignored(), end()))
        .labelled(Lbl::StatementEnd)
        .boxed();

    // `override node("x") { … }`: a Kotlin modifier before a declaration. Read as an infix
    // chain, the block would follow a parenthesized string (a misleading "unexpected block"),
    // so the whole statement is one error at the modifier, with the code the lowering gives the
    // same modifier before a call without a block (E0101). The fast path gives up on this shape.
    let modified = select! { T::Ident = e => e.span() }
        .filter(move |s: &CSpan| crate::KOTLIN_MODIFIERS.contains(&text(src, *s)))
        .then_ignore(ident.clone())
        .then_ignore(
            just(T::LParen)
                .rewind()
                .ignore_then(balanced.clone())
                .or_not(),
        )
        .then_ignore(just(T::LBrace).rewind().ignore_then(balanced))
        .validate(move |at: CSpan, e, emitter| {
            let word = text(src, at);
            emitter.emit(PErr::custom(
                at,
                codes::E0101,
                format!("unknown statement `{word}`: a Kotlin modifier"),
                "Kotlin modifier",
                &crate::modifier_help(word),
            ));
            Stmt {
                kind: StmtKind::Error,
                span: sp(e.span()),
                annotations: Box::default(),
            }
        });

    let stmt = annotations
        .clone()
        .then(choice((
            modified,
            kotlin_kw.clone().map(|e| Stmt {
                span: e.span,
                kind: StmtKind::Error,
                annotations: Box::default(),
            }),
            just(T::KwReturn)
                .ignore_then(expr_p.clone().or_not())
                .map_with(|v, e| Stmt {
                    kind: StmtKind::Return(v),
                    span: sp(e.span()),
                    annotations: Box::default(),
                }),
            ident
                .clone()
                .then_ignore(just(T::Eq))
                .then(expr_p.clone())
                .map_with(|(target, value), e| Stmt {
                    kind: StmtKind::Assign { target, value },
                    span: sp(e.span()),
                    annotations: Box::default(),
                }),
            expr_p.clone().map(|e| Stmt {
                span: e.span,
                kind: StmtKind::Expr(e),
                annotations: Box::default(),
            }),
        )))
        .map(annotate)
        .boxed();

    let stmt_line = stmt
        .clone()
        .then_ignore(stmt_end.clone())
        .or(dangling)
        .recover_with(via_parser(skip_stmt.clone().map_with(|_, e| Stmt {
            kind: StmtKind::Error,
            span: sp(e.span()),
            annotations: Box::default(),
        })))
        .boxed();

    // `{ x, y -> … }`: a lambda with parameters, reported and then parsed as a block.
    let lambda_params = ident
        .clone()
        .separated_by(just(T::Comma))
        .at_least(1)
        .then(just(T::Arrow))
        .map_with(|_, e| e.span())
        .validate(|s: CSpan, _, emitter| {
            emitter.emit(PErr::custom(
                s,
                codes::E0010,
                "lambdas with parameters are not supported",
                "lambda parameters",
                "blocks after a call take no parameters: `node(\"x\") { … }`",
            ))
        });

    let block = just(T::LBrace)
        .ignore_then(lambda_params.or_not())
        .ignore_then(sep.clone().or_not())
        .ignore_then(stmt_line.clone().repeated().collect::<Vec<_>>())
        .then_ignore(just(T::RBrace))
        .map_with(|stmts, e| Block {
            stmts,
            span: sp(e.span()),
        })
        .labelled(Lbl::Block)
        .boxed();
    (stmt_end, stmt_line, block, annotations)
}
