//! Worst-case executions per node of one workflow run, from [`Edges`] (docs/bounds.md).
//!
//! Forward edges must form a DAG: a cycle of forward edges has no budget (W0303) and every node
//! it reaches is unbounded. Number the other nodes in a topological order `pos`. Forward moves
//! only increase `pos`; only budgeted edges go back.
//!
//! * An *epoch* of node `o` ends when `o` moves forward. To run `o` again after that, the walk
//!   must jump from beyond `o` to at or before it: a budgeted edge `e'` that *crosses* `o`,
//!   `pos(target e') ≤ pos(o) < pos(owner e')`. So `epochs(o) ≤ 1 + Σ F(e')` over crossing
//!   edges, whose owners all come after `o`: the recurrence is well-founded.
//! * A budgeted edge `e` (owner `o`, budget `N`) fires at most `N` times per epoch of `o` (its
//!   counter resets only when `o` moves forward): `F(e) = N × epochs(o)`.
//! * Every execution of `n` is an entry: the start, a firing targeting `n`, a forward move of a
//!   predecessor `p` (at most one per epoch of `p`, and at most one per run of `p`), or a spawn
//!   by a fork (every run of the fork). Summed in topological order.

use petgraph::algo::kosaraju_scc;
use petgraph::graph::{DiGraph, NodeIndex};

use super::Count;
use super::edges::Edges;

/// Worst-case executions of each node (index order), and the forward cycles that make some of
/// them unbounded.
#[derive(Debug)]
pub struct NodeCounts {
    pub per_node: Vec<Count>,
    /// Each cycle of forward (unbudgeted) edges, as node indices.
    pub cycles: Vec<Vec<usize>>,
}

pub fn count(edges: &Edges) -> NodeCounts {
    let n = edges.node_count();
    let Some(start) = edges.start else {
        return NodeCounts {
            per_node: vec![Count::Finite(0); n],
            cycles: Vec::new(),
        };
    };
    let mut graph: DiGraph<(), ()> = DiGraph::with_capacity(n, n);
    for _ in 0..n {
        graph.add_node(());
    }
    for i in 0..n {
        for s in edges.successors(i) {
            graph.add_edge(NodeIndex::new(i), NodeIndex::new(s), ());
        }
    }
    let mut cycles: Vec<Vec<usize>> = kosaraju_scc(&graph)
        .into_iter()
        .map(|scc| scc.into_iter().map(NodeIndex::index).collect::<Vec<_>>())
        .filter(|scc| scc.len() > 1 || edges.successors(scc[0]).any(|s| s == scc[0]))
        .collect();
    for c in &mut cycles {
        c.sort_unstable();
    }
    cycles.sort();

    // Unbounded: everything reachable from a forward cycle, and from the target of a budgeted
    // edge whose owner is unbounded (it may fire without end).
    let mut unbounded = vec![false; n];
    let mut frontier: Vec<usize> = cycles.iter().flatten().copied().collect();
    loop {
        mark_reachable(edges, &frontier, &mut unbounded);
        frontier = edges
            .budgeted
            .iter()
            .filter(|e| unbounded[e.owner] && !unbounded[e.target])
            .map(|e| e.target)
            .collect();
        if frontier.is_empty() {
            break;
        }
    }
    let mut from_start = vec![false; n];
    mark_reachable(edges, &[start], &mut from_start);

    let order = topological(edges, &unbounded);
    let mut position = vec![usize::MAX; n];
    for (p, &i) in order.iter().enumerate() {
        position[i] = p;
    }

    // Only edges a run can fire: owner reachable, not unbounded.
    let live: Vec<usize> = (0..edges.budgeted.len())
        .filter(|&k| {
            let e = &edges.budgeted[k];
            from_start[e.owner] && !unbounded[e.owner] && !unbounded[e.target]
        })
        .collect();
    let pos = |i: usize| position[i];
    // epochs(o) = 1 + Σ F(e') over the edges that cross o backwards.
    let mut by_owner_desc: Vec<usize> = (0..live.len()).collect();
    by_owner_desc.sort_by_key(|&j| std::cmp::Reverse(pos(edges.budgeted[live[j]].owner)));
    let mut fired = vec![Count::Finite(0); live.len()];
    let epochs_of = |o: usize, fired: &[Count]| {
        live.iter()
            .enumerate()
            .filter(|&(_, &k)| {
                let e = &edges.budgeted[k];
                pos(e.target) <= pos(o) && pos(o) < pos(e.owner)
            })
            .fold(Count::Finite(1), |acc, (j, _)| acc.plus(fired[j]))
    };
    for &j in &by_owner_desc {
        let e = &edges.budgeted[live[j]];
        fired[j] = epochs_of(e.owner, &fired).scaled(e.budget);
    }

    // Executions of n = entries into n: the start, firings that target n, forward moves of
    // its predecessors (at most one per epoch of the predecessor), spawns by forks.
    // Nodes the main flow reaches (not only inside a fork target's sub-flow): only their moves
    // into a join run it.
    let main_flow = {
        let mut seen = vec![false; n];
        let mut stack = vec![start];
        while let Some(i) = stack.pop() {
            if !std::mem::replace(&mut seen[i], true) {
                stack.extend(edges.forward[i].iter().copied());
                stack.extend(
                    edges
                        .budgeted
                        .iter()
                        .filter(|e| e.owner == i)
                        .map(|e| e.target),
                );
            }
        }
        seen
    };
    let mut per_node = vec![Count::Finite(0); n];
    let mut entries = vec![Count::Finite(0); n];
    entries[start] = Count::Finite(1);
    for (j, &k) in live.iter().enumerate() {
        let t = edges.budgeted[k].target;
        entries[t] = entries[t].plus(fired[j]);
    }
    for &i in &order {
        if !from_start[i] {
            continue;
        }
        let runs = entries[i];
        per_node[i] = runs;
        let moves = min(runs, epochs_of(i, &fired));
        for &s in &edges.forward[i] {
            if edges.join[s] && !main_flow[i] {
                continue;
            }
            entries[s] = entries[s].plus(moves);
        }
        for &s in &edges.spawn[i] {
            entries[s] = entries[s].plus(runs);
        }
    }
    for i in 0..n {
        if from_start[i] && unbounded[i] {
            per_node[i] = Count::Unbounded;
        }
    }
    NodeCounts { per_node, cycles }
}

fn min(a: Count, b: Count) -> Count {
    match (a, b) {
        (Count::Finite(x), Count::Finite(y)) => Count::Finite(x.min(y)),
        (Count::Unbounded, other) | (other, Count::Unbounded) => other,
    }
}

/// A topological order of the nodes not marked `skip` (their forward edges form a DAG).
fn topological(edges: &Edges, skip: &[bool]) -> Vec<usize> {
    let n = edges.node_count();
    let mut indegree = vec![0usize; n];
    for i in (0..n).filter(|&i| !skip[i]) {
        for s in edges.successors(i).filter(|&s| !skip[s]) {
            indegree[s] += 1;
        }
    }
    let mut ready: Vec<usize> = (0..n).filter(|&i| !skip[i] && indegree[i] == 0).collect();
    ready.reverse();
    let mut order = Vec::with_capacity(n);
    while let Some(i) = ready.pop() {
        order.push(i);
        for s in edges.successors(i).filter(|&s| !skip[s]) {
            indegree[s] -= 1;
            if indegree[s] == 0 {
                ready.push(s);
            }
        }
    }
    order
}

/// Marks every node reachable from `from` through forward, spawn and budgeted edges.
fn mark_reachable(edges: &Edges, from: &[usize], seen: &mut [bool]) {
    let mut budgeted: Vec<Vec<usize>> = vec![Vec::new(); edges.node_count()];
    for e in &edges.budgeted {
        budgeted[e.owner].push(e.target);
    }
    let mut stack: Vec<usize> = from.to_vec();
    while let Some(i) = stack.pop() {
        if !std::mem::replace(&mut seen[i], true) {
            stack.extend(edges.successors(i).chain(budgeted[i].iter().copied()));
        }
    }
}
