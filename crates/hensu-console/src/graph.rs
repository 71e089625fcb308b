//! The workflow graph as inline SVG, drawn on the server. The placement is a layered
//! (Sugiyama-style) layout from the `layout-rs` crate: nodes in ranks from the start node down,
//! crossings reduced, back edges (revise loops, rejections, backtracks) routed around the ranks
//! they skip, and each edge label placed as a box of its own in the layout, so a label never
//! overlaps a node or another label and is never cut. The connections and their labels are
//! `hensuc graph`'s ([`hensu_ir::connections`]).
//!
//! No script draws it, so it shows without JavaScript; every node is a link to its details,
//! reachable by keyboard. A run's page marks the visited nodes, the current node, and the
//! edges the run took (consecutive visits on its path) apart from the edges it did not take.

use std::collections::{HashMap, HashSet};

use hensu_ir::{Connection, Node, Workflow, bfs_order, connections};
use layout::core::base::Orientation;
use layout::core::color::Color;
use layout::core::format::{ClipHandle, RenderBackend};
use layout::core::geometry::Point;
use layout::core::style::{LineStyleKind, StyleAttr};
use layout::std_shapes::shapes::{Arrow, Element, LineEndKind, ShapeKind};
use layout::topo::layout::VisualGraph;
use maud::{Markup, html};

const NODE_W: f64 = 176.0;
const NODE_H: f64 = 50.0;
const MARGIN: f64 = 16.0;
const MAX_ID_CHARS: usize = 22;
/// Longest label line; a longer one ends in `…` (the whole text is in the edge's `<title>`).
const MAX_LABEL_CHARS: usize = 40;
/// The width and height layout-rs reserves per label character and line (the SVG draws
/// labels at 11px, about 6.5px a character, so a reserved box always holds its text).
const LABEL_FONT: usize = 10;

/// What to mark on the drawing: the nodes a run visited, where it is now, and the edges it
/// took (`(from, to)` of consecutive visits).
#[derive(Default)]
pub struct Marks<'a> {
    pub visited: HashSet<&'a str>,
    pub current: Option<&'a str>,
    pub taken: HashSet<(&'a str, &'a str)>,
}

impl<'a> Marks<'a> {
    /// The marks of a run whose visits were `path`, in order.
    pub fn of_path(path: &[&'a str], current: Option<&'a str>) -> Marks<'a> {
        Marks {
            visited: path.iter().copied().chain(current).collect(),
            current,
            taken: path.windows(2).map(|w| (w[0], w[1])).collect(),
        }
    }
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

/// A placed node box (top-left corner and size, in drawing coordinates).
#[derive(Clone, Debug, PartialEq)]
pub struct PlacedNode {
    pub id: String,
    pub x: f64,
    pub y: f64,
    pub w: f64,
    pub h: f64,
}

/// A placed connection: its SVG path from `from` to `to`, its label lines and where they go.
#[derive(Clone, Debug, PartialEq)]
pub struct PlacedEdge {
    pub from: String,
    pub to: String,
    /// The path as SVG `d`, drawn from `from` to `to` (the arrowhead is at `to`).
    pub d: String,
    /// The first and last point of the path.
    pub start: (f64, f64),
    pub end: (f64, f64),
    pub labels: Vec<String>,
    /// The centre of the label block, when there are labels.
    pub label_at: Option<(f64, f64)>,
    pub dashed: bool,
}

/// The whole drawing: every node and connection of a workflow, placed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Drawing {
    pub width: f64,
    pub height: f64,
    pub nodes: Vec<PlacedNode>,
    pub edges: Vec<PlacedEdge>,
}

/// One segment list as layout-rs gives it: the first pair is (start, exit control point),
/// every further pair (entry control point, point).
type Segments = Vec<(Point, Point)>;

/// A layout-rs backend that keeps the geometry instead of drawing it. Nodes are known by
/// their `properties` (`n<index>`), edges by theirs (`e<index>`). An edge's label is a
/// connector of its own on the edge's path (layout-rs may move it to another connector of the
/// same path), drawn as text: node texts are drawn in the nodes' style (colour 0) and left
/// out, the labels are matched to their edges afterwards ([`Capture::match_labels`]).
#[derive(Default)]
struct Capture {
    rects: HashMap<usize, (Point, Point)>,
    arrows: HashMap<usize, (Segments, (bool, bool))>,
    texts: Vec<(Point, String)>,
    labels: HashMap<usize, Point>,
}

impl Capture {
    /// Each label text goes to the edge with that text whose path passes nearest to it.
    fn match_labels(&mut self, texts: &HashMap<usize, String>) {
        for (at, text) in std::mem::take(&mut self.texts) {
            let nearest = texts
                .iter()
                .filter(|(k, t)| *t == &text && !self.labels.contains_key(k))
                .filter_map(|(k, _)| {
                    let (segments, _) = self.arrows.get(k)?;
                    let d = segments
                        .iter()
                        .flat_map(|(a, b)| [a.distance_to(at), b.distance_to(at)])
                        .fold(f64::MAX, f64::min);
                    Some((*k, d))
                })
                .min_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
            if let Some((k, _)) = nearest {
                self.labels.insert(k, at);
            }
        }
    }
}

fn index_of(properties: Option<&str>, prefix: char) -> Option<usize> {
    properties?.strip_prefix(prefix)?.parse().ok()
}

/// The colour of the node boxes' style: their texts are not labels.
const NODE_COLOR: u32 = 0;

fn is_node_text(look: &StyleAttr) -> bool {
    look.line_color.to_web_color() == Color::new(NODE_COLOR).to_web_color()
}

impl RenderBackend for Capture {
    fn draw_rect(
        &mut self,
        xy: Point,
        size: Point,
        _look: &StyleAttr,
        properties: Option<String>,
        _clip: Option<ClipHandle>,
    ) {
        if let Some(i) = index_of(properties.as_deref(), 'n') {
            self.rects.insert(i, (xy, size));
        }
    }

    fn draw_line(&mut self, _: Point, _: Point, _: &StyleAttr, _: Option<String>) {}

    fn draw_circle(&mut self, _: Point, _: Point, _: &StyleAttr, _: Option<String>) {}

    fn draw_text(&mut self, xy: Point, text: &str, look: &StyleAttr) {
        if !is_node_text(look) && !text.is_empty() {
            self.texts.push((xy, text.to_string()));
        }
    }

    fn draw_arrow(
        &mut self,
        path: &[(Point, Point)],
        _dashed: bool,
        head: (bool, bool),
        _look: &StyleAttr,
        properties: Option<String>,
        _text: &str,
    ) {
        if let Some(i) = index_of(properties.as_deref(), 'e')
            && path.len() >= 2
        {
            self.arrows.insert(i, (path.to_vec(), head));
        }
    }

    fn create_clip(&mut self, _: Point, _: Point, _: usize) -> ClipHandle {
        0
    }
}

/// `segments` reversed: the same curve, drawn from its other end.
fn reversed(segments: &Segments) -> Segments {
    // Points p0..pn with control points: c0 leaves p0, (a_i, p_i) enter p_i, and each point's
    // exit control is the mirror of its entry one (SVG `S`).
    let n = segments.len();
    let points: Vec<Point> = std::iter::once(segments[0].0)
        .chain(segments[1..].iter().map(|s| s.1))
        .collect();
    let mut entry: Vec<Point> = vec![Point::zero(); n];
    let mut exit: Vec<Point> = vec![Point::zero(); n];
    exit[0] = segments[0].1;
    for i in 1..n {
        entry[i] = segments[i].0;
        exit[i] = points[i].add(points[i].sub(entry[i]));
    }
    // Reversed, point j = old n-1-j; its exit control is the old entry control, its entry
    // control the old exit control.
    let mut out: Segments = Vec::with_capacity(n);
    out.push((points[n - 1], entry[n - 1]));
    for j in 1..n {
        let old = n - 1 - j;
        out.push((exit[old], points[old]));
    }
    out
}

fn svg_path(segments: &Segments) -> String {
    let mut d = format!(
        "M{:.1},{:.1} C{:.1},{:.1} {:.1},{:.1} {:.1},{:.1}",
        segments[0].0.x,
        segments[0].0.y,
        segments[0].1.x,
        segments[0].1.y,
        segments[1].0.x,
        segments[1].0.y,
        segments[1].1.x,
        segments[1].1.y
    );
    for s in &segments[2..] {
        d.push_str(&format!(
            " S{:.1},{:.1} {:.1},{:.1}",
            s.0.x, s.0.y, s.1.x, s.1.y
        ));
    }
    d
}

fn label_lines(edge: &Connection) -> Vec<String> {
    edge.labels
        .iter()
        .map(|l| truncate(l, MAX_LABEL_CHARS))
        .collect()
}

/// Lays `workflow` out: every node and every connection, placed by layout-rs.
pub fn layout(workflow: &Workflow) -> Drawing {
    let order = bfs_order(workflow);
    if order.is_empty() {
        return Drawing::default();
    }
    let index: HashMap<&str, usize> = order
        .iter()
        .enumerate()
        .map(|(i, (n, _))| (n.id(), i))
        .collect();
    let edges = connections(workflow);
    let texts: HashMap<usize, String> = edges
        .iter()
        .enumerate()
        .map(|(k, e)| (k, label_lines(e).join("\n")))
        .collect();
    let mut vg = VisualGraph::new(Orientation::TopToBottom);
    let mut node_look = StyleAttr::simple();
    node_look.line_color = Color::new(NODE_COLOR);
    let handles: Vec<_> = order
        .iter()
        .enumerate()
        .map(|(i, (node, _))| {
            vg.add_node(Element::create_with_properties(
                ShapeKind::new_box(node.id()),
                node_look.clone(),
                Orientation::TopToBottom,
                Point::new(NODE_W, NODE_H),
                format!("n{i}"),
            ))
        })
        .collect();
    for (k, e) in edges.iter().enumerate() {
        let (Some(&a), Some(&b)) = (index.get(e.from.as_str()), index.get(e.to.as_str())) else {
            continue;
        };
        let mut look = StyleAttr::simple();
        look.font_size = LABEL_FONT;
        let text = &texts[&k];
        let arrow = Arrow::with_properties(
            LineEndKind::None,
            LineEndKind::Arrow,
            if e.dashed {
                LineStyleKind::Dashed
            } else {
                LineStyleKind::Normal
            },
            text,
            &look,
            format!("e{k}"),
            &None,
            &None,
        );
        vg.add_edge(arrow, handles[a], handles[b]);
    }
    let mut capture = Capture::default();
    // Ranks, crossing reduction and label boxes, without layout-rs's final alignment passes
    // (Brandes-Köpf and its edge straightening): those assert on small graphs with a back
    // edge to the start (`edge_fixer.rs`, found by the random-graph test), and a panic in
    // `hensuc serve` ends the process.
    vg.do_it(false, false, true, &mut capture);
    capture.match_labels(&texts);
    place(&order, &edges, capture)
}

/// The bounding box (min, max) of everything captured: boxes, curves and label blocks.
fn bounds(edges: &[Connection], capture: &Capture) -> Option<(Point, Point)> {
    let mut points: Vec<Point> = Vec::new();
    for (xy, size) in capture.rects.values() {
        points.extend([*xy, xy.add(*size)]);
    }
    for (segments, _) in capture.arrows.values() {
        points.extend(segments.iter().flat_map(|(a, b)| [*a, *b]));
    }
    for (k, at) in &capture.labels {
        let lines = edges.get(*k).map(label_lines).unwrap_or_default();
        let chars = lines.iter().map(|l| l.chars().count()).max().unwrap_or(0);
        let half = Point::new(
            chars as f64 * LABEL_FONT as f64 / 2.0,
            lines.len() as f64 * 7.0,
        );
        points.extend([at.sub(half), at.add(half)]);
    }
    let first = *points.first()?;
    Some(points.iter().fold((first, first), |(lo, hi), p| {
        (
            Point::new(lo.x.min(p.x), lo.y.min(p.y)),
            Point::new(hi.x.max(p.x), hi.y.max(p.y)),
        )
    }))
}

/// The captured geometry, moved so the drawing starts at the margin.
fn place(order: &[(&Node, usize)], edges: &[Connection], capture: Capture) -> Drawing {
    let Some((lo, hi)) = bounds(edges, &capture) else {
        return Drawing::default();
    };
    let shift = Point::new(MARGIN - lo.x, MARGIN - lo.y);
    let nodes = order
        .iter()
        .enumerate()
        .filter_map(|(i, (node, _))| {
            let (xy, size) = capture.rects.get(&i)?;
            let at = xy.add(shift);
            Some(PlacedNode {
                id: node.id().to_string(),
                x: at.x,
                y: at.y,
                w: size.x,
                h: size.y,
            })
        })
        .collect();
    let edges = edges
        .iter()
        .enumerate()
        .filter_map(|(k, e)| {
            let (segments, head) = capture.arrows.get(&k)?;
            // layout-rs turns a back edge around to lay it out (its head is then at the
            // start): drawn from its own source again, so the arrowhead is at its target.
            let segments = if head.0 && !head.1 {
                reversed(segments)
            } else {
                segments.clone()
            };
            let segments: Segments = segments
                .iter()
                .map(|(a, b)| (a.add(shift), b.add(shift)))
                .collect();
            let (first, last) = (segments[0].0, segments[segments.len() - 1].1);
            Some(PlacedEdge {
                from: e.from.clone(),
                to: e.to.clone(),
                d: svg_path(&segments),
                start: (first.x, first.y),
                end: (last.x, last.y),
                labels: label_lines(e),
                label_at: capture
                    .labels
                    .get(&k)
                    .map(|p| (p.x + shift.x, p.y + shift.y)),
                dashed: e.dashed,
            })
        })
        .collect();
    Drawing {
        width: (hi.x - lo.x + 2.0 * MARGIN).ceil(),
        height: (hi.y - lo.y + 2.0 * MARGIN).ceil(),
        nodes,
        edges,
    }
}

/// The SVG of `workflow`; node links go to `#node-<id>` of `link_base` (a page URL).
pub fn render(workflow: &Workflow, marks: &Marks<'_>, link_base: &str) -> Markup {
    let drawing = layout(workflow);
    let nodes: HashMap<&str, &Node> = workflow.nodes.values().map(|n| (n.id(), n)).collect();
    let line_h = 13.0;
    html! {
        svg.graph xmlns="http://www.w3.org/2000/svg" role="group"
            aria-label={ "Graph of workflow " (workflow.id) }
            viewBox={ "0 0 " (drawing.width) " " (drawing.height) }
            width=(drawing.width) height=(drawing.height) {
            defs {
                marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="9"
                    markerHeight="9" markerUnits="userSpaceOnUse" orient="auto-start-reverse" {
                    path d="M0,0 L10,5 L0,10 z" class="arrowhead" {}
                }
                marker id="arrow-taken" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="10"
                    markerHeight="10" markerUnits="userSpaceOnUse" orient="auto-start-reverse" {
                    path d="M0,0 L10,5 L0,10 z" class="arrowhead taken" {}
                }
            }
            g.edges aria-hidden="true" {
                @for e in &drawing.edges {
                    @let taken = marks.taken.contains(&(e.from.as_str(), e.to.as_str()));
                    path d=(e.d) data-from=(e.from) data-to=(e.to)
                        class={ "edge" @if e.dashed { " dashed" } @if taken { " taken" } @else if !marks.taken.is_empty() { " not-taken" } }
                        marker-end=(if taken { "url(#arrow-taken)" } else { "url(#arrow)" }) {
                        title { (e.from) " → " (e.to) @if !e.labels.is_empty() { ": " (e.labels.join(" / ")) } }
                    }
                }
                @for e in &drawing.edges {
                    @if let Some((x, y)) = e.label_at {
                        @let top = y - (e.labels.len() as f64 - 1.0) * line_h / 2.0 + 4.0;
                        text.edge-label x=(format!("{x:.1}")) y=(format!("{top:.1}")) text-anchor="middle" {
                            @for (i, l) in e.labels.iter().enumerate() {
                                tspan x=(format!("{x:.1}")) dy=(if i == 0 { 0.0 } else { line_h }) { (l) }
                            }
                        }
                    }
                }
            }
            @for p in &drawing.nodes {
                @if let Some(node) = nodes.get(p.id.as_str()) {
                    @let id = p.id.as_str();
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
                    @let (cx, w) = (p.x + p.w / 2.0, p.w);
                    a href={ (link_base) "#node-" (id) } class=(class) data-node=(id)
                        aria-label={ "Node " (id) ", " (subtitle(node)) (state) } {
                        title { (id) " (" (node.kind_name()) ")" }
                        rect x=(format!("{:.1}", p.x)) y=(format!("{:.1}", p.y)) width=(w) height=(p.h)
                            rx=(if node.is_end() { 25 } else { 8 }) {}
                        text.node-id x=(format!("{cx:.1}")) y=(format!("{:.1}", p.y + 21.0)) text-anchor="middle" {
                            (truncate(id, MAX_ID_CHARS))
                        }
                        text.node-sub x=(format!("{cx:.1}")) y=(format!("{:.1}", p.y + 38.0)) text-anchor="middle" {
                            (truncate(&subtitle(node), 26))
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
#[path = "graph_tests.rs"]
mod tests;
