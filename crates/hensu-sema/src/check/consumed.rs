//! W0318: a prompt reads a variable that an `onCondition("v")` routing before it always removes.
//! The engine treats the variables a node routes on as consumed: on every transition out of that
//! node they are removed from the state (docs/language.md, *onCondition*), so a later prompt
//! reading `{v}` renders an empty string unless a node writes `v` again in between.
//!
//! A forward "may be present" analysis per variable: `v` is present on entry to a node when the
//! start node is entered with it (an input), or a predecessor writes it or was entered with it,
//! and that predecessor does not route on it (the routing node's own write is removed with the
//! transition). The warning fires where `v` is never present but would be if routing did not
//! remove it, so W0316 (never written at all) and this code never describe the same read.
//!
//! Guards as for W0316: a generic node (whose handler may write anything), an unknown target
//! (E0204) or a node without transitions (E0310) turn the check off. Two breadth-first searches
//! per variable that is both routed on and read, and one more to name the routing node in the
//! message; bounded by [`MAX_WORK`].

use std::collections::VecDeque;

use hensu_diagnostics::{Diagnostic, codes};
use hensu_ir::{Node, TransitionRule, is_engine_variable};
use petgraph::graph::NodeIndex;

use super::Ctx;
use super::fxhash::FxHashSet;
use super::graph::NodeGraph;

/// At most this many (variable × graph size) steps.
const MAX_WORK: usize = 20_000_000;

pub(super) fn check(cx: &mut Ctx<'_>, g: &NodeGraph<'_>) {
    let wf = cx.wf;
    let Some(schema) = &wf.state_schema else {
        return;
    };
    let graph_incomplete = cx
        .diagnostics
        .iter()
        .any(|d| codes::E0204 == d.code || codes::E0310 == d.code);
    if graph_incomplete || wf.nodes.values().any(|n| matches!(n, Node::Generic(_))) {
        return;
    }
    let node_count = g.graph.node_count();
    // The routed-on (consumed) variables of each node, as the engine computes them.
    let consumed: Vec<Vec<&str>> = wf
        .nodes
        .values()
        .map(|n| {
            let mut vars: Vec<&str> = Vec::new();
            for rule in n.transition_rules() {
                if let TransitionRule::Condition { variable, .. } = rule.trigger_rule()
                    && !vars.contains(&variable.as_str())
                {
                    vars.push(variable);
                }
            }
            vars
        })
        .collect();
    if consumed.iter().all(Vec::is_empty) {
        return;
    }
    // Hashed once: a lookup per placeholder in the schema and in every node's routed-on list
    // made this check quadratic in the workflow size.
    let schema_names: FxHashSet<&str> = schema.variables.iter().map(|v| v.name.as_str()).collect();
    let routed_on: FxHashSet<&str> = consumed.iter().flatten().copied().collect();
    let tracked = |name: &str| {
        !is_engine_variable(name) && schema_names.contains(name) && routed_on.contains(name)
    };
    // Reads: the placeholders of standard node prompts, as for W0316; each (variable, node)
    // once. A node's reads are pushed together, so a repeat is looked for among them only.
    let mut reads: Vec<(&str, usize, &str)> = Vec::new();
    for (i, (id, node)) in wf.nodes.iter().enumerate() {
        if !matches!(node, Node::Standard(_)) {
            continue;
        }
        let Some(origin) = cx.node_origin(id) else {
            continue;
        };
        let first = reads.len();
        for (name, _) in &origin.placeholders {
            if tracked(name) && !reads[first..].iter().any(|(v, _, _)| v == name) {
                reads.push((name.as_str(), i, id.as_str()));
            }
        }
    }
    let mut variables: Vec<&str> = reads.iter().map(|(v, _, _)| *v).collect();
    variables.sort_unstable();
    variables.dedup();
    let size = node_count + g.graph.edge_count();
    if variables.len().saturating_mul(size).saturating_mul(3) > MAX_WORK {
        return;
    }
    // The reads of each variable, in the order found (a stable sort keeps it within a group).
    reads.sort_by_key(|(v, _, _)| *v);
    for v in variables {
        let start = reads.partition_point(|(name, _, _)| *name < v);
        let end = reads.partition_point(|(name, _, _)| *name <= v);
        let group = &reads[start..end];
        let writes: Vec<bool> = wf.nodes.values().map(|n| writes_variable(n, v)).collect();
        let consumes = |i: usize| consumed.get(i).is_some_and(|c| c.contains(&v));
        let is_input = schema.variables.iter().any(|x| x.name == v && x.is_input);
        let without_routing = present_on_entry(g, is_input, &writes, |_| false);
        let with_routing = present_on_entry(g, is_input, &writes, consumes);
        let routers = nearest_router(cx, g, &consumed, v);
        for &(_, node, id) in group {
            let would_be = without_routing.get(node).copied().unwrap_or(false);
            let is = with_routing.get(node).copied().unwrap_or(true);
            if !would_be || is {
                continue;
            }
            let span = cx
                .node_origin(id)
                .and_then(|o| o.placeholders.iter().find(|(n, _)| n == v))
                .map(|(_, s)| *s)
                .unwrap_or_else(|| cx.prop_span(id, "prompt"));
            let mut d = Diagnostic::new(
                codes::W0318,
                format!("`{{{v}}}` is always empty here: routing on it removed it"),
                span,
                "read after an `onCondition` consumed it",
            );
            if let Some(&Some((router, rule))) = routers.get(node) {
                d = d.with_label(
                    cx.variable_span(router, rule),
                    format!("`{router}` routes on `{v}`, which removes it on every transition"),
                );
            }
            let d = d
                .with_note("the engine removes the variables a node routes on after routing")
                .with_help(format!(
                    "write `{v}` again in a node between the routing node and `{id}`, or copy it to another variable before routing on it"
                ));
            cx.emit(d);
        }
    }
}

/// Whether `node` writes `variable` (standard `writes`, join `writes`/`exports`, parallel
/// `yields`, sub-workflow outputs).
fn writes_variable(node: &Node, variable: &str) -> bool {
    match node {
        Node::Standard(n) => n.writes.iter().any(|w| w == variable),
        Node::Action(a) => a.writes.iter().any(|w| w == variable),
        Node::Join(j) => j.writes.iter().chain(&j.exports).any(|w| w == variable),
        Node::Parallel(p) => p
            .branches
            .iter()
            .any(|b| b.yields.iter().any(|y| y == variable)),
        Node::SubWorkflow(s) => s.output_mapping.contains_key(variable),
        Node::Map(m) => m.writes.iter().any(|w| w == variable),
        _ => false,
    }
}

/// For each node, whether the variable may be present when it is entered: the start node when
/// it is an input, and every successor of a node that writes it or was entered with it, unless
/// that node routes on it (`consumes`).
fn present_on_entry(
    g: &NodeGraph<'_>,
    is_input: bool,
    writes: &[bool],
    consumes: impl Fn(usize) -> bool,
) -> Vec<bool> {
    let mut present = vec![false; g.graph.node_count()];
    // Nodes whose successors receive the variable.
    let mut queue: VecDeque<NodeIndex> = VecDeque::new();
    let mut expanded = vec![false; g.graph.node_count()];
    if is_input && let Some(start) = g.start {
        if let Some(p) = present.get_mut(start.index()) {
            *p = true;
        }
        queue.push_back(start);
    }
    for (i, w) in writes.iter().enumerate() {
        if *w {
            queue.push_back(NodeIndex::new(i));
        }
    }
    while let Some(n) = queue.pop_front() {
        let i = n.index();
        if consumes(i) || expanded.get(i).copied().unwrap_or(true) {
            continue;
        }
        if let Some(e) = expanded.get_mut(i) {
            *e = true;
        }
        for next in g.graph.neighbors(n) {
            if let Some(p) = present.get_mut(next.index())
                && !*p
            {
                *p = true;
                queue.push_back(next);
            }
        }
    }
    present
}

/// For each node, the first routing node (on `variable`) that reaches it, found by one
/// breadth-first search from all of them (nodes in workflow order), with the index of the rule
/// that routes on it: the secondary label of the warning.
fn nearest_router<'w>(
    cx: &Ctx<'w>,
    g: &NodeGraph<'_>,
    consumed: &[Vec<&str>],
    variable: &str,
) -> Vec<Option<(&'w str, usize)>> {
    let mut label: Vec<Option<(&'w str, usize)>> = vec![None; g.graph.node_count()];
    let mut queue: VecDeque<(NodeIndex, (&'w str, usize))> = VecDeque::new();
    for (i, (id, node)) in cx.wf.nodes.iter().enumerate() {
        if !consumed.get(i).is_some_and(|c| c.contains(&variable)) {
            continue;
        }
        let rule = node.transition_rules().iter().position(|r| {
            matches!(r.trigger_rule(), TransitionRule::Condition { variable: v, .. } if v == variable)
        });
        if let Some(rule) = rule {
            queue.push_back((NodeIndex::new(i), (id.as_str(), rule)));
        }
    }
    let mut expanded = vec![false; g.graph.node_count()];
    while let Some((n, router)) = queue.pop_front() {
        if expanded.get(n.index()).copied().unwrap_or(true) {
            continue;
        }
        if let Some(e) = expanded.get_mut(n.index()) {
            *e = true;
        }
        for next in g.graph.neighbors(n) {
            if let Some(l) = label.get_mut(next.index())
                && l.is_none()
            {
                *l = Some(router);
                queue.push_back((next, router));
            }
        }
    }
    label
}
