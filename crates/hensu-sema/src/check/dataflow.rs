//! W0316: a prompt reads a variable that no node can have written before it. The analysis is a
//! "may be written" reachability: a variable is possibly set at node N when some path from a
//! node that writes it reaches N in at least one step (a node's own write happens after its
//! prompt is rendered). When no such path exists the placeholder renders as an empty string on
//! every run (docs/language.md, *Prompts and templates*).
//!
//! Inputs, engine variables and undeclared names (E0403) are not considered. A generic node
//! (whose handler may write any variable) turns the check off for the workflow, so it never
//! reports a variable that is in fact written. One breadth-first search per variable read in a
//! prompt; a workflow where that would exceed [`MAX_WORK`] steps is not analysed. A search
//! stops once it has reached every node that reads its variable, the searches share their
//! buffers and every lookup is hashed (before, each placeholder scanned the schema and the reads
//! found so far: quadratic in the size of the workflow).

use hensu_diagnostics::{Diagnostic, codes};
use hensu_ir::{Node, is_engine_variable};

use super::Ctx;
use super::fxhash::{FxHashMap, FxHashSet};
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
    let state_variables: FxHashSet<&str> = schema
        .variables
        .iter()
        .filter(|v| !v.is_input)
        .map(|v| v.name.as_str())
        .collect();
    let tracked = |name: &str| !is_engine_variable(name) && state_variables.contains(name);
    // Reads: the placeholders of standard node prompts, each (variable, node) once.
    let mut reads: Vec<(&str, usize, &str)> = Vec::new(); // (variable, node index, node id)
    let mut read_once: FxHashSet<(&str, usize)> = FxHashSet::default();
    for (i, (id, node)) in wf.nodes.iter().enumerate() {
        if !matches!(node, Node::Standard(_)) {
            continue;
        }
        let Some(origin) = cx.node_origin(id) else {
            continue;
        };
        for (name, _) in &origin.placeholders {
            if tracked(name) && read_once.insert((name.as_str(), i)) {
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
    // The reads of each variable, answered right after its search (one buffer for all).
    let mut reads_of: FxHashMap<&str, Vec<usize>> = FxHashMap::default();
    for (r, (v, _, _)) in reads.iter().enumerate() {
        reads_of.entry(v).or_default().push(r);
    }
    // One search per variable, stopped as soon as every node that reads it is reached (reads
    // usually follow their writes closely). Stamps instead of cleared buffers: node `n` is
    // reached in the current search when `reached[n] == stamp`, read by its variable when
    // `reading[n] == stamp`.
    let node_count = g.graph.node_count();
    let mut reached = vec![0u32; node_count];
    let mut reading = vec![0u32; node_count];
    let mut unwritten = vec![false; reads.len()];
    let mut pending: Vec<petgraph::graph::NodeIndex> = Vec::new();
    for (stamp, v) in (1u32..).zip(variables) {
        let read_here = reads_of.get(v).map(Vec::as_slice).unwrap_or(&[]);
        let mut unreached = 0usize;
        for &r in read_here {
            if let Some(slot) = reading.get_mut(reads[r].1) {
                *slot = stamp;
                unreached += 1;
            }
        }
        pending.clear();
        for &w in writers.get(v).map(Vec::as_slice).unwrap_or(&[]) {
            pending.push(petgraph::graph::NodeIndex::new(w));
        }
        // `reached[n]`: n is reached in at least one step from a writer.
        'search: while let Some(n) = pending.pop() {
            for next in g.graph.neighbors(n) {
                let i = next.index();
                if let Some(seen) = reached.get_mut(i)
                    && *seen != stamp
                {
                    *seen = stamp;
                    if reading.get(i) == Some(&stamp) {
                        unreached -= 1;
                        if unreached == 0 {
                            break 'search;
                        }
                    }
                    pending.push(next);
                }
            }
        }
        for &r in read_here {
            unwritten[r] = reached.get(reads[r].1).is_some_and(|&seen| seen != stamp);
        }
    }
    for ((variable, _, id), unwritten) in reads.into_iter().zip(unwritten) {
        if !unwritten {
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
