//! W0316: a prompt reads a variable that no node can have written before it. The analysis is a
//! "may be written" reachability: a variable is possibly set at node N when some path from a
//! node that writes it reaches N in at least one step (a node's own write happens after its
//! prompt is rendered). When no such path exists the placeholder renders as an empty string on
//! every run (docs/language.md, *Prompts and templates*).
//!
//! Inputs, engine variables and undeclared names (E0403) are not considered. A generic node
//! (whose handler may write any variable) turns the check off for the workflow, so it never
//! reports a variable that is in fact written. One breadth-first search per variable read in a
//! prompt; a workflow where that would exceed [`MAX_WORK`] steps is not analysed.

use std::collections::VecDeque;

use hensu_diagnostics::{Diagnostic, codes};
use hensu_ir::{Node, is_engine_variable};

use super::Ctx;
use super::fxhash::FxHashMap;
use super::graph::NodeGraph;

/// At most this many (variable × graph size) steps.
const MAX_WORK: usize = 20_000_000;

pub(super) fn check(cx: &mut Ctx<'_>, g: &NodeGraph<'_>) {
    let wf = cx.wf;
    let Some(schema) = &wf.state_schema else {
        return;
    };
    // An unknown target (E0204) or a node without transitions (E0310) cuts paths: a read
    // would look unwritten only because of that error.
    let graph_incomplete = cx
        .diagnostics
        .iter()
        .any(|d| codes::E0204 == d.code || codes::E0310 == d.code);
    if graph_incomplete || wf.nodes.values().any(|n| matches!(n, Node::Generic(_))) {
        return;
    }
    // Writers of each variable, by node index.
    let mut writers: FxHashMap<&str, Vec<usize>> = FxHashMap::default();
    for (i, node) in wf.nodes.values().enumerate() {
        for name in super::access::node_writes(node, Some(schema)) {
            writers.entry(name).or_default().push(i);
        }
    }
    let tracked = |name: &str| {
        !is_engine_variable(name)
            && schema
                .variables
                .iter()
                .any(|v| v.name == name && !v.is_input)
    };
    // Reads: the placeholders of standard node prompts, by variable.
    let mut reads: Vec<(&str, usize, &str)> = Vec::new(); // (variable, node index, node id)
    for (i, (id, node)) in wf.nodes.iter().enumerate() {
        if !matches!(node, Node::Standard(_)) {
            continue;
        }
        let Some(origin) = cx.node_origin(id) else {
            continue;
        };
        for (name, _) in &origin.placeholders {
            if tracked(name) && !reads.iter().any(|(v, n, _)| v == name && *n == i) {
                reads.push((name.as_str(), i, id.as_str()));
            }
        }
    }
    let size = g.graph.node_count() + g.graph.edge_count();
    let mut variables: Vec<&str> = reads.iter().map(|(v, _, _)| *v).collect();
    variables.sort_unstable();
    variables.dedup();
    if variables.len().saturating_mul(size) > MAX_WORK {
        return;
    }
    let mut possibly_written: FxHashMap<&str, Vec<bool>> = FxHashMap::default();
    for v in variables {
        let mut seen = vec![false; g.graph.node_count()];
        let mut queue: VecDeque<petgraph::graph::NodeIndex> = VecDeque::new();
        for &w in writers.get(v).map(Vec::as_slice).unwrap_or(&[]) {
            queue.push_back(petgraph::graph::NodeIndex::new(w));
        }
        // `seen[n]`: n is reached in at least one step from a writer.
        while let Some(n) = queue.pop_front() {
            for next in g.graph.neighbors(n) {
                if let Some(s) = seen.get_mut(next.index())
                    && !*s
                {
                    *s = true;
                    queue.push_back(next);
                }
            }
        }
        possibly_written.insert(v, seen);
    }
    for (variable, node, id) in reads {
        let written = possibly_written
            .get(variable)
            .and_then(|s| s.get(node).copied())
            .unwrap_or(true);
        if written {
            continue;
        }
        let span = cx
            .node_origin(id)
            .and_then(|o| o.placeholders.iter().find(|(n, _)| n == variable))
            .map(|(_, s)| *s)
            .unwrap_or_else(|| cx.prop_span(id, "prompt"));
        let has_writer = writers.contains_key(variable);
        let d = Diagnostic::new(
            codes::W0316,
            format!("`{{{variable}}}` is read before any node writes it"),
            span,
            if has_writer {
                "no path from a node that writes it leads here"
            } else {
                "no node writes this variable"
            },
        )
        .with_note("the placeholder renders as an empty string")
        .with_help(format!(
            "write `{variable}` in a node that runs before `{id}`, or declare it with `input(\"{variable}\", …)`"
        ));
        cx.emit(d);
    }
}
