//! How a workflow graph is laid out for drawing: nodes in breadth-first order with their depth,
//! and each node's labelled edges and detail lines. `hensuc graph` (text, mermaid, dot) and the
//! web console's SVG draw from these, so every drawing has the same layout.

use std::collections::VecDeque;

use indexmap::IndexSet;

use crate::model::{Action, Node, TransitionRule, WaitFor, Workflow};

/// Nodes in breadth-first order from the start node, with the depth of their first visit.
/// Unreachable nodes are appended at depth 0 so nothing is hidden (upstream drops them).
pub fn bfs_order(workflow: &Workflow) -> Vec<(&Node, usize)> {
    let mut seen: IndexSet<&str> = IndexSet::new();
    let mut out = Vec::new();
    let mut queue = VecDeque::new();
    if workflow.nodes.contains_key(&workflow.start_node) {
        seen.insert(workflow.start_node.as_str());
        queue.push_back((workflow.start_node.as_str(), 0usize));
    }
    while let Some((id, depth)) = queue.pop_front() {
        let Some(node) = workflow.nodes.get(id) else {
            continue;
        };
        out.push((node, depth));
        for next in node.successor_ids() {
            if workflow.nodes.contains_key(next) && seen.insert(next) {
                queue.push_back((next, depth + 1));
            }
        }
    }
    for (id, node) in &workflow.nodes {
        if !seen.contains(id.as_str()) {
            out.push((node, 0));
        }
    }
    out
}

/// One drawn edge of a node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DrawnEdge {
    /// The target node; `None` = the node itself (`onFailure retry`).
    pub target: Option<String>,
    /// The edge label (empty for a plain `onSuccess`).
    pub label: String,
    /// Dashed: failure, no-consensus and escalation edges.
    pub dashed: bool,
}

fn fb(on: bool, sep: &str) -> String {
    if on {
        format!("{sep}fb")
    } else {
        String::new()
    }
}

/// The edges of one rule, labelled like upstream's mermaid renderer.
fn rule_edges(rule: &TransitionRule) -> Vec<DrawnEdge> {
    match rule {
        TransitionRule::Success {
            target_node,
            with_feedback,
        } => vec![DrawnEdge {
            target: Some(target_node.clone()),
            label: if *with_feedback {
                "fb".into()
            } else {
                String::new()
            },
            dashed: false,
        }],
        TransitionRule::Failure { target_node } => {
            vec![DrawnEdge {
                target: target_node.clone(),
                label: "failure".into(),
                dashed: true,
            }]
        }
        TransitionRule::NoConsensus {
            target_node,
            with_feedback,
        } => vec![DrawnEdge {
            target: Some(target_node.clone()),
            label: format!("no consensus{}", fb(*with_feedback, " · ")),
            dashed: true,
        }],
        TransitionRule::Approval {
            expected,
            target_node,
            with_feedback,
        } => vec![DrawnEdge {
            target: Some(target_node.clone()),
            label: format!(
                "{}{}",
                if *expected { "approved" } else { "rejected" },
                fb(*with_feedback, " · ")
            ),
            dashed: false,
        }],
        TransitionRule::Score {
            conditions,
            with_feedback,
        } => conditions
            .iter()
            .map(|c| DrawnEdge {
                target: Some(c.target_node.clone()),
                label: format!("score {}{}", c.describe(), fb(*with_feedback, " · ")),
                dashed: false,
            })
            .collect(),
        TransitionRule::Condition {
            variable,
            predicate,
            target_node,
            with_feedback,
        } => vec![DrawnEdge {
            target: Some(target_node.clone()),
            label: format!(
                "{variable} {}{}",
                predicate.describe(),
                fb(*with_feedback, " · ")
            ),
            dashed: false,
        }],
        TransitionRule::Always {
            target_node,
            with_feedback,
        } => vec![DrawnEdge {
            target: Some(target_node.clone()),
            label: format!("otherwise{}", fb(*with_feedback, " · ")),
            dashed: false,
        }],
        TransitionRule::Bounded {
            budget,
            otherwise,
            escalation_with_feedback,
            inner,
            ..
        } => {
            let mut edges: Vec<DrawnEdge> = rule_edges(inner)
                .into_iter()
                .map(|e| {
                    let label = match inner.as_ref() {
                        TransitionRule::Failure { .. } => format!("retry ≤{budget}"),
                        _ if e.label.is_empty() => format!("revise ≤{budget}"),
                        _ => format!("{} · revise ≤{budget}", e.label),
                    };
                    DrawnEdge {
                        target: e.target,
                        label,
                        dashed: e.dashed,
                    }
                })
                .collect();
            edges.push(DrawnEdge {
                target: Some(otherwise.clone()),
                label: format!("budget exhausted{}", fb(*escalation_with_feedback, " · ")),
                dashed: true,
            });
            edges
        }
        TransitionRule::RubricFail => Vec::new(),
        TransitionRule::ReviewTimeout { target_node } => vec![DrawnEdge {
            target: Some(target_node.clone()),
            label: "review timeout".into(),
            dashed: true,
        }],
    }
}

pub fn node_edges(node: &Node) -> Vec<DrawnEdge> {
    let mut edges = Vec::new();
    if let Node::Fork(f) = node {
        edges.extend(f.targets.iter().map(|t| DrawnEdge {
            target: Some(t.clone()),
            label: "fork".into(),
            dashed: false,
        }));
    }
    for rule in node.transition_rules() {
        edges.extend(rule_edges(rule));
    }
    // A signal wait's two ways out are its signal and its timeout (docs/language.md, *Timers
    // and signals*).
    if let Node::Wait(w) = node
        && w.signal().is_some()
    {
        for e in &mut edges {
            e.label = match (e.dashed, e.label.as_str()) {
                (true, "failure") => "timeout".into(),
                (false, "") => "signal".into(),
                _ => std::mem::take(&mut e.label),
            };
        }
    }
    edges
}

/// One drawn connection: every edge from `from` to `to` (a self-loop when they are equal),
/// merged into one line with all their labels, so a drawing never stacks two lines (or two
/// labels) on the same pair of nodes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Connection {
    pub from: String,
    pub to: String,
    /// The non-empty labels of the merged edges, in rule order.
    pub labels: Vec<String>,
    /// Dashed only when every merged edge is (failure, no-consensus, escalation edges).
    pub dashed: bool,
}

/// The connections of `workflow` in [`bfs_order`], each attributed to the node whose rule (or
/// fork target) it is; edges to nodes the workflow does not have are left out.
pub fn connections(workflow: &Workflow) -> Vec<Connection> {
    let mut out: Vec<Connection> = Vec::new();
    for (node, _) in bfs_order(workflow) {
        for e in timed_node_edges(workflow, node) {
            let to = e.target.unwrap_or_else(|| node.id().to_string());
            if !workflow.nodes.contains_key(&to) {
                continue;
            }
            let label = (!e.label.is_empty()).then_some(e.label);
            match out.iter_mut().find(|g| g.from == node.id() && g.to == to) {
                Some(g) => {
                    g.labels.extend(label);
                    g.dashed &= e.dashed;
                }
                None => out.push(Connection {
                    from: node.id().to_string(),
                    to,
                    labels: label.into_iter().collect(),
                    dashed: e.dashed,
                }),
            }
        }
    }
    out
}

/// [`node_edges`] with the workflow's timing: a self-retry with backoff says how long it waits
/// first (docs/language.md, *Timeouts and backoff*).
pub fn timed_node_edges(workflow: &Workflow, node: &Node) -> Vec<DrawnEdge> {
    let mut edges = node_edges(node);
    if let Some(ms) = workflow.timing.of(node.id()).backoff_ms {
        for e in edges.iter_mut().filter(|e| e.label.starts_with("retry ≤")) {
            e.label.push_str(&format!(" · backoff {}", describe_ms(ms)));
        }
    }
    edges
}

/// [`node_details`] with the node's `timeout` (a join's is among its own details).
pub fn timed_node_details(workflow: &Workflow, node: &Node) -> Vec<(String, String)> {
    let mut lines = node_details(node);
    if let Some(ms) = workflow.timing.of(node.id()).timeout_ms {
        lines.push(("timeout".into(), describe_ms(ms)));
    }
    lines
}

/// `2s`, `1500ms`.
fn describe_ms(ms: u64) -> String {
    if ms >= 1000 && ms.is_multiple_of(1000) {
        format!("{}s", ms / 1000)
    } else {
        format!("{ms}ms")
    }
}

pub fn node_details(node: &Node) -> Vec<(String, String)> {
    let mut lines = Vec::new();
    match node {
        Node::Standard(n) => {
            if let Some(agent) = &n.agent_id {
                lines.push(("agent".into(), agent.clone()));
            }
            if let Some(r) = &n.rubric {
                lines.push(("rubric".into(), format!("{} criteria", r.criteria.len())));
            }
            if let Some(r) = &n.review_config {
                lines.push(("review".into(), r.mode.as_str().to_string()));
            }
            if !n.writes.is_empty() {
                lines.push(("writes".into(), n.writes.join(", ")));
            }
        }
        Node::Parallel(p) => {
            lines.push(("branches".into(), p.branches.len().to_string()));
            for b in &p.branches {
                // A dependency DAG's order and conditions (docs/language.md, *Dependency DAGs*).
                let mut line = format!("  • {} ({})", b.id, b.agent_id);
                if !b.after.is_empty() {
                    line.push_str(&format!(" after {}", b.after.join(", ")));
                }
                if let Some(flag) = &b.run_if {
                    line.push_str(&format!(" if {flag}"));
                }
                lines.push((String::new(), line));
            }
            if let Some(c) = &p.consensus_config {
                lines.push(("consensus".into(), c.strategy.as_str().to_string()));
            }
        }
        Node::Fork(f) => {
            lines.push(("targets".into(), f.targets.len().to_string()));
            for t in &f.targets {
                lines.push((String::new(), format!("  • {t}")));
            }
            lines.push(("wait all".into(), f.wait_for_all.to_string()));
        }
        Node::Join(j) => {
            lines.push(("awaiting".into(), j.await_targets.len().to_string()));
            for t in &j.await_targets {
                lines.push((String::new(), format!("  • {t}")));
            }
            lines.push(("merge".into(), j.merge_strategy.as_str().to_string()));
            lines.push(("writes".into(), j.writes.join(", ")));
        }
        Node::Generic(g) => {
            lines.push(("executor".into(), g.executor_type.clone()));
            lines.push(("config".into(), format!("{} entries", g.config.len())));
            if let Some(r) = &g.rubric {
                lines.push(("rubric".into(), format!("{} criteria", r.criteria.len())));
            }
        }
        Node::Action(a) => {
            lines.push(("actions".into(), a.actions.len().to_string()));
            for action in &a.actions {
                let text = match action {
                    Action::Send { handler_id, .. } => format!("  • Send {handler_id}"),
                    Action::Execute { command_id } => format!("  • Execute {command_id}"),
                };
                lines.push((String::new(), text));
            }
            if !a.writes.is_empty() {
                lines.push(("writes".into(), a.writes.join(", ")));
            }
        }
        Node::SubWorkflow(s) => {
            lines.push(("workflow".into(), s.workflow_id.clone()));
            if let Some(v) = &s.target_version {
                lines.push(("version".into(), v.clone()));
            }
        }
        Node::Map(m) => {
            lines.push(("over".into(), m.over.clone()));
            if let Some(a) = &m.agent_id {
                lines.push(("agent".into(), a.clone()));
            }
            if let Some(t) = &m.target {
                lines.push(("workflow".into(), t.clone()));
            }
            lines.push(("parallel".into(), m.max_parallel.to_string()));
            lines.push((
                "max items".into(),
                m.max_items.map_or("unbounded".into(), |n| n.to_string()),
            ));
            lines.push(("if failed".into(), m.on_item_failure.as_str().to_string()));
            if !m.writes.is_empty() {
                lines.push(("writes".into(), m.writes.join(", ")));
            }
        }
        Node::End(e) => lines.push(("exit".into(), e.status.as_str().to_string())),
        Node::Wait(w) => {
            let (key, text) = match &w.wait {
                WaitFor::Duration { ms } => ("wait", describe_ms(*ms)),
                WaitFor::Until { template } => ("until", template.clone()),
                WaitFor::Signal { name, timeout_ms } => (
                    "signal",
                    match timeout_ms {
                        Some(t) => format!("{name} (timeout {})", describe_ms(*t)),
                        None => name.clone(),
                    },
                ),
            };
            lines.push((key.into(), text));
            if !w.writes.is_empty() {
                lines.push(("writes".into(), w.writes.join(", ")));
            }
        }
    }
    lines
}
