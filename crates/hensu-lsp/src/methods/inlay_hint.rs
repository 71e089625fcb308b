//! `textDocument/inlayHint`, where they help an author:
//! * after a node id a transition goes to (`goto`, `revise`, `otherwise`, `start at`, fork
//!   `targets`, join `await`): the target's kind (`: end node`);
//! * after a state variable used in `writes`/`yields`/`imports`/`exports`/`onCondition`: its
//!   value type (`: STRING`);
//! * at the end of a `revise` arm: the budget as the engine resolves it — how many revisions,
//!   counted per which trigger, then where the flow escalates (docs/language.md, *Revise*).

use hensu_diagnostics::Span;
use hensu_sema::schema::BlockKind;
use hensu_syntax::TokenKind;
use lsp_types::{InlayHint, InlayHintKind, InlayHintLabel, InlayHintParams};

use crate::analysis::Analysis;
use crate::engine::Engine;
use crate::index::{Role, SymKind};
use crate::methods::completion::node_kind_name;

impl Engine {
    pub fn inlay_hint(&self, params: InlayHintParams) -> Option<Vec<InlayHint>> {
        let a = self.analysis(&params.text_document.uri)?;
        let want = a.lines.span(&a.text, params.range);
        let inside = |s: Span| s.end >= want.start && s.start <= want.end;
        let mut out = Vec::new();
        let mut revise_stmts: Vec<Span> = Vec::new();
        for o in a.index.occs.iter().filter(|o| inside(o.span)) {
            let end = if o.quoted { o.span.end } else { o.span.end + 1 };
            match (o.kind, o.role) {
                (
                    SymKind::Node,
                    Role::Goto
                    | Role::Revise
                    | Role::Otherwise
                    | Role::Start
                    | Role::ForkTarget
                    | Role::Await,
                ) => {
                    if let Some(n) = a.index.node(&o.name) {
                        out.push(hint(
                            &a,
                            end,
                            format!(": {}", node_kind_name(&n.call)),
                            InlayHintKind::TYPE,
                        ));
                    }
                    if o.role == Role::Revise && !revise_stmts.contains(&o.stmt) {
                        revise_stmts.push(o.stmt);
                    }
                }
                (
                    SymKind::Variable,
                    Role::Writes | Role::Yields | Role::Imports | Role::Exports | Role::Condition,
                ) => {
                    if let Some(ty) = a.index.variable(&o.name).and_then(|v| v.ty.as_deref()) {
                        let ty = ty.strip_prefix("VarType.").unwrap_or(ty);
                        out.push(hint(&a, end, format!(": {ty}"), InlayHintKind::TYPE));
                    }
                }
                _ => {}
            }
        }
        for stmt in revise_stmts {
            if let Some(label) = revise_budget(&a, stmt) {
                out.push(hint(&a, stmt.end, label, InlayHintKind::PARAMETER));
            }
        }
        out.sort_by_key(|h| (h.position.line, h.position.character));
        Some(out)
    }
}

fn hint(a: &Analysis, offset: u32, label: String, kind: InlayHintKind) -> InlayHint {
    InlayHint {
        position: a.lines.position(&a.text, offset),
        label: InlayHintLabel::String(label),
        kind: Some(kind),
        text_edits: None,
        tooltip: None,
        padding_left: Some(kind == InlayHintKind::PARAMETER),
        padding_right: None,
        data: None,
    }
}

/// `⟲ 3× per score, then "failed"` for `… revise "x" retry 3 otherwise "failed"`.
fn revise_budget(a: &Analysis, stmt: Span) -> Option<String> {
    let tokens = &a.lexed().tokens;
    let first = tokens.partition_point(|t| t.span.start < stmt.start);
    let stmt_tokens: Vec<_> = tokens[first..]
        .iter()
        .take_while(|t| t.span.end <= stmt.end)
        .collect();
    let retry = stmt_tokens
        .iter()
        .position(|t| a.slice(t.span) == "retry")?;
    let count = stmt_tokens
        .get(retry + 1)
        .filter(|t| t.kind == TokenKind::Int)
        .map(|t| a.slice(t.span))?;
    let escalate = a
        .index
        .occs
        .iter()
        .find(|o| {
            o.stmt == stmt
                && o.role == Role::Otherwise
                && o.span.start > stmt_tokens[retry].span.start
        })
        .map(|o| o.name.clone());
    let head = stmt_tokens.first().map(|t| a.slice(t.span)).unwrap_or("");
    let block = a.index.keyword_at(stmt.start).map(|k| k.block);
    let trigger = match (head, block) {
        ("onRejection" | "onApproval", _) => "review",
        ("onNoConsensus", _) => "consensus",
        ("onFailure", _) => "failure",
        ("whenScore", _) | (_, Some(BlockKind::OnScore)) => "score",
        ("whenValue", _) | (_, Some(BlockKind::OnCondition)) => "condition",
        _ => "trigger",
    };
    Some(match escalate {
        Some(x) => format!("⟲ {count}× per {trigger}, then \"{x}\""),
        None => format!("⟲ {count}× per {trigger}"),
    })
}
