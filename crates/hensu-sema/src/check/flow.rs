//! W0301 unreachable node, W0302 no path to an end node, W0303 unbounded cycle.

use hensu_diagnostics::{Diagnostic, Span, codes};
use hensu_ir::Node;

use super::Ctx;
use super::graph::{Cycle, EdgeSource, NodeGraph};

/// At most this many "the cycle continues here" labels per W0303.
const MAX_CYCLE_LABELS: usize = 8;

pub(super) fn check(cx: &mut Ctx<'_>, g: &NodeGraph<'_>) {
    // An unknown target (E0204) or a node without transitions (E0310) already explains missing
    // paths; reachability warnings would only repeat it.
    let explained = cx
        .diagnostics
        .iter()
        .any(|d| codes::E0204 == d.code || codes::E0310 == d.code);
    if let (Some(start), false) = (g.start, explained) {
        let reached = g.reachable();
        for (i, id) in cx.wf.nodes.keys().enumerate() {
            if !reached.get(i).copied().unwrap_or(true) {
                let d = Diagnostic::new(
                    codes::W0301,
                    format!("node `{id}` is unreachable from the start node"),
                    cx.node_span(id),
                    "no transition leads here from the start node",
                )
                .with_help(format!("add a transition to `{id}`, or remove the node"));
                cx.emit(d);
            }
        }
        let reaches_end = cx
            .wf
            .nodes
            .values()
            .enumerate()
            .any(|(i, n)| n.is_end() && reached.get(i).copied().unwrap_or(false));
        if !reaches_end {
            let start_id = g.id(start);
            let span = cx.origins.start.unwrap_or_else(|| cx.node_span(start_id));
            let mut d = Diagnostic::new(
                codes::W0302,
                "no path from the start node to an end node",
                span,
                format!("a run starting at `{start_id}` can never finish"),
            )
            .with_help("add a transition to an `end(\"…\")` node");
            if !cx.wf.nodes.values().any(Node::is_end) {
                d = d.with_note("the workflow declares no end node");
            }
            cx.emit(d);
        }
    }
    for cycle in g.unbounded_cycles() {
        report_cycle(cx, g, &cycle);
    }
}

fn edge_span(cx: &Ctx<'_>, g: &NodeGraph<'_>, e: petgraph::graph::EdgeIndex) -> Option<Span> {
    let (from, _) = g.graph.edge_endpoints(e)?;
    let info = g.graph.edge_weight(e)?;
    let id = g.id(from);
    Some(match info.source {
        EdgeSource::Rule { rule, slot } => cx.target_span(id, rule, slot),
        EdgeSource::ForkTarget(k) => cx.list_span(id, |n| &n.targets, k),
    })
}

fn report_cycle(cx: &mut Ctx<'_>, g: &NodeGraph<'_>, cycle: &Cycle) {
    let (Some(&root), Some(&closing)) = (cycle.nodes.first(), cycle.edges.last()) else {
        return;
    };
    let root_id = g.id(root);
    let path = g.render_cycle(cycle);
    let primary = edge_span(cx, g, closing).unwrap_or_else(|| cx.node_span(root_id));
    let label = if cycle.nodes.len() == 1 {
        format!("this transition loops back to `{root_id}` with no retry budget")
    } else {
        format!("this transition closes the cycle back to `{root_id}`")
    };
    let mut d = Diagnostic::new(
        codes::W0303,
        format!("unbounded cycle `{path}`"),
        primary,
        label,
    );
    let others = cycle.edges.len().saturating_sub(1);
    for &e in cycle.edges.iter().take(others.min(MAX_CYCLE_LABELS)) {
        if let Some(span) = edge_span(cx, g, e) {
            d = d.with_label(span, "the cycle continues here");
        }
    }
    if others > MAX_CYCLE_LABELS {
        d = d.with_note(format!(
            "{} more transitions of the cycle are not shown",
            others - MAX_CYCLE_LABELS
        ));
    }
    let exit = cx
        .wf
        .nodes
        .values()
        .find(|n| n.is_end())
        .map(|n| n.id().to_string())
        .unwrap_or_else(|| "…".to_string());
    // The fix goes where the cycle closes, in the syntax that node kind accepts.
    let closing_node = g
        .graph
        .edge_endpoints(closing)
        .and_then(|(from, _)| cx.wf.nodes.get(g.id(from)));
    let help = match closing_node {
        Some(Node::Standard(_)) | None => format!(
            "bound it with a retry budget, e.g. `revise \"{root_id}\" retry 3 otherwise \"{exit}\"` \
             in an `onScore`/`onCondition` arm or after `onRejection`"
        ),
        Some(Node::Parallel(_)) => format!(
            "bound it with a retry budget, e.g. `onNoConsensus revise \"{root_id}\" retry 3 \
             otherwise \"{exit}\"`"
        ),
        Some(n) => format!(
            "{} node `{}` accepts no `revise`: retry a failure in place with `onFailure retry 3 \
             otherwise \"{exit}\"`, or bound the cycle at a standard node on it",
            article_kind(n),
            n.id()
        ),
    };
    d = d
        .with_note("`maxSteps` stops a runaway run but does not bound the cycle")
        .with_help(help);
    cx.emit(d);
}

/// "an action", "a fork", … for the W0303 help.
fn article_kind(n: &Node) -> &'static str {
    match n {
        Node::Action(_) => "an action",
        Node::Fork(_) => "a fork",
        Node::Join(_) => "a join",
        Node::Generic(_) => "a generic",
        Node::SubWorkflow(_) => "a sub-workflow",
        Node::End(_) => "an end",
        Node::Standard(_) => "a standard",
        Node::Parallel(_) => "a parallel",
        Node::Wait(_) => "a wait",
        Node::Map(_) => "a map",
    }
}
