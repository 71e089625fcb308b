//! "Suppress W0313 on `agent("idle")`": for a warning, write `@Suppress("W0313")` before the
//! declaration that holds it (docs/language.md, *Suppressing a warning*) — the innermost
//! `name("id") …` call statement (node, branch, agent, `variable(…)`, compensation, …), else the
//! workflow's `fun`. When that statement already has a `@Suppress(…)`, the code is added to it
//! (Kotlin's `Suppress` is not repeatable, so a second annotation would not compile there).

use hensu_diagnostics::{Diagnostic, Severity, Span};
use hensu_syntax::ast::{ExprKind, FunBody, Stmt, StmtKind};
use lsp_types::{CodeAction, TextEdit, Uri};

use super::fixes::{edit_action, line_break, line_of};
use crate::analysis::Analysis;

pub(super) fn suppress_warning(uri: &Uri, a: &Analysis, d: &Diagnostic) -> Option<CodeAction> {
    if d.severity != Severity::Warning || d.primary.file != a.file {
        return None;
    }
    let parsed = hensu_syntax::parse(&a.text);
    let span = d.primary.span;
    let stmt = target(&parsed.file.items, span, None)?;
    let code = d.code;
    let existing = stmt
        .annotations
        .iter()
        .find(|an| an.name.name == "Suppress")
        .and_then(|an| an.args.as_ref());
    let edit = match existing {
        Some(args) => {
            let close = args.span.end.checked_sub(1)?;
            let sep = if args.items.is_empty() { "" } else { ", " };
            TextEdit {
                range: a.range(Span::new(close, close)),
                new_text: format!("{sep}\"{code}\""),
            }
        }
        None => {
            let (line_start, indent) = line_of(&a.text, stmt.span.start);
            let own_line = a.text[line_start as usize..stmt.span.start as usize]
                .chars()
                .all(|c| c == ' ' || c == '\t');
            let new_text = if own_line {
                format!("@Suppress(\"{code}\"){}{indent}", line_break(&a.text))
            } else {
                format!("@Suppress(\"{code}\") ")
            };
            TextEdit {
                range: a.range(Span::new(stmt.span.start, stmt.span.start)),
                new_text,
            }
        }
    };
    let what = a
        .text
        .get(stmt.span.start as usize..stmt.span.end as usize)?;
    let head = what
        .lines()
        .map(str::trim)
        .find(|l| !l.starts_with('@'))
        .unwrap_or("");
    let head = head.split(" {").next().unwrap_or(head);
    Some(edit_action(
        format!("Suppress {code} on `{head}`"),
        uri,
        edit,
    ))
}

/// The innermost statement holding `span` that names a declaration: a call with arguments
/// (`node("x") { … }`, `variable("x", …)`), or a `fun` (the workflow); `best` is the one found
/// outside.
fn target<'t, 's>(
    stmts: &'t [Stmt<'s>],
    span: Span,
    best: Option<&'t Stmt<'s>>,
) -> Option<&'t Stmt<'s>> {
    let Some(stmt) = stmts
        .iter()
        .find(|s| s.span.start <= span.start && span.end <= s.span.end)
    else {
        return best;
    };
    match &stmt.kind {
        StmtKind::Fun { body, .. } => match body {
            FunBody::Block(b) => target(&b.stmts, span, Some(stmt)),
            FunBody::Expr(e) => match &e.kind {
                ExprKind::Call(c) => match &c.block {
                    Some(b) => target(&b.stmts, span, Some(stmt)),
                    None => Some(stmt),
                },
                _ => Some(stmt),
            },
        },
        StmtKind::Expr(e) => match &e.kind {
            ExprKind::Call(c) => {
                let declares = c.args.as_ref().is_some_and(|a| !a.items.is_empty());
                let here = if declares { Some(stmt) } else { best };
                match &c.block {
                    Some(b) => target(&b.stmts, span, here),
                    None => here,
                }
            }
            _ => best,
        },
        _ => best,
    }
}
