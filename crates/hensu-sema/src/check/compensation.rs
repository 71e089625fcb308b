//! Saga compensation (docs/language.md, *Saga compensation*): E0212 a node naming no
//! compensation, W0201 a compensation no node names, E0205 an unknown agent of an agent
//! compensation. E0311 (a compensation used as a transition target) is reported by `refs`,
//! where the unknown targets are found.

use hensu_diagnostics::{Diagnostic, Span, codes};
use hensu_ir::CompensationBody;

use super::Ctx;
use crate::suggest::{did_you_mean, help_and_fix};

pub(super) fn check(cx: &mut Ctx<'_>) {
    let wf = cx.wf;
    let saga = &wf.saga;
    for (node, name) in &saga.node_compensations {
        // A compensation whose body was in error is declared (in the origins) but not in the IR.
        if saga.compensations.contains_key(name)
            || cx.origins.compensations.contains_key(name)
            || cx.origins.rejected_compensations.contains(name)
        {
            continue;
        }
        let span = cx.prop_span(node, "compensation");
        unknown_compensation(cx, name, span);
    }
    for (id, c) in &saga.compensations {
        if let CompensationBody::Agent { agent_id, .. } = &c.body
            && !wf.agents.contains_key(agent_id)
        {
            let span = cx
                .origins
                .compensations
                .get(id)
                .and_then(|o| o.props.get("agent").copied())
                .unwrap_or_else(|| compensation_span(cx, id));
            let d = Diagnostic::new(
                codes::E0205,
                format!("unknown agent `{agent_id}`"),
                span,
                "no agent with this id",
            );
            let (mut d, suggested) =
                help_and_fix(d, agent_id, span, wf.agents.keys().map(String::as_str));
            if !suggested {
                d = d.with_help(format!(
                    "declare it in `agents {{ agent(\"{agent_id}\") {{ role = \"…\"; model = \"…\" }} }}`"
                ));
            }
            cx.emit(d);
        }
    }
    let declared = cx.origins.compensations.keys().chain(
        saga.compensations
            .keys()
            .filter(|k| !cx.origins.compensations.contains_key(*k)),
    );
    // A compensation an unknown reference is probably a misspelling of is reported there
    // (E0212 with its did-you-mean), not again as unused.
    let misspelt: Vec<&str> = saga
        .node_compensations
        .values()
        .filter(|n| !is_compensation(cx, n))
        .filter_map(|n| did_you_mean(n, cx.origins.compensations.keys().map(String::as_str)))
        .collect();
    let unused: Vec<&String> = declared
        .filter(|id| !saga.node_compensations.values().any(|n| n == *id))
        .filter(|id| !misspelt.contains(&id.as_str()))
        .collect();
    for id in unused {
        let span = compensation_span(cx, id);
        let d = Diagnostic::new(
            codes::W0201,
            format!("compensation `{id}` is never used"),
            span,
            "no node names this compensation",
        )
        .with_help(format!(
            "add `compensation = \"{id}\"` to the node whose work it undoes, or remove it"
        ));
        cx.emit(d);
    }
    never_compensated(cx);
}

/// W0324: compensations a node names, but every end of the workflow is a success, so no run
/// ends in the failure that starts them.
fn never_compensated(cx: &mut Ctx<'_>) {
    let wf = cx.wf;
    // An error in the workflow (a flow routed to a compensation, E0311) is the root cause.
    if wf.saga.node_compensations.is_empty()
        || wf.saga.compensations.is_empty()
        || cx.diagnostics.iter().any(Diagnostic::is_error)
    {
        return;
    }
    let ends: Vec<&str> = wf
        .nodes
        .values()
        .filter_map(|n| match n {
            hensu_ir::Node::End(e) => Some(e),
            _ => None,
        })
        .map(|e| (e.status == hensu_ir::ExitStatus::Success).then_some(e.id.as_str()))
        .collect::<Option<Vec<_>>>()
        .unwrap_or_default();
    if ends.is_empty() {
        return;
    }
    let Some(first) = wf.saga.compensations.keys().next() else {
        return;
    };
    let mut d = Diagnostic::new(
        codes::W0324,
        "these compensations can never run",
        compensation_span(cx, first),
        "every end of this workflow is a success",
    )
    .with_note("compensations run only when a run ends in a failure (an `end` with `ExitStatus.FAILURE` or `CANCEL`)")
    .with_help("route the failures to an end with a failure status, e.g. `end(\"failed\", ExitStatus.FAILURE)`");
    for id in ends {
        if let Some(o) = cx.origins.nodes.get(id) {
            d = d.with_label(o.id, "ends with SUCCESS");
        }
    }
    cx.emit(d);
}

/// The id string of `compensation("id")`, or the fallback.
fn compensation_span(cx: &Ctx<'_>, id: &str) -> Span {
    cx.origins
        .compensations
        .get(id)
        .map(|o| o.id)
        .unwrap_or_else(|| cx.fallback())
}

fn unknown_compensation(cx: &mut Ctx<'_>, name: &str, span: Span) {
    let wf = cx.wf;
    let d = Diagnostic::new(
        codes::E0212,
        format!("unknown compensation `{name}`"),
        span,
        "no compensation with this id",
    );
    let candidates = cx
        .origins
        .compensations
        .keys()
        .chain(wf.saga.compensations.keys())
        .map(String::as_str);
    let (mut d, suggested) = help_and_fix(d, name, span, candidates);
    if !suggested {
        d = d.with_help(format!(
            "declare it in `graph {{ }}`: `compensation(\"{name}\") {{ execute(\"…\") }}`"
        ));
    }
    if wf.nodes.contains_key(name) {
        d = d.with_note(format!(
            "`{name}` is a node; a compensation is declared with `compensation(\"…\") {{ … }}`"
        ));
    }
    cx.emit(d);
}

/// Whether `id` names a compensation (declared, even with a body in error).
pub(super) fn is_compensation(cx: &Ctx<'_>, id: &str) -> bool {
    cx.wf.saga.compensations.contains_key(id) || cx.origins.compensations.contains_key(id)
}

/// E0311: a transition target, fork target or `start at` naming a compensation.
pub(super) fn target_is_compensation(cx: &mut Ctx<'_>, name: &str, span: Span) {
    let decl = cx.origins.compensations.get(name).map(|o| o.id);
    let mut d = Diagnostic::new(
        codes::E0311,
        format!("`{name}` is a compensation, not a node"),
        span,
        "the flow cannot go to a compensation",
    )
    .with_note("the engine runs a compensation by itself, newest first, when the run ends unsuccessfully")
    .with_help("route to a node (an `end(\"…\", ExitStatus.FAILURE)` starts the compensations), and name the compensation with `compensation = \"…\"` on the node whose work it undoes");
    if let Some(decl) = decl {
        d = d.with_label(decl, "declared as a compensation here");
    }
    cx.emit(d);
}
