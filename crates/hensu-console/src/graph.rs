//! The workflow graph as inline SVG, drawn on the server with `hensuc graph`'s layout
//! ([`hensu_ir::bfs_order`]: one row per breadth-first depth, nodes in visit order;
//! [`hensu_ir::node_edges`]: the same edges and labels). No script draws it, so it shows
//! without JavaScript; every node is a link to its details, reachable by keyboard.
//!
//! Edges to a deeper row go down; edges along a row are straight; edges back up (revise loops,
//! backtracks) curve out on the right; a retry of the node itself is a small loop.

use std::collections::{BTreeMap, HashMap, HashSet};

use hensu_ir::{Node, Workflow, bfs_order, node_edges};
use maud::{Markup, html};

const NODE_W: f64 = 176.0;
const NODE_H: f64 = 50.0;
const GAP_X: f64 = 36.0;
const GAP_Y: f64 = 64.0;
const MARGIN: f64 = 20.0;
/// Room on the right for edges that go back up.
const BACK_LANE: f64 = 200.0;
const MAX_LABEL_CHARS: usize = 22;

/// What to mark on the drawing: the nodes a run visited and where it is now.
#[derive(Default)]
pub struct Marks<'a> {
    pub visited: HashSet<&'a str>,
    pub current: Option<&'a str>,
}

fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(max.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

/// The second line of a node box: its kind and agent / executor / target.
fn subtitle(node: &Node) -> String {
    let kind = node.kind_name().to_ascii_lowercase().replace('_', " ");
    match node {
        Node::Standard(n) => match &n.agent_id {
            Some(a) => format!("{kind} · {a}"),
            None => kind,
        },
        Node::Parallel(p) => format!("{kind} · {} branches", p.branches.len()),
        Node::Generic(g) => format!("{kind} · {}", g.executor_type),
        Node::SubWorkflow(s) => format!("{kind} · {}", s.workflow_id),
        Node::End(e) => format!("end · {}", e.status.as_str().to_ascii_lowercase()),
        _ => kind,
    }
}

/// A drawn edge: its SVG path, its label (x, y, text, anchor), dashed, taken by the run.
type EdgePath = (String, Option<(f64, f64, String, &'static str)>, bool, bool);

struct Placed {
    x: f64,
    y: f64,
    depth: usize,
}

/// The SVG of `workflow`; node links go to `#node-<id>` of `link_base` (a page URL).
pub fn render(workflow: &Workflow, marks: &Marks<'_>, link_base: &str) -> Markup {
    let order = bfs_order(workflow);
    let mut rows: BTreeMap<usize, Vec<&Node>> = BTreeMap::new();
    for (node, depth) in &order {
        rows.entry(*depth).or_default().push(node);
    }
    let widest = rows.values().map(Vec::len).max().unwrap_or(1).max(1) as f64;
    let row_span = |n: usize| n as f64 * (NODE_W + GAP_X) - GAP_X;
    let content_w = row_span(widest as usize);
    let mut placed: HashMap<&str, Placed> = HashMap::new();
    for (depth, nodes) in &rows {
        let offset = (content_w - row_span(nodes.len())) / 2.0;
        for (i, node) in nodes.iter().enumerate() {
            placed.insert(
                node.id(),
                Placed {
                    x: MARGIN + offset + i as f64 * (NODE_W + GAP_X),
                    y: MARGIN + *depth as f64 * (NODE_H + GAP_Y),
                    depth: *depth,
                },
            );
        }
    }
    let depth_count = rows.keys().max().map_or(1, |d| d + 1);
    let width = content_w + 2.0 * MARGIN + BACK_LANE;
    let height = depth_count as f64 * (NODE_H + GAP_Y) - GAP_Y + 2.0 * MARGIN;

    // Edges between the same two nodes share one path; their labels are joined.
    let mut edges: Vec<(&str, String, Vec<String>, bool)> = Vec::new();
    for (node, _) in &order {
        for e in node_edges(node) {
            let to = e.target.unwrap_or_else(|| node.id().to_string());
            if !placed.contains_key(to.as_str()) {
                continue;
            }
            match edges
                .iter_mut()
                .find(|(f, t, _, _)| *f == node.id() && *t == to)
            {
                Some((_, _, labels, dashed)) => {
                    if !e.label.is_empty() {
                        labels.push(e.label);
                    }
                    *dashed &= e.dashed;
                }
                None => edges.push((
                    node.id(),
                    to,
                    if e.label.is_empty() {
                        vec![]
                    } else {
                        vec![e.label]
                    },
                    e.dashed,
                )),
            }
        }
    }
    let mut back_lane = 0.0;
    let paths: Vec<EdgePath> = edges
        .iter()
        .filter_map(|(from, to, labels, dashed)| {
            let (a, b) = (placed.get(from)?, placed.get(to.as_str())?);
            let taken = marks.visited.contains(from) && marks.visited.contains(to.as_str());
            let label =
                (!labels.is_empty()).then(|| truncate(&labels.join(" / "), MAX_LABEL_CHARS));
            let (d, at) = if from == to {
                let (x, y) = (a.x + NODE_W, a.y);
                (
                    format!(
                        "M{x:.0},{:.0} C{:.0},{:.0} {:.0},{:.0} {x:.0},{:.0}",
                        y + 14.0,
                        x + 42.0,
                        y - 12.0,
                        x + 42.0,
                        y + NODE_H + 12.0,
                        y + NODE_H - 14.0
                    ),
                    (x + 46.0, y + NODE_H / 2.0 + 4.0, "start"),
                )
            } else if b.depth > a.depth {
                let (x1, y1) = (a.x + NODE_W / 2.0, a.y + NODE_H);
                let (x2, y2) = (b.x + NODE_W / 2.0, b.y);
                let mid = (y1 + y2) / 2.0;
                (
                    format!("M{x1:.0},{y1:.0} C{x1:.0},{mid:.0} {x2:.0},{mid:.0} {x2:.0},{y2:.0}"),
                    ((x1 + x2) / 2.0, mid + 4.0, "middle"),
                )
            } else if b.depth == a.depth {
                // Along a row: a straight line between the facing sides.
                let (x1, x2) = if b.x > a.x {
                    (a.x + NODE_W, b.x)
                } else {
                    (a.x, b.x + NODE_W)
                };
                let y = a.y + NODE_H / 2.0;
                (
                    format!("M{x1:.0},{y:.0} L{x2:.0},{y:.0}"),
                    ((x1 + x2) / 2.0, y - 6.0, "middle"),
                )
            } else {
                back_lane += 14.0;
                let lane = (a.x.max(b.x) + NODE_W + 30.0 + back_lane).min(width - 8.0);
                let (x1, y1) = (a.x + NODE_W, a.y + NODE_H / 2.0);
                let (x2, y2) = (b.x + NODE_W, b.y + NODE_H / 2.0);
                (
                    format!(
                        "M{x1:.0},{y1:.0} C{lane:.0},{y1:.0} {lane:.0},{y2:.0} {x2:.0},{y2:.0}"
                    ),
                    (lane - 2.0, (y1 + y2) / 2.0 + 4.0, "start"),
                )
            };
            Some((d, label.map(|l| (at.0, at.1, l, at.2)), *dashed, taken))
        })
        .collect();

    html! {
        svg.graph xmlns="http://www.w3.org/2000/svg" role="group"
            aria-label={ "Graph of workflow " (workflow.id) }
            viewBox={ "0 0 " (width.ceil()) " " (height.ceil()) }
            width=(width.ceil()) height=(height.ceil()) {
            defs {
                marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="9"
                    markerHeight="9" markerUnits="userSpaceOnUse" orient="auto-start-reverse" {
                    path d="M0,0 L10,5 L0,10 z" class="arrowhead" {}
                }
            }
            g.edges aria-hidden="true" {
                @for (d, _, dashed, taken) in &paths {
                    path d=(d) class={ "edge" @if *dashed { " dashed" } @if *taken { " taken" } }
                        marker-end="url(#arrow)" {}
                }
                @for (_, label, _, _) in &paths {
                    @if let Some((x, y, text, anchor)) = label {
                        text.edge-label x=(format!("{x:.0}")) y=(format!("{y:.0}"))
                            text-anchor=(anchor) { (text) }
                    }
                }
            }
            @for (node, _) in &order {
                @if let Some(p) = placed.get(node.id()) {
                    @let id = node.id();
                    @let visited = marks.visited.contains(id);
                    @let current = marks.current == Some(id);
                    @let class = format!(
                        "node kind-{}{}{}{}",
                        node.kind_name().to_ascii_lowercase(),
                        if visited { " visited" } else { "" },
                        if current { " current" } else { "" },
                        if id == workflow.start_node { " start" } else { "" },
                    );
                    @let state = if current { ", current node" } else if visited { ", visited" } else { "" };
                    a href={ (link_base) "#node-" (id) } class=(class) data-node=(id)
                        aria-label={ "Node " (id) ", " (subtitle(node)) (state) } {
                        title { (id) " (" (node.kind_name()) ")" }
                        rect x=(p.x) y=(p.y) width=(NODE_W) height=(NODE_H)
                            rx=(if node.is_end() { 25 } else { 8 }) {}
                        text.node-id x=(p.x + NODE_W / 2.0) y=(p.y + 21.0) text-anchor="middle" {
                            (truncate(id, MAX_LABEL_CHARS))
                        }
                        text.node-sub x=(p.x + NODE_W / 2.0) y=(p.y + 38.0) text-anchor="middle" {
                            (truncate(&subtitle(node), 26))
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncation_keeps_short_text() {
        assert_eq!(truncate("draft", 22), "draft");
        assert_eq!(truncate("abcdefgh", 5), "abcd…");
    }
}
