//! Map nodes (docs/language.md, *Map over a list*): E0120 (a blank `over`; a missing one is the
//! lowering's), E0121 (no agent or no prompt; a sub-workflow body without `result`), E0123
//! (an agent body and a sub-workflow body at once), E0122 (`maxParallel` or `maxItems` below 1),
//! E0412 (`over` names no LIST_STRING variable), E0413 (`writes` names no LIST_STRING
//! variable, or more than one) and W0336 (no `maxItems`: the static bound is unbounded); for a
//! sub-workflow body, from the project check, E0501 (unknown child), E0502 (a reference cycle,
//! the project check's graph) and E0414 (the child declares no `item` or no `result`
//! variable).
//! An undeclared `writes` name is E0402 and the prompt's placeholders E0403, as for a standard
//! node (`check/state/`, where `{item}` and `{index}` are the map's own).

use hensu_diagnostics::{Diagnostic, Span, codes};
use hensu_ir::{MapNode, Node, VarType, Workflow};

use super::{Ctx, InputKind};
use crate::origins::Origins;
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
    let written = cx
        .node_origin(id)
        .is_some_and(|o| o.props.contains_key("over"));
    if !written && cx.input != InputKind::Json {
        return; // E0120, the lowering's
    }
    let span = cx.prop_span(id, "over");
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

/// E0121: the body (an agent and its prompt, or a sub-workflow and its result) is missing;
/// E0123: both are given.
fn body(cx: &mut Ctx<'_>, id: &str, m: &MapNode) {
    let given = |v: &Option<String>| v.as_deref().is_some_and(|s| !s.trim().is_empty());
    if given(&m.target) {
        let mixed: Vec<&str> = [("agent", &m.agent_id), ("prompt", &m.prompt)]
            .into_iter()
            .filter(|(_, v)| v.is_some())
            .map(|(k, _)| k)
            .collect();
        if let Some(first) = mixed.first() {
            let d = Diagnostic::new(
                codes::E0123,
                format!("map node `{id}` has both a sub-workflow body and `{first}`"),
                cx.prop_span(id, first),
                "the items run the `target` workflow, not an agent",
            )
            .with_label(cx.prop_span(id, "target"), "the sub-workflow body")
            .with_help("keep either `target` (with `result`) or `agent` and `prompt`");
            cx.emit(d);
        }
        if !given(&m.result) {
            let d = Diagnostic::new(
                codes::E0121,
                format!("map node `{id}` has no `result`"),
                cx.prop_span(id, "target"),
                "which of the child's variables is the item's answer?",
            )
            .with_help("add `result = \"variable\"`, naming a variable the child workflow writes");
            cx.emit(d);
        }
        return;
    }
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

/// The project check of a map node's sub-workflow body (`target`, with `child` the workflow
/// compiled with this one under that id): E0501 when there is none, E0414 when it declares no
/// `item` or no `result` variable. `names` are the project's workflow ids.
pub(super) fn child(
    origins: &Origins,
    m: &MapNode,
    target: &str,
    child: Option<&Workflow>,
    names: &[&str],
) -> Vec<Diagnostic> {
    let span = origins
        .nodes
        .get(&m.id)
        .and_then(|n| n.props.get("target").copied())
        .unwrap_or_else(|| origins.node_id(&m.id));
    let Some(child) = child else {
        let d = Diagnostic::new(
            codes::E0501,
            format!("unknown sub-workflow `{target}`"),
            span,
            "no workflow with this id is compiled with this one",
        );
        let (d, suggested) = help_and_fix(d, target, span, names.iter().copied());
        let d = if suggested {
            d
        } else {
            d.with_help("compile the child workflow together with this one (pass its file, or put it in `workflows/`)")
        };
        return vec![d];
    };
    let Some(schema) = child.state_schema.as_ref() else {
        return Vec::new(); // no schema: variables are not checked
    };
    let mut out = Vec::new();
    if schema.variable("item").is_none() {
        out.push(
            Diagnostic::new(
                codes::E0414,
                format!("the map body `{target}` declares no `item`"),
                span,
                "each item is passed to this workflow as `item`",
            )
            .with_help(format!(
                "declare `input(\"item\", VarType.STRING)` in `{target}` (and `index` to see the position)"
            )),
        );
    }
    if let Some(result) = m.result.as_deref().filter(|r| !r.trim().is_empty())
        && schema.variable(result).is_none()
    {
        let at = origins
            .nodes
            .get(&m.id)
            .and_then(|n| n.props.get("result").copied())
            .unwrap_or(span);
        let d = Diagnostic::new(
            codes::E0414,
            format!("the map body `{target}` declares no variable `{result}`"),
            at,
            "the item's answer is read from this variable of the child",
        );
        let names = schema.variables.iter().map(|v| v.name.as_str());
        let (d, suggested) = help_and_fix(d, result, at, names);
        out.push(if suggested {
            d
        } else {
            d.with_help(format!(
                "declare `variable(\"{result}\", VarType.STRING)` in `{target}` and write it there"
            ))
        });
    }
    out
}
