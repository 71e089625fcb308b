//! Map nodes (docs/language.md, *Map over a list*): E0120 (a blank `over`; a missing one is the
//! lowering's), E0121 (no agent or no prompt), E0122 (`maxParallel` or `maxItems` below 1),
//! E0412 (`over` names no LIST_STRING variable), E0413 (`writes` names no LIST_STRING
//! variable, or more than one) and W0336 (no `maxItems`: the static bound is unbounded).
//! An undeclared `writes` name is E0402 and the prompt's placeholders E0403, as for a standard
//! node (`check/state.rs`, where `{item}` and `{index}` are the map's own).

use hensu_diagnostics::{Diagnostic, Span, codes};
use hensu_ir::{MapNode, Node, VarType};

use super::Ctx;
use crate::suggest::help_and_fix;

pub(super) fn check(cx: &mut Ctx<'_>) {
    let wf = cx.wf;
    for (id, node) in &wf.nodes {
        let Node::Map(m) = node else { continue };
        over(cx, id, m);
        body(cx, id, m);
        limits(cx, id, m);
        writes(cx, id, m);
    }
}

/// E0120 for a blank `over`, E0412 for one that names no LIST_STRING variable.
fn over(cx: &mut Ctx<'_>, id: &str, m: &MapNode) {
    let Some(origin) = cx.node_origin(id) else {
        return;
    };
    let Some(span) = origin.props.get("over").copied() else {
        return; // E0120, the lowering's
    };
    let name = m.over.as_str();
    if name.trim().is_empty() {
        let d = Diagnostic::new(
            codes::E0120,
            format!("map node `{id}` has a blank `over`"),
            span,
            "blank",
        )
        .with_help("name a `VarType.LIST_STRING` state variable");
        cx.emit(d);
        return;
    }
    let Some(schema) = cx.wf.state_schema.as_ref() else {
        return; // no schema: variables are not checked (as for placeholders)
    };
    let declared = schema.variable(name);
    let (message, label) = match declared {
        Some(v) if v.var_type == VarType::ListString => return,
        Some(v) => (
            format!(
                "`over = \"{name}\"` of map node `{id}` names a {} variable",
                v.var_type.as_str()
            ),
            "not a LIST_STRING",
        ),
        None => (
            format!("`over = \"{name}\"` of map node `{id}` names no declared variable"),
            "not declared in `state { }`",
        ),
    };
    let d = Diagnostic::new(codes::E0412, message, span, label);
    let d = if declared.is_some() {
        d.with_help(format!(
            "declare `{name}` with `VarType.LIST_STRING`, or name a list variable in `over`"
        ))
    } else {
        let lists = schema
            .variables
            .iter()
            .filter(|v| v.var_type == VarType::ListString)
            .map(|v| v.name.as_str());
        match help_and_fix(d, name, span, lists) {
            (d, true) => d,
            (d, false) => d.with_help(format!(
                "declare `input(\"{name}\", VarType.LIST_STRING)` (or a variable) and name it in `over`"
            )),
        }
    };
    cx.emit(d);
}

/// E0121: the body (an agent and its prompt) is missing.
fn body(cx: &mut Ctx<'_>, id: &str, m: &MapNode) {
    let missing: Vec<&str> = [
        ("agent", m.agent_id.as_deref()),
        ("prompt", m.prompt.as_deref()),
    ]
    .into_iter()
    .filter(|(_, v)| v.is_none_or(|s| s.trim().is_empty()))
    .map(|(k, _)| k)
    .collect();
    if missing.is_empty() {
        return;
    }
    let list = missing
        .iter()
        .map(|k| format!("`{k}`"))
        .collect::<Vec<_>>()
        .join(" and ");
    let d = Diagnostic::new(
        codes::E0121,
        format!("map node `{id}` has no {list}"),
        cx.node_span(id),
        "no body to run per item",
    )
    .with_help(
        "add `agent = \"agentId\"` and `prompt = \"… {item} …\"` (`{item}` is the item, `{index}` its position)",
    );
    cx.emit(d);
}

/// E0122 for a limit below 1, W0336 for no `maxItems`.
fn limits(cx: &mut Ctx<'_>, id: &str, m: &MapNode) {
    let below = |prop: &str, value: i64, cx: &mut Ctx<'_>| {
        let d = Diagnostic::new(
            codes::E0122,
            format!("`{prop}` of map node `{id}` is {value}"),
            cx.prop_span(id, prop),
            "must be at least 1",
        )
        .with_help(match prop {
            "maxParallel" => "`maxParallel` is how many items run at a time; write 1 or more",
            _ => "`maxItems` is the most items the list may hold; write 1 or more",
        });
        cx.emit(d);
    };
    if m.max_parallel < 1 {
        below("maxParallel", m.max_parallel, cx);
    }
    match m.max_items {
        Some(n) if n < 1 => below("maxItems", n, cx),
        Some(_) => {}
        None => {
            let d = Diagnostic::new(
                codes::W0336,
                format!("map node `{id}` has no `maxItems`"),
                cx.node_span(id),
                "the number of agent calls per visit is unbounded",
            )
            .with_note("`hensuc check --bounds` reports this workflow's agent calls and cost as unbounded")
            .with_help("add `maxItems = N`: the bound counts N calls per visit, and a longer list fails the node");
            cx.emit(d);
        }
    }
}

/// E0413: `writes` names a declared variable that is no LIST_STRING, or more than one.
fn writes(cx: &mut Ctx<'_>, id: &str, m: &MapNode) {
    let span_of = |cx: &Ctx<'_>, i: usize| -> Span { cx.list_span(id, |o| &o.writes, i) };
    if m.writes.len() > 1 {
        let d = Diagnostic::new(
            codes::E0413,
            format!("map node `{id}` writes {} variables", m.writes.len()),
            span_of(cx, 1),
            "a map gathers its answers into one list",
        )
        .with_help("name one `VarType.LIST_STRING` variable in `writes`");
        cx.emit(d);
        return;
    }
    let Some(name) = m.writes.first() else { return };
    let Some(schema) = cx.wf.state_schema.as_ref() else {
        return;
    };
    let Some(v) = schema.variable(name) else {
        return; // E0402, state.rs's
    };
    if v.var_type == VarType::ListString {
        return;
    }
    let d = Diagnostic::new(
        codes::E0413,
        format!(
            "map node `{id}` writes `{name}`, a {} variable",
            v.var_type.as_str()
        ),
        span_of(cx, 0),
        "not a LIST_STRING",
    )
    .with_help(format!(
        "declare `{name}` with `VarType.LIST_STRING`: the answers are gathered into a list, in the order of the items"
    ));
    cx.emit(d);
}
