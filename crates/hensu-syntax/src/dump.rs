//! A compact, stable s-expression rendering of a syntax tree (for snapshot tests and debugging).

use std::fmt::Write as _;

use crate::ast::*;

/// Render a file as an indented s-expression, one statement per line.
pub fn dump(file: &SourceFile<'_>) -> String {
    let mut out = String::new();
    for item in &file.items {
        stmt(&mut out, item, 0);
    }
    if !file.comments.is_empty() {
        out.push_str("comments:");
        for c in &file.comments {
            let kind = match c.kind {
                CommentKind::Line => "line",
                CommentKind::Block => "block",
                CommentKind::Doc => "doc",
            };
            let _ = write!(out, " {kind}@{}..{}", c.span.start, c.span.end);
        }
        out.push('\n');
    }
    out
}

fn indent(out: &mut String, depth: usize) {
    for _ in 0..depth {
        out.push_str("  ");
    }
}

fn stmt(out: &mut String, s: &Stmt<'_>, depth: usize) {
    indent(out, depth);
    for a in &s.annotations {
        let _ = write!(out, "(@{}", ident(&a.name));
        if let Some(a) = &a.args {
            out.push(' ');
            args(out, &a.items, depth);
        }
        out.push_str(") ");
    }
    match &s.kind {
        StmtKind::Assign { target, value } => {
            let _ = write!(out, "(= {} ", ident(target));
            expr(out, value, depth);
            out.push(')');
        }
        StmtKind::Expr(e) => expr(out, e, depth),
        StmtKind::Package(p) => {
            let _ = write!(out, "(package {})", path(p));
        }
        StmtKind::Import { path: p, star } => {
            let _ = write!(out, "(import {}{})", path(p), if *star { ".*" } else { "" });
        }
        StmtKind::Fun { name, body } => {
            let _ = write!(out, "(fun {} ", ident(name));
            match body {
                FunBody::Expr(e) => {
                    out.push_str("= ");
                    expr(out, e, depth);
                }
                FunBody::Block(b) => block(out, b, depth),
            }
            out.push(')');
        }
        StmtKind::Return(e) => {
            out.push_str("(return");
            if let Some(e) = e {
                out.push(' ');
                expr(out, e, depth);
            }
            out.push(')');
        }
        StmtKind::Error => out.push_str("(error)"),
    }
    out.push('\n');
}

fn block(out: &mut String, b: &Block<'_>, depth: usize) {
    if b.stmts.is_empty() {
        out.push_str("{}");
        return;
    }
    out.push_str("{\n");
    for s in &b.stmts {
        stmt(out, s, depth + 1);
    }
    indent(out, depth);
    out.push('}');
}

fn ident(id: &Ident<'_>) -> String {
    if id.backticked() {
        format!("`{}`", id.name)
    } else {
        id.name.to_owned()
    }
}

fn path(p: &Path<'_>) -> String {
    p.segments.iter().map(ident).collect::<Vec<_>>().join(".")
}

fn args(out: &mut String, items: &[Arg<'_>], depth: usize) {
    out.push('(');
    for (i, a) in items.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        if let Some(n) = &a.name {
            let _ = write!(out, "{}=", ident(n));
        }
        expr(out, &a.value, depth);
    }
    out.push(')');
}

fn expr(out: &mut String, e: &Expr<'_>, depth: usize) {
    match &e.kind {
        ExprKind::Name(id) => out.push_str(&ident(id)),
        ExprKind::Path(p) => out.push_str(&path(p)),
        ExprKind::Str(s) => {
            let _ = write!(out, "{:?}", s.value.as_ref());
        }
        ExprKind::Int(v) => {
            let _ = write!(out, "{v}");
        }
        ExprKind::Long(v) => {
            let _ = write!(out, "{v}L");
        }
        ExprKind::Duration(ms) => {
            let _ = write!(out, "{ms}ms");
        }
        ExprKind::Double(v) => {
            let _ = write!(out, "{v:?}");
        }
        ExprKind::Bool(v) => {
            let _ = write!(out, "{v}");
        }
        ExprKind::Null => out.push_str("null"),
        ExprKind::Call(c) => {
            let _ = write!(out, "(call {}", ident(&c.callee));
            if let Some(a) = &c.args {
                out.push(' ');
                args(out, &a.items, depth);
            }
            if let Some(b) = &c.block {
                out.push(' ');
                block(out, b, depth);
            }
            out.push(')');
        }
        ExprKind::MethodCall(m) => {
            out.push_str("(method ");
            expr(out, &m.receiver, depth);
            let _ = write!(out, " {} ", ident(&m.method));
            args(out, &m.args, depth);
            out.push(')');
        }
        ExprKind::Chain { head, links } => {
            out.push_str("(chain ");
            expr(out, head, depth);
            for l in links.iter() {
                let _ = write!(out, " [{}", ident(&l.word));
                if let Some(a) = &l.arg {
                    out.push(' ');
                    expr(out, a, depth);
                }
                out.push(']');
            }
            out.push(')');
        }
        ExprKind::Range { start, end } => {
            out.push_str("(.. ");
            expr(out, start, depth);
            out.push(' ');
            expr(out, end, depth);
            out.push(')');
        }
        ExprKind::Add { lhs, rhs } => {
            out.push_str("(+ ");
            expr(out, lhs, depth);
            out.push(' ');
            expr(out, rhs, depth);
            out.push(')');
        }
        ExprKind::Error => out.push_str("(error)"),
    }
}
