//! The node graph of a workflow, for the flow checks (W0301, W0302, W0303) and for tools (LSP,
//! graph export): one petgraph node per workflow node (same index as in `Workflow::nodes`), one
//! edge per transition target and per fork target, each edge marked `bounded` when it is the
//! inner edge of a `Bounded` rule (a `revise` back-edge or the self-loop of `onFailure retry`).
//!
//! Every algorithm here is linear in nodes + edges and iterative (no recursion), so a
//! 100,000-node workflow is fine.

use std::collections::VecDeque;

use hensu_ir::{Node, TransitionRule, Workflow};

use super::fxhash::FxHashMap;
use petgraph::Direction;
use petgraph::algo::kosaraju_scc;
use petgraph::graph::{DiGraph, EdgeIndex, NodeIndex};
use petgraph::visit::{EdgeFiltered, EdgeRef};

/// Which target of a rule an edge comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TargetSlot {
    /// The `target_node` of the (inner) rule: `goto "x"` or `revise "x"`.
    Target,
    /// The `j`-th condition of a score rule (of the inner rule for a bounded score arm).
    Condition(usize),
    /// The "current node" of `onFailure retry` (a `Failure` rule without target).
    SelfRetry,
    /// The escalation target of a bounded rule (`… retry N otherwise "x"`).
    Otherwise,
}

/// One target of one rule, as written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RuleTarget<'w> {
    pub slot: TargetSlot,
    /// `None` for [`TargetSlot::SelfRetry`] (the owner node).
    pub target: Option<&'w str>,
    /// Inside a `Bounded` rule's inner rule: the edge is limited by the retry budget.
    pub bounded: bool,
}

/// Every target of a rule with its slot, in [`TransitionRule::targets`] order (for a bounded rule:
/// the inner targets, then the escalation). A bare `Failure` without target (JSON only) is an
/// unbounded self-loop.
pub fn rule_targets(rule: &TransitionRule) -> Vec<RuleTarget<'_>> {
    let mut out = Vec::new();
    for_each_rule_target(rule, &mut |t| out.push(t));
    out
}

/// [`rule_targets`] without allocating: calls `f` for every target of the rule, in order.
pub fn for_each_rule_target<'w>(rule: &'w TransitionRule, f: &mut impl FnMut(RuleTarget<'w>)) {
    visit(rule, false, f);
}

fn visit<'w>(rule: &'w TransitionRule, bounded: bool, f: &mut impl FnMut(RuleTarget<'w>)) {
    let mut push = |slot, target| {
        f(RuleTarget {
            slot,
            target,
            bounded,
        })
    };
    match rule {
        TransitionRule::Success { target_node, .. }
        | TransitionRule::NoConsensus { target_node, .. }
        | TransitionRule::Approval { target_node, .. }
        | TransitionRule::Condition { target_node, .. }
        | TransitionRule::Always { target_node, .. }
        | TransitionRule::ReviewTimeout { target_node } => {
            push(TargetSlot::Target, Some(target_node))
        }
        TransitionRule::Failure { target_node } => match target_node {
            Some(t) => push(TargetSlot::Target, Some(t)),
            None => push(TargetSlot::SelfRetry, None),
        },
        TransitionRule::Score { conditions, .. } => {
            for (j, c) in conditions.iter().enumerate() {
                push(TargetSlot::Condition(j), Some(&c.target_node));
            }
        }
        TransitionRule::Bounded {
            otherwise, inner, ..
        } => {
            visit(inner, true, f);
            f(RuleTarget {
                slot: TargetSlot::Otherwise,
                target: Some(otherwise),
                bounded,
            });
        }
        TransitionRule::RubricFail => {}
    }
}

/// Where an edge comes from in the source node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EdgeSource {
    /// Target `slot` of rule number `rule` of the node's rule list.
    Rule { rule: usize, slot: TargetSlot },
    /// The `i`-th fork target.
    ForkTarget(usize),
}

/// An edge of the node graph.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EdgeInfo {
    pub source: EdgeSource,
    /// The inner edge of a bounded rule: every cycle through it is limited by a retry budget.
    pub bounded: bool,
}

/// A cycle: `nodes[i] → nodes[i + 1]` (and the last back to the first) along `edges[i]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cycle {
    pub nodes: Vec<NodeIndex>,
    pub edges: Vec<EdgeIndex>,
}

/// The node graph of a workflow. Node `i` of the graph is node `i` of `Workflow::nodes`; targets
/// that name no node get no edge (they are E0204).
#[derive(Clone, Debug)]
pub struct NodeGraph<'w> {
    pub graph: DiGraph<&'w str, EdgeInfo>,
    /// The start node, when it exists.
    pub start: Option<NodeIndex>,
    /// Targets (rule targets and fork targets) that name no node, in declaration order.
    pub unknown: Vec<UnknownTarget<'w>>,
    /// Node id → graph node.
    index: FxHashMap<&'w str, NodeIndex>,
}

/// A target that names no node (E0204).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UnknownTarget<'w> {
    pub from: NodeIndex,
    pub source: EdgeSource,
    pub target: &'w str,
    /// Inside a bounded rule's inner rule (a `revise` target).
    pub bounded: bool,
}

impl<'w> NodeGraph<'w> {
    /// Builds the graph: per node, the rule targets in rule order, then the fork targets.
    /// Parallel branches are not nodes; a parallel node's own rules are its edges.
    pub fn build(wf: &'w Workflow) -> NodeGraph<'w> {
        let edge_count: usize = wf
            .nodes
            .values()
            .map(|n| n.transition_rules().len() + 1)
            .sum();
        let mut graph = DiGraph::with_capacity(wf.nodes.len(), edge_count);
        let mut ids: FxHashMap<&'w str, NodeIndex> =
            FxHashMap::with_capacity_and_hasher(wf.nodes.len(), Default::default());
        for id in wf.nodes.keys() {
            ids.insert(id.as_str(), graph.add_node(id.as_str()));
        }
        let index = |id: &str| ids.get(id).copied();
        let mut unknown = Vec::new();
        for (i, node) in wf.nodes.values().enumerate() {
            let from = NodeIndex::new(i);
            for (r, rule) in node.transition_rules().iter().enumerate() {
                for_each_rule_target(rule, &mut |t| {
                    let to = match t.target {
                        Some(id) => index(id),
                        None => Some(from),
                    };
                    let source = EdgeSource::Rule {
                        rule: r,
                        slot: t.slot,
                    };
                    match (to, t.target) {
                        (Some(to), _) => {
                            let info = EdgeInfo {
                                source,
                                bounded: t.bounded,
                            };
                            graph.add_edge(from, to, info);
                        }
                        (None, Some(target)) => unknown.push(UnknownTarget {
                            from,
                            source,
                            target,
                            bounded: t.bounded,
                        }),
                        (None, None) => {}
                    }
                });
            }
            if let Node::Fork(fork) = node {
                for (k, target) in fork.targets.iter().enumerate() {
                    let source = EdgeSource::ForkTarget(k);
                    match index(target) {
                        Some(to) => {
                            let info = EdgeInfo {
                                source,
                                bounded: false,
                            };
                            graph.add_edge(from, to, info);
                        }
                        None => unknown.push(UnknownTarget {
                            from,
                            source,
                            target,
                            bounded: false,
                        }),
                    }
                }
            }
        }
        let start = index(&wf.start_node);
        NodeGraph {
            graph,
            start,
            unknown,
            index: ids,
        }
    }

    /// The graph node of a node id.
    pub fn index_of(&self, id: &str) -> Option<NodeIndex> {
        self.index.get(id).copied()
    }

    /// The node id of a graph node.
    pub fn id(&self, n: NodeIndex) -> &'w str {
        self.graph.node_weight(n).copied().unwrap_or("")
    }

    /// `reached[i]`: node `i` is reachable from the start (all `false` without a start node).
    pub fn reachable(&self) -> Vec<bool> {
        let mut seen = vec![false; self.graph.node_count()];
        let Some(start) = self.start else {
            return seen;
        };
        let mut queue = VecDeque::from([start]);
        seen[start.index()] = true;
        while let Some(n) = queue.pop_front() {
            for m in self.graph.neighbors_directed(n, Direction::Outgoing) {
                if !seen[m.index()] {
                    seen[m.index()] = true;
                    queue.push_back(m);
                }
            }
        }
        seen
    }

    /// Strongly connected components of the whole graph (iterative Kosaraju).
    pub fn sccs(&self) -> Vec<Vec<NodeIndex>> {
        kosaraju_scc(&self.graph)
    }

    /// One representative cycle per group of cycles that no bounded edge limits: the bounded
    /// edges are removed, and every remaining strongly connected component with more than one
    /// node, or with a self-loop, yields its shortest cycle through its first-declared node.
    /// Sorted by that node's declaration order.
    pub fn unbounded_cycles(&self) -> Vec<Cycle> {
        let unbounded = EdgeFiltered::from_fn(&self.graph, |e| !e.weight().bounded);
        let n = self.graph.node_count();
        // Component number of each node (usize::MAX: not in a cyclic component).
        let mut comp = vec![usize::MAX; n];
        let mut roots = Vec::new();
        for (c, scc) in kosaraju_scc(&unbounded).into_iter().enumerate() {
            let Some(&root) = scc.iter().min() else {
                continue;
            };
            let cyclic = scc.len() > 1
                || self
                    .graph
                    .edges_connecting(root, root)
                    .any(|e| !e.weight().bounded);
            if cyclic {
                for m in &scc {
                    comp[m.index()] = c;
                }
                roots.push((root, c));
            }
        }
        roots.sort();
        let mut parent: Vec<Option<EdgeIndex>> = vec![None; n];
        let mut seen = vec![false; n];
        let mut cycles = Vec::with_capacity(roots.len());
        for (root, c) in roots {
            if let Some(cycle) = self.shortest_cycle(root, c, &comp, &mut parent, &mut seen) {
                cycles.push(cycle);
            }
        }
        cycles
    }

    /// BFS over unbounded edges inside component `c` from `root` until an edge returns to `root`.
    fn shortest_cycle(
        &self,
        root: NodeIndex,
        c: usize,
        comp: &[usize],
        parent: &mut [Option<EdgeIndex>],
        seen: &mut [bool],
    ) -> Option<Cycle> {
        let mut queue = VecDeque::from([root]);
        seen[root.index()] = true;
        while let Some(v) = queue.pop_front() {
            // Declaration order of edges (petgraph lists outgoing edges newest first).
            let mut out: Vec<_> = self
                .graph
                .edges_directed(v, Direction::Outgoing)
                .filter(|e| !e.weight().bounded && comp[e.target().index()] == c)
                .map(|e| (e.id(), e.target()))
                .collect();
            out.sort();
            for (e, w) in out {
                if w == root {
                    // Walk the parents back from v to root.
                    let mut edges = vec![e];
                    let mut nodes = vec![v];
                    let mut cur = v;
                    while cur != root {
                        let pe = parent[cur.index()]?;
                        let (from, _) = self.graph.edge_endpoints(pe)?;
                        edges.push(pe);
                        nodes.push(from);
                        cur = from;
                    }
                    nodes.reverse();
                    edges.reverse();
                    // `nodes` = root … v, `edges[i]` = nodes[i] → nodes[i+1], last edge v → root.
                    return Some(Cycle { nodes, edges });
                }
                if !seen[w.index()] {
                    seen[w.index()] = true;
                    parent[w.index()] = Some(e);
                    queue.push_back(w);
                }
            }
        }
        None
    }

    /// `a → b → a` for a cycle (long cycles elided, see [`render_cycle_path`]).
    pub fn render_cycle(&self, cycle: &Cycle) -> String {
        let parts: Vec<&str> = cycle.nodes.iter().map(|&n| self.id(n)).collect();
        render_cycle_path(&parts)
    }
}

/// Cycles longer than this many names are shown elided.
pub const MAX_CYCLE_NAMES: usize = 12;

/// `a → b → c → a` for the cycle through `names` (the first name is repeated at the end). A
/// cycle of more than [`MAX_CYCLE_NAMES`] names keeps its first six and last five names:
/// `a → b → … → (990 more) → … → y → z → a`.
pub fn render_cycle_path(names: &[&str]) -> String {
    let Some(first) = names.first() else {
        return String::new();
    };
    let mut parts: Vec<String> = Vec::new();
    if names.len() > MAX_CYCLE_NAMES {
        parts.extend(names[..6].iter().map(|s| s.to_string()));
        parts.push(format!("… ({} more) …", names.len() - 11));
        parts.extend(names[names.len() - 5..].iter().map(|s| s.to_string()));
    } else {
        parts.extend(names.iter().map(|s| s.to_string()));
    }
    parts.push(first.to_string());
    parts.join(" → ")
}
