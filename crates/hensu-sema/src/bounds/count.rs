//! Worst-case executions per node of one workflow run, from [`Edges`] (docs/bounds.md).
//!
//! Forward edges must form a DAG: a cycle of forward edges has no budget (W0303) and every node
//! it reaches is unbounded. A run is then a sequence of forward walks, each started by the start
//! node or by a budgeted edge firing. A budgeted edge `e` (owner `o`, budget `N`) fires at most
//! `N` times per *epoch* of `o`'s counter, and the counter resets only when `o` moves forward;
//! `o` is entered again after that only through a budgeted edge `e'` of another owner whose body
//! (target →* owner) contains `o`. So `F(e) = N × (1 + Σ F(e'))`. Such an `e'` has its owner
//! strictly after `o` in topological order, so the recurrence is well-founded. One forward walk
//! from `s` visits `n` at most `visits(s, n)` times (one path, but every fork target runs), and
//! `V(n) = visits(start, n) + Σ F(e) × visits(target(e), n)`.

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
    let n = edges.len();
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
    let reach_target: Vec<Vec<bool>> = live
        .iter()
        .map(|&k| reachable(edges, &[edges.budgeted[k].target]))
        .collect();
    let mut by_owner_desc: Vec<usize> = (0..live.len()).collect();
    by_owner_desc.sort_by_key(|&j| std::cmp::Reverse(position[edges.budgeted[live[j]].owner]));
    let mut reach_owner: std::collections::HashMap<usize, Vec<bool>> = Default::default();
    let mut fired = vec![Count::Finite(0); live.len()];
    for &j in &by_owner_desc {
        let e = &edges.budgeted[live[j]];
        let mut epochs = Count::Finite(1);
        for (jj, &k2) in live.iter().enumerate() {
            let e2 = &edges.budgeted[k2];
            if e2.owner == e.owner || !reach_target[jj][e.owner] {
                continue;
            }
            let from_owner = reach_owner
                .entry(e.owner)
                .or_insert_with(|| reachable(edges, &[e.owner]));
            if from_owner[e2.owner] {
                epochs = epochs.add(fired[jj]);
            }
        }
        fired[j] = epochs.mul(e.budget);
    }

    let mut per_node = vec![Count::Finite(0); n];
    for target in 0..n {
        if !from_start[target] {
            continue;
        }
        if unbounded[target] {
            per_node[target] = Count::Unbounded;
            continue;
        }
        let visits = visits_to(edges, &order, target);
        let mut total = Count::Finite(visits[start]);
        for (j, &k) in live.iter().enumerate() {
            total = total.add(fired[j].mul(visits[edges.budgeted[k].target]));
        }
        per_node[target] = total;
    }
    NodeCounts { per_node, cycles }
}

/// `visits[x]`: the most times one forward walk from `x` executes `target` (the walk takes one
/// successor per node, but every fork target runs).
fn visits_to(edges: &Edges, order: &[usize], target: usize) -> Vec<u64> {
    let mut visits = vec![0u64; edges.len()];
    for &x in order.iter().rev() {
        let forward = edges.forward[x]
            .iter()
            .map(|&s| visits[s])
            .max()
            .unwrap_or(0);
        let spawned = edges.spawn[x]
            .iter()
            .fold(0u64, |acc, &s| acc.saturating_add(visits[s]));
        visits[x] = u64::from(x == target)
            .saturating_add(forward)
            .saturating_add(spawned);
    }
    visits
}

/// A topological order of the nodes not marked `skip` (their forward edges form a DAG).
fn topological(edges: &Edges, skip: &[bool]) -> Vec<usize> {
    let n = edges.len();
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

/// Nodes reachable from `from` through forward and spawn edges only (the DAG of the walks).
fn reachable(edges: &Edges, from: &[usize]) -> Vec<bool> {
    let mut seen = vec![false; edges.len()];
    let mut stack: Vec<usize> = from.to_vec();
    while let Some(i) = stack.pop() {
        if !std::mem::replace(&mut seen[i], true) {
            stack.extend(edges.successors(i).filter(|&s| !seen[s]));
        }
    }
    seen
}

/// Marks every node reachable from `from` through forward, spawn and budgeted edges.
fn mark_reachable(edges: &Edges, from: &[usize], seen: &mut [bool]) {
    let mut budgeted: Vec<Vec<usize>> = vec![Vec::new(); edges.len()];
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
