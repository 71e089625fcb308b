//! The safety net: the formatted text must parse, mean the same (the syntax tree modulo spans,
//! with the qualified enum constants written out) and keep every comment.

use std::collections::HashMap;
use std::fmt::Write as _;

use hensu_syntax::ast::{
    Args, Block, Expr, ExprKind, FunBody, Ident, MethodCall, SourceFile, Stmt, StmtKind,
};

use crate::FormatError;
use crate::collect::Info;

pub(crate) fn verify(
    src: &str,
    file: &SourceFile<'_>,
    info: &Info<'_, '_>,
    out: &str,
) -> Result<(), FormatError> {
    let reparsed = hensu_syntax::parse(out);
    if let Some(d) = reparsed.diagnostics.iter().find(|d| d.is_error()) {
        return Err(FormatError::Internal(format!(
            "the formatted text does not parse: {} at byte {}",
            d.message, d.primary.span.start
        )));
    }
    let before = fingerprint(file, &info.qualify);
    let after = fingerprint(&reparsed.file, &HashMap::new());
    if before != after {
        let line = before
            .lines()
            .zip(after.lines())
            .find(|(a, b)| a != b)
            .map(|(a, b)| format!(": `{a}` became `{b}`"))
            .unwrap_or_default();
        return Err(FormatError::Internal(format!(
            "the formatted text means something else{line}"
        )));
    }
    let comments_before = comment_texts(src, file);
    let comments_after = comment_texts(out, &reparsed.file);
    if comments_before != comments_after {
        return Err(FormatError::Internal(format!(
            "comments changed ({} before, {} after)",
            comments_before.len(),
            comments_after.len()
        )));
    }
    Ok(())
}

/// Every comment's text without whitespace (the formatter may re-indent block comments).
pub(crate) fn comment_texts(src: &str, file: &SourceFile<'_>) -> Vec<String> {
    file.comments
        .iter()
        .map(|c| {
            src.get(c.span.range())
                .unwrap_or("")
                .chars()
                .filter(|ch| !ch.is_whitespace())
                .collect()
        })
        .collect()
}

enum Work<'a, 's> {
    /// A statement with its annotations and the line break after it.
    Stmt(&'a Stmt<'s>),
    /// The statement itself.
    Body(&'a Stmt<'s>),
    Expr(&'a Expr<'s>),
    Block(&'a Block<'s>),
    Args(&'a [hensu_syntax::ast::Arg<'s>]),
    Text(&'static str),
    Owned(String),
}

fn ident(out: &mut String, id: &Ident<'_>) {
    if id.backticked() {
        let _ = write!(out, "`{}`", id.name);
    } else {
        out.push_str(id.name);
    }
}

fn path(out: &mut String, segments: &[Ident<'_>]) {
    for (i, s) in segments.iter().enumerate() {
        if i > 0 {
            out.push('.');
        }
        ident(out, s);
    }
}

/// A span-free rendering of the tree, one statement per line (iterative: no recursion).
pub(crate) fn fingerprint(file: &SourceFile<'_>, qualify: &HashMap<u32, &'static str>) -> String {
    let mut out = String::new();
    let mut stack: Vec<Work<'_, '_>> = file.items.iter().rev().map(Work::Stmt).collect();
    while let Some(work) = stack.pop() {
        match work {
            Work::Text(t) => out.push_str(t),
            Work::Owned(t) => out.push_str(&t),
            Work::Block(b) => {
                out.push_str("{\n");
                stack.push(Work::Text("}"));
                stack.extend(b.stmts.iter().rev().map(Work::Stmt));
            }
            Work::Args(items) => {
                out.push('(');
                stack.push(Work::Text(")"));
                for (i, a) in items.iter().enumerate().rev() {
                    stack.push(Work::Expr(&a.value));
                    if let Some(n) = &a.name {
                        // Pushed after the value so that it is written before it.
                        let mut s = String::new();
                        ident(&mut s, n);
                        s.push('=');
                        stack.push(Work::Owned(s));
                    }
                    if i > 0 {
                        stack.push(Work::Text(", "));
                    }
                }
            }
            Work::Stmt(s) => {
                stack.push(Work::Text("\n"));
                stack.push(Work::Body(s));
                for a in s.annotations.iter().rev() {
                    stack.push(Work::Text(") "));
                    if let Some(Args { items, .. }) = &a.args {
                        stack.push(Work::Args(items));
                    }
                    let mut name = String::from("(@");
                    ident(&mut name, &a.name);
                    stack.push(Work::Owned(name));
                }
            }
            Work::Body(s) => match &s.kind {
                StmtKind::Assign { target, value } => {
                    out.push_str("(= ");
                    ident(&mut out, target);
                    out.push(' ');
                    stack.push(Work::Text(")"));
                    stack.push(Work::Expr(value));
                }
                StmtKind::Expr(e) => stack.push(Work::Expr(e)),
                StmtKind::Package(p) => {
                    out.push_str("(package ");
                    path(&mut out, &p.segments);
                    out.push(')');
                }
                StmtKind::Import { path: p, star } => {
                    out.push_str("(import ");
                    path(&mut out, &p.segments);
                    out.push_str(if *star { ".*)" } else { ")" });
                }
                StmtKind::Fun { name, body } => {
                    out.push_str("(fun ");
                    ident(&mut out, name);
                    stack.push(Work::Text(")"));
                    match body {
                        FunBody::Expr(e) => {
                            out.push_str(" = ");
                            stack.push(Work::Expr(e));
                        }
                        FunBody::Block(b) => {
                            out.push(' ');
                            stack.push(Work::Block(b));
                        }
                    }
                }
                StmtKind::Return(e) => {
                    out.push_str("(return");
                    stack.push(Work::Text(")"));
                    if let Some(e) = e {
                        out.push(' ');
                        stack.push(Work::Expr(e));
                    }
                }
                StmtKind::Error => out.push_str("(error)"),
            },
            Work::Expr(e) => match &e.kind {
                ExprKind::Name(id) => {
                    if let Some(ty) = qualify.get(&id.span.start) {
                        out.push_str(ty);
                        out.push('.');
                    }
                    ident(&mut out, id);
                }
                ExprKind::Path(p) => path(&mut out, &p.segments),
                ExprKind::Str(s) => {
                    let _ = write!(out, "{:?}", s.value.as_ref());
                }
                ExprKind::Int(v) => {
                    let _ = write!(out, "{v}i");
                }
                ExprKind::Long(v) => {
                    let _ = write!(out, "{v}L");
                }
                ExprKind::Duration(ms) => {
                    let _ = write!(out, "{ms}ms");
                }
                ExprKind::Double(v) => {
                    let _ = write!(out, "{v:?}d");
                }
                ExprKind::Bool(v) => {
                    let _ = write!(out, "{v}");
                }
                ExprKind::Null => out.push_str("null"),
                ExprKind::Call(c) => {
                    out.push_str("(call ");
                    ident(&mut out, &c.callee);
                    stack.push(Work::Text(")"));
                    if let Some(b) = &c.block {
                        stack.push(Work::Block(b));
                        stack.push(Work::Text(" "));
                    }
                    if let Some(Args { items, .. }) = &c.args {
                        stack.push(Work::Args(items));
                        stack.push(Work::Text(" "));
                    }
                }
                ExprKind::MethodCall(call) => {
                    let MethodCall {
                        receiver,
                        method,
                        args,
                    } = &**call;
                    out.push_str("(method ");
                    let mut m = String::from(" ");
                    ident(&mut m, method);
                    m.push(' ');
                    stack.push(Work::Text(")"));
                    stack.push(Work::Args(args));
                    stack.push(Work::Owned(m));
                    stack.push(Work::Expr(receiver));
                }
                ExprKind::Chain { head, links } => {
                    out.push_str("(chain ");
                    stack.push(Work::Text(")"));
                    for l in links.iter().rev() {
                        stack.push(Work::Text("]"));
                        if let Some(a) = &l.arg {
                            stack.push(Work::Expr(a));
                            stack.push(Work::Text(" "));
                        }
                        let mut w = String::from(" [");
                        ident(&mut w, &l.word);
                        stack.push(Work::Owned(w));
                    }
                    stack.push(Work::Expr(head));
                }
                ExprKind::Range { start, end } => {
                    out.push_str("(.. ");
                    stack.push(Work::Text(")"));
                    stack.push(Work::Expr(end));
                    stack.push(Work::Text(" "));
                    stack.push(Work::Expr(start));
                }
                ExprKind::Add { lhs, rhs } => {
                    out.push_str("(+ ");
                    stack.push(Work::Text(")"));
                    stack.push(Work::Expr(rhs));
                    stack.push(Work::Text(" "));
                    stack.push(Work::Expr(lhs));
                }
                ExprKind::Error => out.push_str("(error)"),
            },
        }
    }
    out
}
