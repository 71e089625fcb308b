//! E0204 unknown node (E0311 when it names a compensation) and E0205 unknown agent.

use hensu_diagnostics::{Diagnostic, Span, codes};
use hensu_ir::{MapNode, Node, StandardNode as Standard};

use super::graph::{EdgeSource, NodeGraph};
use super::{Ctx, TargetSlot};
use crate::suggest::help_and_fix;

pub(super) fn check(cx: &mut Ctx<'_>, graph: &NodeGraph<'_>) {
    let wf = cx.wf;
    let known = |id: &str| graph.index_of(id).is_some();
    if !wf.start_node.is_empty() && !known(&wf.start_node) {
        let span = cx.origins.or_fallback(cx.origins.start);
        unknown_node(cx, &wf.start_node, span, "the start node is not declared");
    }
    for u in &graph.unknown {
        let id = graph.id(u.from);
        let (span, label) = match u.source {
            EdgeSource::Rule { rule, slot } => (
                cx.target_span(id, rule, slot),
                match slot {
                    TargetSlot::Otherwise => "no node with this id to escalate to",
                    _ if u.bounded => "no node with this id to revise",
                    _ => "no node with this id",
                },
            ),
            EdgeSource::ForkTarget(k) => (
                cx.list_span(id, |n| &n.targets, k),
                "the fork target is not declared",
            ),
        };
        unknown_node(cx, u.target, span, label);
    }
    for (id, node) in &wf.nodes {
        match node {
            Node::Join(join) => {
                for (k, target) in join.await_targets.iter().enumerate() {
                    if !known(target) {
                        let span = cx.list_span(id, |n| &n.awaits, k);
                        unknown_node(cx, target, span, "the awaited fork is not declared");
                    }
                }
            }
            Node::Standard(Standard { agent_id, .. }) | Node::Map(MapNode { agent_id, .. }) => {
                // The span is looked up only for an unknown agent (the origins' lookups were
                // a large share of a large check's time).
                if let Some(agent) = agent_id
                    && !cx.wf.agents.contains_key(agent)
                {
                    let span = cx.prop_span(id, "agent");
                    check_agent(cx, agent, span, "no agent with this id");
                }
            }
            Node::Parallel(p) => {
                for (b, branch) in p.branches.iter().enumerate() {
                    if branch.agent_id.is_empty() {
                        continue; // E0105 (the lowering's)
                    }
                    let span = cx
                        .node_origin(id)
                        .and_then(|n| n.branches.get(b))
                        .map(|o| o.props.get("agent").copied().unwrap_or(o.id))
                        .unwrap_or_else(|| cx.node_span(id));
                    check_agent(cx, &branch.agent_id, span, "no agent with this id");
                }
                if let Some(judge) = p
                    .consensus_config
                    .as_ref()
                    .and_then(|c| c.judge_agent_id.as_ref())
                {
                    let span = cx
                        .node_origin(id)
                        .and_then(|n| n.consensus_props.get("judge").copied().or(n.consensus))
                        .unwrap_or_else(|| cx.node_span(id));
                    check_agent(cx, judge, span, "no agent with this id to judge");
                }
            }
            _ => {}
        }
    }
}

fn unknown_node(cx: &mut Ctx<'_>, name: &str, span: Span, label: &str) {
    if super::compensation::is_compensation(cx, name) {
        super::compensation::target_is_compensation(cx, name, span);
        return;
    }
    let d = Diagnostic::new(codes::E0204, format!("unknown node `{name}`"), span, label);
    let (mut d, suggested) = help_and_fix(d, name, span, cx.wf.nodes.keys().map(String::as_str));
    if !suggested {
        d = d.with_help(format!(
            "declare the node in `graph {{ }}`, e.g. `node(\"{name}\") {{ … }}` or `end(\"{name}\")`"
        ));
    }
    cx.emit(d);
}

fn check_agent(cx: &mut Ctx<'_>, agent: &str, span: Span, label: &str) {
    if cx.wf.agents.contains_key(agent) {
        return;
    }
    let d = Diagnostic::new(
        codes::E0205,
        format!("unknown agent `{agent}`"),
        span,
        label,
    );
    let (mut d, suggested) = help_and_fix(d, agent, span, cx.wf.agents.keys().map(String::as_str));
    if !suggested {
        d = d.with_help(format!(
            "declare it in `agents {{ agent(\"{agent}\") {{ role = \"…\"; model = \"…\" }} }}`"
        ));
    }
    cx.emit(d);
}
