//! Applying a postfix suffix (`.member(args)`, `(args)`, `{ block }`) to the expression before
//! it: shared by the chumsky parser and the fast path, so both build the same tree.

use hensu_diagnostics::codes;

use super::*;

/// Milliseconds per unit of a Kotlin duration property (`30.seconds`).
fn duration_unit(name: &str) -> Option<i64> {
    match name {
        "milliseconds" => Some(1),
        "seconds" => Some(1_000),
        "minutes" => Some(60_000),
        "hours" => Some(3_600_000),
        _ => None,
    }
}

pub(crate) fn apply_suffix<'s>(
    src: &'s str,
    cur: Expr<'s>,
    suffix: Suffix<'s>,
    emit: &mut dyn FnMut(PErr),
) -> Expr<'s> {
    let _ = src;
    match suffix {
        Suffix::Member(method, args, s) => {
            let span = cur.span.to(sp(s));
            match (cur.kind, args) {
                (ExprKind::Name(first), None) => expr(
                    ExprKind::Path(Path {
                        segments: Box::new([first, method]),
                        span,
                    }),
                    span,
                ),
                (ExprKind::Path(p), None) => {
                    let mut segments = p.segments.into_vec();
                    segments.push(method);
                    let segments = segments.into_boxed_slice();
                    expr(ExprKind::Path(Path { segments, span }), span)
                }
                (ExprKind::Str(mut s), Some(a))
                    if method.name == "trimIndent" && a.items.is_empty() =>
                {
                    let value = std::mem::take(&mut s.value);
                    s.value = match value {
                        Cow::Borrowed(b) => strings::trim_indent_cow(b),
                        Cow::Owned(o) => Cow::Owned(strings::trim_indent_cow(&o).into_owned()),
                    };
                    s.verbatim = false;
                    expr(ExprKind::Str(s), span)
                }
                (ExprKind::Str(mut s), Some(a))
                    if method.name == "trimMargin" && a.items.len() <= 1 =>
                {
                    let prefix = match a.items.first() {
                        None => Some("|".to_owned()),
                        Some(Arg { name, value })
                            if name.is_none_or(|n| n.name == "marginPrefix") =>
                        {
                            value.as_str().map(str::to_owned)
                        }
                        Some(_) => None,
                    };
                    match prefix {
                        Some(p) if !p.chars().all(strings::kotlin_is_whitespace) => {
                            s.value = Cow::Owned(strings::trim_margin(&s.value, &p));
                            s.verbatim = false;
                            expr(ExprKind::Str(s), span)
                        }
                        Some(_) => {
                            emit(PErr::custom(
                                CSpan::from(a.span.start..a.span.end),
                                codes::E0010,
                                "the margin prefix must not be blank",
                                "blank margin prefix",
                                "use the default `trimMargin()` (prefix `|`) or a visible prefix such as `trimMargin(\"#\")`",
                            ));
                            expr(ExprKind::Error, span)
                        }
                        None => {
                            let receiver = expr(ExprKind::Str(s), cur.span);
                            expr(
                                ExprKind::MethodCall(Box::new(MethodCall {
                                    receiver,
                                    method,
                                    args: a.items,
                                })),
                                span,
                            )
                        }
                    }
                }
                (ExprKind::Int(v) | ExprKind::Long(v), None)
                    if duration_unit(method.name).is_some() =>
                {
                    let unit = duration_unit(method.name).unwrap_or(1);
                    expr(ExprKind::Duration(v.saturating_mul(unit)), span)
                }
                (kind, Some(a)) => {
                    // `A.b(args)`: receiver `A`, method `b`.
                    let receiver = expr(kind, cur.span);
                    expr(
                        ExprKind::MethodCall(Box::new(MethodCall {
                            receiver,
                            method,
                            args: a.items,
                        })),
                        span,
                    )
                }
                (_, None) => {
                    emit(PErr::custom(
                        s,
                        codes::E0010,
                        "property access on a value is not supported",
                        "unexpected member access",
                        "only qualified names like `VarType.STRING`, durations like `30.seconds` and the string calls `.trimIndent()`/`.trimMargin()` are allowed",
                    ));
                    expr(ExprKind::Error, span)
                }
            }
        }
        Suffix::Args(a) => {
            let span = cur.span.to(a.span);
            match cur.kind {
                ExprKind::Name(callee) => expr(
                    ExprKind::Call(Box::new(Call {
                        callee,
                        args: Some(a),
                        block: None,
                    })),
                    span,
                ),
                ExprKind::Path(p) if p.segments.len() >= 2 => {
                    let mut segments = p.segments.into_vec();
                    let method = segments.pop().unwrap_or(Ident {
                        name: "",
                        span: p.span,
                    });
                    let recv_span = segments
                        .iter()
                        .fold(segments.first().map_or(p.span, |s| s.span), |acc, s| {
                            acc.to(s.span)
                        });
                    let receiver = if let [only] = segments[..] {
                        expr(ExprKind::Name(only), only.span)
                    } else {
                        expr(
                            ExprKind::Path(Path {
                                segments: segments.into_boxed_slice(),
                                span: recv_span,
                            }),
                            recv_span,
                        )
                    };
                    expr(
                        ExprKind::MethodCall(Box::new(MethodCall {
                            receiver,
                            method,
                            args: a.items,
                        })),
                        span,
                    )
                }
                ExprKind::Error => expr(ExprKind::Error, span),
                _ => {
                    emit(PErr::custom(
                        CSpan::from(a.span.start..a.span.end),
                        codes::E0010,
                        "this value cannot be called",
                        "unexpected argument list",
                        "only names can be called, e.g. `listOf(\"a\")`",
                    ));
                    expr(ExprKind::Error, span)
                }
            }
        }
        Suffix::Block(b) => {
            let span = cur.span.to(b.span);
            match cur.kind {
                ExprKind::Name(callee) => expr(
                    ExprKind::Call(Box::new(Call {
                        callee,
                        args: None,
                        block: Some(Box::new(b)),
                    })),
                    span,
                ),
                ExprKind::Call(mut c) if c.block.is_none() => {
                    c.block = Some(Box::new(b));
                    expr(ExprKind::Call(c), span)
                }
                ExprKind::Error => expr(ExprKind::Error, span),
                _ => {
                    emit(PErr::custom(
                        CSpan::from(b.span.start..b.span.start + 1),
                        codes::E0010,
                        "unexpected block",
                        "a block can only follow a call such as `node(\"x\")` or a name such as `agents`",
                        "put the statement and the block on separate lines, or remove the block",
                    ));
                    expr(ExprKind::Error, span)
                }
            }
        }
    }
}
