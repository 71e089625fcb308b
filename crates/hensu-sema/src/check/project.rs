//! Project checks over several workflows compiled together: E0501 unknown sub-workflow target,
//! E0502 reference cycle, E0503 child schema mismatch, E0504 version pin mismatch, E0505 duplicate
//! workflow id.

use std::collections::VecDeque;

use hensu_diagnostics::{Diagnostic, FileId, Span, codes};
use hensu_ir::{Node, SubWorkflowNode, Workflow};
use petgraph::algo::kosaraju_scc;
use petgraph::graph::{DiGraph, EdgeIndex, NodeIndex};
use petgraph::visit::EdgeRef;

use super::fxhash::{FxHashMap as HashMap, FxHashSet as HashSet};
use super::graph::render_cycle_path;
use super::{InputKind, ProjectUnit};
use crate::origins::{NodeOrigin, Origins};
use crate::suggest::help_and_fix;

/// At most this many "the cycle continues here" labels per E0502.
const MAX_CYCLE_LABELS: usize = 8;

/// A sub-workflow reference: unit `unit`'s node `node_id` runs the workflow `target` (a
/// sub-workflow node, or a map node's sub-workflow body).
#[derive(Clone, Copy, Debug)]
struct Reference<'a> {
    unit: usize,
    node_id: &'a str,
    target: &'a str,
}

fn workflow_span(o: &Origins) -> Span {
    o.workflow.unwrap_or(o.fallback)
}

fn prop_span(o: &Origins, node: &str, prop: &str) -> Span {
    o.nodes
        .get(node)
        .and_then(|n| n.props.get(prop).copied())
        .unwrap_or_else(|| o.node_id(node))
}

/// Runs the project checks over every unit (E0501–E0505). Diagnostics are in unit order, then
/// source order.
pub fn check_project(units: &[ProjectUnit<'_>]) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    // Workflow id → the units declaring it (in order); the first one is the one referenced.
    let mut by_id: HashMap<&str, Vec<usize>> = HashMap::default();
    for (u, unit) in units.iter().enumerate() {
        by_id.entry(unit.workflow.id.as_str()).or_default().push(u);
    }
    // E0505, in order of the second declaration.
    let mut dups: Vec<(usize, usize)> = Vec::new();
    for list in by_id.values() {
        if let Some((&first, rest)) = list.split_first() {
            dups.extend(rest.iter().map(|&u| (u, first)));
        }
    }
    dups.sort();
    for (u, first) in dups {
        let (unit, original) = (&units[u], &units[first]);
        let id = &unit.workflow.id;
        let d = Diagnostic::new(
            codes::E0505,
            format!("workflow id `{id}` is declared twice"),
            workflow_span(unit.origins),
            "declared again here",
        )
        .in_file(unit.file)
        .with_label_in(
            original.file,
            workflow_span(original.origins),
            "first declared here",
        )
        .with_help("rename one of the workflows: sub-workflow targets resolve by id");
        out.push(d);
    }

    let resolve = |id: &str| by_id.get(id).and_then(|l| l.first().copied());
    let mut graph: DiGraph<usize, Reference<'_>> = DiGraph::with_capacity(units.len(), units.len());
    for u in 0..units.len() {
        graph.add_node(u);
    }
    let mut unit_diags: Vec<Vec<Diagnostic>> = vec![Vec::new(); units.len()];
    for (u, unit) in units.iter().enumerate() {
        for node in unit.workflow.nodes.values() {
            if let Node::Map(m) = node {
                let child = m.target.as_deref().map(|t| (t, resolve(t)));
                if let Some((target, child)) = child {
                    let names: Vec<&str> = by_id.keys().copied().collect();
                    if let Some(c) = child {
                        // A child running its own map body is a cycle too (E0502).
                        let r = Reference {
                            unit: u,
                            node_id: &m.id,
                            target,
                        };
                        graph.add_edge(NodeIndex::new(u), NodeIndex::new(c), r);
                    }
                    let child = child.map(|c| units[c].workflow);
                    let diags = super::map::child(unit.origins, m, target, child, &names);
                    unit_diags[u].extend(diags.into_iter().map(|d| d.in_file(unit.file)));
                }
                continue;
            }
            let Node::SubWorkflow(s) = node else { continue };
            if s.workflow_id.is_empty() {
                continue; // E0105 (the lowering's)
            }
            match resolve(&s.workflow_id) {
                None => {
                    let span = prop_span(unit.origins, &s.id, "target");
                    let d = Diagnostic::new(
                        codes::E0501,
                        format!("unknown sub-workflow `{}`", s.workflow_id),
                        span,
                        "no workflow with this id is compiled with this one",
                    );
                    let (mut d, suggested) =
                        help_and_fix(d, &s.workflow_id, span, by_id.keys().copied());
                    if !suggested {
                        d = d.with_help(
                            "compile the child workflow together with this one (pass its file, \
                             or put it in `workflows/`)",
                        );
                    }
                    unit_diags[u].push(d.in_file(unit.file));
                }
                Some(c) => {
                    graph.add_edge(
                        NodeIndex::new(u),
                        NodeIndex::new(c),
                        Reference {
                            unit: u,
                            node_id: &s.id,
                            target: &s.workflow_id,
                        },
                    );
                    let child = &units[c];
                    version_pin(unit, s, child, &mut unit_diags[u]);
                    child_schema(unit, s, child, &mut unit_diags[u]);
                }
            }
        }
    }
    for cycle in reference_cycles(&graph) {
        let Some(&first) = cycle.first() else {
            continue;
        };
        let Some(r) = graph.edge_weight(first).copied() else {
            continue;
        };
        let d = cycle_diagnostic(units, &graph, &cycle);
        unit_diags[r.unit].push(d);
    }
    for mut diags in unit_diags {
        hensu_diagnostics::sort_diagnostics(&mut diags);
        out.extend(diags);
    }
    // A merged extending workflow has spans of several files (see `crate::extend`).
    out.into_iter().map(|d| place_in_units(units, d)).collect()
}

/// Moves every label of `d` that points into a merged unit's span space into its file.
fn place_in_units(units: &[ProjectUnit<'_>], mut d: Diagnostic) -> Diagnostic {
    let locate = |file: hensu_diagnostics::FileId, span: Span| {
        units
            .iter()
            .find(|u| u.file == file && u.origins.derived.is_some())
            .map_or((file, span), |u| u.origins.locate(span))
    };
    (d.primary.file, d.primary.span) = locate(d.primary.file, d.primary.span);
    for l in &mut d.secondary {
        (l.file, l.span) = locate(l.file, l.span);
    }
    for s in &mut d.suggestions {
        (s.file, s.span) = locate(s.file, s.span);
    }
    d
}

/// E0504: `targetVersion` differs from the child's `version`.
fn version_pin(
    unit: &ProjectUnit<'_>,
    s: &SubWorkflowNode,
    child: &ProjectUnit<'_>,
    out: &mut Vec<Diagnostic>,
) {
    let Some(pin) = &s.target_version else { return };
    if *pin == child.workflow.version {
        return;
    }
    let child_version_span = child
        .origins
        .version
        .unwrap_or_else(|| workflow_span(child.origins));
    let d = Diagnostic::new(
        codes::E0504,
        format!(
            "sub-workflow `{}` is pinned to version \"{pin}\" but declares \"{}\"",
            child.workflow.id, child.workflow.version
        ),
        prop_span(unit.origins, &s.id, "targetVersion"),
        "the pinned version",
    )
    .in_file(unit.file)
    .with_label_in(
        child.file,
        child_version_span,
        format!(
            "`{}` declares version \"{}\"",
            child.workflow.id, child.workflow.version
        ),
    )
    .with_help(format!(
        "set `targetVersion = \"{}\"`, or remove the pin",
        child.workflow.version
    ));
    out.push(d);
}

/// E0503: the child's schema does not declare an imported/written variable, or (for writes) no
/// child standard or join node writes it.
fn child_schema(
    unit: &ProjectUnit<'_>,
    s: &SubWorkflowNode,
    child: &ProjectUnit<'_>,
    out: &mut Vec<Diagnostic>,
) {
    let Some(schema) = &child.workflow.state_schema else {
        return;
    };
    let node_origin = unit.origins.nodes.get(&s.id);
    let fallback = unit.origins.node_id(&s.id);
    let child_state = child
        .origins
        .state
        .unwrap_or_else(|| workflow_span(child.origins));
    let child_id = &child.workflow.id;
    let names = || schema.variables.iter().map(|v| v.name.as_str());
    // Child-side names: imports are `input_mapping` keys, writes are `output_mapping` values.
    let json = unit.origins.input == InputKind::Json;
    // In a `.json` workflow (which upstream runs) a child name the child does not declare is
    // W0321, else E0503.
    let undeclared = |message: String, span: Span, label: String| {
        let d = if json {
            Diagnostic::new(codes::W0321, message, span, label).with_note(
                "the upstream engine accepts this in a JSON workflow; a `.hwf` source is rejected (E0503)",
            )
        } else {
            Diagnostic::new(codes::E0503, message, span, label)
        };
        d.in_file(unit.file)
    };
    // The child-side span of entry `i`: its own list when the name is written apart (JSON).
    let child_span =
        |own: fn(&NodeOrigin) -> &Vec<Span>, shared: fn(&NodeOrigin) -> &Vec<Span>, i| {
            node_origin
                .and_then(|o| own(o).get(i).or_else(|| shared(o).get(i)).copied())
                .unwrap_or(fallback)
        };
    for (i, child_name) in s.input_mapping.keys().enumerate() {
        if schema.variable(child_name).is_some() || hensu_ir::is_engine_variable(child_name) {
            continue;
        }
        let span = child_span(|o| &o.imports_child, |o| &o.imports, i);
        let mut d = undeclared(
            format!("sub-workflow `{child_id}` does not declare imported variable `{child_name}`"),
            span,
            format!("`{child_id}` has no variable with this name"),
        )
        .with_label_in(child.file, child_state, "the child's state schema");
        let suggested;
        (d, suggested) = help_and_fix(d, child_name, span, names());
        if !suggested {
            d = d.with_help(format!(
                "declare `input(\"{child_name}\", …)` in `{child_id}`"
            ));
        }
        out.push(d);
    }
    let mut child_writes: Option<HashSet<&str>> = None;
    for (i, child_name) in s.output_mapping.values().enumerate() {
        if hensu_ir::is_engine_variable(child_name) {
            continue;
        }
        let span = child_span(|o| &o.writes_child, |o| &o.writes, i);
        if schema.variable(child_name).is_none() {
            let mut d = undeclared(
                format!(
                    "sub-workflow `{child_id}` does not declare written variable `{child_name}`"
                ),
                span,
                format!("`{child_id}` has no variable with this name"),
            )
            .with_label_in(child.file, child_state, "the child's state schema");
            (d, _) = help_and_fix(d, child_name, span, names());
            out.push(d);
            continue;
        }
        let writes = child_writes.get_or_insert_with(|| nodes_writing(child.workflow));
        if !writes.contains(child_name.as_str()) {
            let decl = child
                .origins
                .variables
                .get(child_name)
                .map(|v| v.name)
                .unwrap_or(child_state);
            let d = Diagnostic::new(
                codes::E0503,
                format!("no node of sub-workflow `{child_id}` writes `{child_name}`"),
                span,
                "the parent expects the child to write this",
            )
            .in_file(unit.file)
            .with_label_in(child.file, decl, "declared here, but never written")
            .with_help(format!(
                "add `writes(\"{child_name}\")` to a node of `{child_id}`"
            ));
            out.push(d);
        }
    }
}

/// The variables written by a workflow's standard, action, join, map and `awaitSignal` nodes.
fn nodes_writing(wf: &Workflow) -> HashSet<&str> {
    let mut set = HashSet::default();
    for node in wf.nodes.values() {
        match node {
            Node::Standard(n) => set.extend(n.writes.iter().map(String::as_str)),
            Node::Action(a) => set.extend(a.writes.iter().map(String::as_str)),
            Node::Join(j) => set.extend(j.writes.iter().map(String::as_str)),
            Node::Map(m) => set.extend(m.writes.iter().map(String::as_str)),
            Node::Wait(w) => set.extend(w.writes.iter().map(String::as_str)),
            _ => {}
        }
    }
    set
}

/// One cycle per cyclic strongly connected component of the reference graph, as the list of its
/// edges starting at the component's first unit; sorted by that unit.
fn reference_cycles(graph: &DiGraph<usize, Reference<'_>>) -> Vec<Vec<EdgeIndex>> {
    let n = graph.node_count();
    let mut comp = vec![usize::MAX; n];
    let mut roots = Vec::new();
    for (c, scc) in kosaraju_scc(graph).into_iter().enumerate() {
        let Some(&root) = scc.iter().min() else {
            continue;
        };
        if scc.len() > 1 || graph.contains_edge(root, root) {
            for m in &scc {
                comp[m.index()] = c;
            }
            roots.push((root, c));
        }
    }
    roots.sort();
    let mut parent: Vec<Option<EdgeIndex>> = vec![None; n];
    let mut seen = vec![false; n];
    let mut cycles = Vec::new();
    'roots: for (root, c) in roots {
        let mut queue = VecDeque::from([root]);
        seen[root.index()] = true;
        while let Some(v) = queue.pop_front() {
            let mut out: Vec<_> = graph
                .edges(v)
                .filter(|e| comp[e.target().index()] == c)
                .map(|e| (e.id(), e.target()))
                .collect();
            out.sort();
            for (e, w) in out {
                if w == root {
                    let mut edges = vec![e];
                    let mut cur = v;
                    while cur != root {
                        let Some(pe) = parent[cur.index()] else {
                            continue 'roots;
                        };
                        let Some((from, _)) = graph.edge_endpoints(pe) else {
                            continue 'roots;
                        };
                        edges.push(pe);
                        cur = from;
                    }
                    edges.reverse();
                    cycles.push(edges);
                    continue 'roots;
                }
                if !seen[w.index()] {
                    seen[w.index()] = true;
                    parent[w.index()] = Some(e);
                    queue.push_back(w);
                }
            }
        }
    }
    cycles
}

/// E0502 for one cycle: primary label on the first reference, the others as secondary labels.
fn cycle_diagnostic(
    units: &[ProjectUnit<'_>],
    graph: &DiGraph<usize, Reference<'_>>,
    cycle: &[EdgeIndex],
) -> Diagnostic {
    let refs: Vec<Reference<'_>> = cycle
        .iter()
        .filter_map(|&e| graph.edge_weight(e).copied())
        .collect();
    let names: Vec<&str> = refs
        .iter()
        .map(|r| units[r.unit].workflow.id.as_str())
        .collect();
    let path = render_cycle_path(&names);
    let span_of = |r: &Reference<'_>| prop_span(units[r.unit].origins, r.node_id, "target");
    let Some(first) = refs.first() else {
        return Diagnostic::new(
            codes::E0502,
            format!("sub-workflow reference cycle `{path}`"),
            Span::default(),
            "",
        );
    };
    let first_file: FileId = units[first.unit].file;
    let label = if refs.len() == 1 {
        "this workflow runs itself as a sub-workflow".to_string()
    } else {
        format!(
            "`{}` runs `{}` here",
            units[first.unit].workflow.id, first.target
        )
    };
    let mut d = Diagnostic::new(
        codes::E0502,
        format!("sub-workflow reference cycle `{path}`"),
        span_of(first),
        label,
    )
    .in_file(first_file);
    for r in refs.iter().skip(1).take(MAX_CYCLE_LABELS) {
        d = d.with_label_in(units[r.unit].file, span_of(r), "the cycle continues here");
    }
    let hidden = refs.len().saturating_sub(1 + MAX_CYCLE_LABELS);
    if hidden > 0 {
        d = d.with_note(format!(
            "{hidden} more references of the cycle are not shown"
        ));
    }
    d.with_note("a run would recurse until the sub-workflow depth cap (16) fails it")
        .with_help("break the cycle: a workflow must not run itself, directly or through others")
}
