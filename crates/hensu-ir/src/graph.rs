//! The executable graph: node ids mapped once to petgraph indices, every node's rule list compiled
//! with its targets resolved (the runtime walks these in order), and edges for analysis/export.
//!
//! Building never panics: a target that names no node is kept as [`Target::Unresolved`] in the
//! compiled rule and listed in [`ExecGraph::unresolved`] (the checker reports E0204 before a graph
//! is normally built).

use indexmap::IndexMap;
use petgraph::Direction;
use petgraph::stable_graph::{EdgeIndex, NodeIndex, StableDiGraph};
use petgraph::visit::EdgeRef;
use serde_json::{Map, Value};

use crate::model::*;

/// A resolved rule target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// A node of the graph.
    Node(NodeIndex),
    /// The owner node itself (`onFailure retry`: failure rule with `targetNode: null`).
    SelfRetry,
    /// The id names no node (kept so nothing panics; a checked workflow never has these).
    Unresolved(String),
}

impl Target {
    /// The node to go to, with `SelfRetry` resolved to `owner`; `None` when unresolved.
    pub fn resolve(&self, owner: NodeIndex) -> Option<NodeIndex> {
        match self {
            Target::Node(ix) => Some(*ix),
            Target::SelfRetry => Some(owner),
            Target::Unresolved(_) => None,
        }
    }

    /// The node index if this is a plain node target.
    pub fn node(&self) -> Option<NodeIndex> {
        match self {
            Target::Node(ix) => Some(*ix),
            _ => None,
        }
    }
}

/// A score arm with a resolved target.
#[derive(Clone, Debug, PartialEq)]
pub struct CompiledScoreCondition {
    pub operator: ComparisonOperator,
    pub value: Option<f64>,
    pub range: Option<ScoreRange>,
    pub target: Target,
}

impl CompiledScoreCondition {
    fn condition(&self) -> ScoreCondition {
        ScoreCondition {
            operator: self.operator,
            value: self.value,
            range: self.range,
            target_node: String::new(),
        }
    }

    /// Whether `score` satisfies this arm.
    pub fn matches(&self, score: f64) -> bool {
        self.condition().matches(score)
    }

    /// Upstream rendering of the arm (`LT 70.0`), as [`ScoreCondition::describe`].
    pub fn describe(&self) -> String {
        self.condition().describe()
    }
}

/// A transition rule with its targets resolved; mirrors [`TransitionRule`].
#[derive(Clone, Debug, PartialEq)]
pub enum CompiledRule {
    Success {
        target: Target,
        with_feedback: bool,
    },
    /// `target` is [`Target::SelfRetry`] for the self-retry inner rule.
    Failure {
        target: Target,
    },
    NoConsensus {
        target: Target,
        with_feedback: bool,
    },
    Approval {
        expected: bool,
        target: Target,
        with_feedback: bool,
    },
    Score {
        conditions: Vec<CompiledScoreCondition>,
        with_feedback: bool,
    },
    Condition {
        variable: String,
        predicate: ConditionPredicate,
        target: Target,
        with_feedback: bool,
    },
    Always {
        target: Target,
        with_feedback: bool,
    },
    Bounded {
        namespace: Namespace,
        budget: i64,
        otherwise: Target,
        escalation_with_feedback: bool,
        inner: Box<CompiledRule>,
    },
    RubricFail,
    ReviewTimeout {
        target: Target,
    },
}

impl CompiledRule {
    /// The outer rule kind.
    pub fn kind(&self) -> RuleKind {
        match self {
            CompiledRule::Success { .. } => RuleKind::Success,
            CompiledRule::Failure { .. } => RuleKind::Failure,
            CompiledRule::NoConsensus { .. } => RuleKind::NoConsensus,
            CompiledRule::Approval { .. } => RuleKind::Approval,
            CompiledRule::Score { .. } => RuleKind::Score,
            CompiledRule::Condition { .. } => RuleKind::Condition,
            CompiledRule::Always { .. } => RuleKind::Always,
            CompiledRule::Bounded { .. } => RuleKind::Bounded,
            CompiledRule::RubricFail => RuleKind::RubricFail,
            CompiledRule::ReviewTimeout { .. } => RuleKind::ReviewTimeout,
        }
    }

    /// The innermost rule kind.
    pub fn trigger(&self) -> RuleKind {
        match self {
            CompiledRule::Bounded { inner, .. } => inner.trigger(),
            other => other.kind(),
        }
    }

    /// The innermost rule (the rule itself unless bounded).
    pub fn trigger_rule(&self) -> &CompiledRule {
        let mut r = self;
        while let CompiledRule::Bounded { inner, .. } = r {
            r = inner;
        }
        r
    }

    /// Forward-match feedback flag (`escalation_with_feedback` for bounded rules).
    pub fn with_feedback(&self) -> bool {
        match self {
            CompiledRule::Success { with_feedback, .. }
            | CompiledRule::NoConsensus { with_feedback, .. }
            | CompiledRule::Approval { with_feedback, .. }
            | CompiledRule::Score { with_feedback, .. }
            | CompiledRule::Condition { with_feedback, .. }
            | CompiledRule::Always { with_feedback, .. } => *with_feedback,
            CompiledRule::Bounded {
                escalation_with_feedback,
                ..
            } => *escalation_with_feedback,
            CompiledRule::Failure { .. }
            | CompiledRule::RubricFail
            | CompiledRule::ReviewTimeout { .. } => false,
        }
    }

    fn compile(rule: &TransitionRule, resolve: &impl Fn(&str) -> Target) -> CompiledRule {
        match rule {
            TransitionRule::Success {
                target_node,
                with_feedback,
            } => CompiledRule::Success {
                target: resolve(target_node),
                with_feedback: *with_feedback,
            },
            TransitionRule::Failure { target_node } => CompiledRule::Failure {
                target: target_node.as_deref().map_or(Target::SelfRetry, resolve),
            },
            TransitionRule::NoConsensus {
                target_node,
                with_feedback,
            } => CompiledRule::NoConsensus {
                target: resolve(target_node),
                with_feedback: *with_feedback,
            },
            TransitionRule::Approval {
                expected,
                target_node,
                with_feedback,
            } => CompiledRule::Approval {
                expected: *expected,
                target: resolve(target_node),
                with_feedback: *with_feedback,
            },
            TransitionRule::Score {
                conditions,
                with_feedback,
            } => CompiledRule::Score {
                conditions: conditions
                    .iter()
                    .map(|c| CompiledScoreCondition {
                        operator: c.operator,
                        value: c.value,
                        range: c.range,
                        target: resolve(&c.target_node),
                    })
                    .collect(),
                with_feedback: *with_feedback,
            },
            TransitionRule::Condition {
                variable,
                predicate,
                target_node,
                with_feedback,
            } => CompiledRule::Condition {
                variable: variable.clone(),
                predicate: predicate.clone(),
                target: resolve(target_node),
                with_feedback: *with_feedback,
            },
            TransitionRule::Always {
                target_node,
                with_feedback,
            } => CompiledRule::Always {
                target: resolve(target_node),
                with_feedback: *with_feedback,
            },
            TransitionRule::Bounded {
                namespace,
                budget,
                otherwise,
                escalation_with_feedback,
                inner,
            } => CompiledRule::Bounded {
                namespace: *namespace,
                budget: *budget,
                otherwise: resolve(otherwise),
                escalation_with_feedback: *escalation_with_feedback,
                inner: Box::new(CompiledRule::compile(inner, resolve)),
            },
            TransitionRule::RubricFail => CompiledRule::RubricFail,
            TransitionRule::ReviewTimeout { target_node } => CompiledRule::ReviewTimeout {
                target: resolve(target_node),
            },
        }
    }
}

/// A graph node: identity, kind, and the compiled rule list the runtime walks in order.
#[derive(Clone, Debug, PartialEq)]
pub struct GraphNode {
    pub id: String,
    /// Index of the node in [`Workflow::nodes`] (`workflow.nodes.get_index(i)`).
    pub workflow_index: usize,
    pub kind: NodeKind,
    pub agent_id: Option<String>,
    pub start: bool,
    /// End nodes.
    pub terminal: bool,
    /// The node's rules in order, targets resolved.
    pub rules: Vec<CompiledRule>,
    /// The routing variables (upstream's `routingVars`): the `required_routing_vars` of the
    /// rules ∪ {score, approved} − {recommendation}, in first-seen order — removed from the
    /// context on every transition.
    pub routing_vars: Vec<String>,
    /// Fork targets (fork nodes).
    pub fork_targets: Vec<Target>,
    /// Awaited forks (join nodes).
    pub await_targets: Vec<Target>,
    /// Branch ids (parallel nodes), in order.
    pub branches: Vec<String>,
}

/// What an edge stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EdgeKind {
    /// A transition rule edge; the kind is the rule's trigger (innermost kind).
    Rule(RuleKind),
    /// Fork → one of its targets.
    Fork,
}

impl EdgeKind {
    /// `success`, `failure`, …, or `fork`.
    pub fn as_str(self) -> &'static str {
        match self {
            EdgeKind::Rule(k) => k.as_str(),
            EdgeKind::Fork => "fork",
        }
    }
}

/// Edge payload.
#[derive(Clone, Debug, PartialEq)]
pub struct GraphEdge {
    pub kind: EdgeKind,
    /// Position of the rule in the owner's rule list (`None` for fork edges).
    pub rule_index: Option<usize>,
    /// Upstream `visualize --format text` label (`on success`, `score LT 70.0`,
    /// `on rejection revise ≤3`, `budget exhausted`, …).
    pub label: String,
    /// `(namespace, budget)` of the bounded rule this edge belongs to.
    pub bounded: Option<(Namespace, i64)>,
    pub with_feedback: bool,
    /// The bounded rule's `otherwise` edge.
    pub is_escalation: bool,
    pub self_loop: bool,
}

/// An edge whose target names no node.
#[derive(Clone, Debug, PartialEq)]
pub struct UnresolvedEdge {
    pub from: NodeIndex,
    pub target: String,
    pub edge: GraphEdge,
}

#[derive(Clone, Debug, PartialEq)]
struct EdgeRecord {
    from: NodeIndex,
    to: String,
    resolved: Option<EdgeIndex>,
    edge: GraphEdge,
}

/// The executable graph of one workflow.
#[derive(Clone, Debug)]
pub struct ExecGraph {
    workflow: Workflow,
    graph: StableDiGraph<GraphNode, GraphEdge>,
    index: IndexMap<String, NodeIndex>,
    start: Option<NodeIndex>,
    records: Vec<EdgeRecord>,
    unresolved: Vec<UnresolvedEdge>,
}

fn fb_suffix(fb: bool) -> &'static str {
    if fb { " +fb" } else { "" }
}

/// Labels of the edges one (non-bounded) rule produces: `(target, label, with_feedback)`.
fn rule_edges(rule: &TransitionRule) -> Vec<(Option<&str>, String, bool)> {
    match rule {
        TransitionRule::Success {
            target_node,
            with_feedback,
        } => vec![(Some(target_node), "on success".into(), *with_feedback)],
        TransitionRule::Failure { target_node } => {
            vec![(target_node.as_deref(), "on failure".into(), false)]
        }
        TransitionRule::NoConsensus {
            target_node,
            with_feedback,
        } => vec![(
            Some(target_node),
            format!("on no consensus{}", fb_suffix(*with_feedback)),
            *with_feedback,
        )],
        TransitionRule::Approval {
            expected,
            target_node,
            with_feedback,
        } => {
            let base = if *expected {
                "on approval"
            } else {
                "on rejection"
            };
            vec![(
                Some(target_node),
                format!("{base}{}", fb_suffix(*with_feedback)),
                *with_feedback,
            )]
        }
        TransitionRule::Score {
            conditions,
            with_feedback,
        } => conditions
            .iter()
            .map(|c| {
                (
                    Some(c.target_node.as_str()),
                    format!("score {}", c.describe()),
                    *with_feedback,
                )
            })
            .collect(),
        TransitionRule::Condition {
            variable,
            predicate,
            target_node,
            with_feedback,
        } => vec![(
            Some(target_node),
            format!("{variable} {}", predicate.describe()),
            *with_feedback,
        )],
        TransitionRule::Always {
            target_node,
            with_feedback,
        } => vec![(
            Some(target_node),
            format!("otherwise{}", fb_suffix(*with_feedback)),
            *with_feedback,
        )],
        TransitionRule::Bounded { inner, .. } => rule_edges(inner),
        TransitionRule::RubricFail => Vec::new(),
        TransitionRule::ReviewTimeout { target_node } => {
            vec![(Some(target_node), "on review timeout".into(), false)]
        }
    }
}

fn strip_fb(label: String) -> String {
    match label.strip_suffix(" +fb") {
        Some(s) => s.to_string(),
        None => label,
    }
}

impl ExecGraph {
    /// Builds the graph (clones the workflow). Never panics.
    pub fn build(workflow: &Workflow) -> ExecGraph {
        let mut graph: StableDiGraph<GraphNode, GraphEdge> =
            StableDiGraph::with_capacity(workflow.nodes.len(), workflow.nodes.len() * 2);
        let mut index = IndexMap::with_capacity(workflow.nodes.len());
        for (i, (key, node)) in workflow.nodes.iter().enumerate() {
            let ix = graph.add_node(GraphNode {
                id: key.clone(),
                workflow_index: i,
                kind: node.kind(),
                agent_id: node.agent_id().map(str::to_string),
                start: *key == workflow.start_node,
                terminal: node.is_end(),
                rules: Vec::new(),
                routing_vars: Vec::new(),
                fork_targets: Vec::new(),
                await_targets: Vec::new(),
                branches: Vec::new(),
            });
            index.insert(key.clone(), ix);
        }
        let resolve = |t: &str| match index.get(t) {
            Some(ix) => Target::Node(*ix),
            None => Target::Unresolved(t.to_string()),
        };

        let mut records = Vec::new();
        for (key, node) in &workflow.nodes {
            let Some(&from) = index.get(key) else {
                continue;
            };
            let rules: Vec<CompiledRule> = node
                .transition_rules()
                .iter()
                .map(|r| CompiledRule::compile(r, &resolve))
                .collect();
            let mut routing_vars: Vec<String> = Vec::new();
            let mut add_var = |v: &str| {
                if v != "recommendation" && !routing_vars.iter().any(|x| x == v) {
                    routing_vars.push(v.to_string());
                }
            };
            for r in node.transition_rules() {
                for v in r.required_routing_vars() {
                    add_var(v);
                }
            }
            add_var("score");
            add_var("approved");

            // Rule edges.
            for (ri, rule) in node.transition_rules().iter().enumerate() {
                let bounded = rule.bounded();
                let is_failure_retry = matches!(
                    rule,
                    TransitionRule::Bounded { inner, .. } if inner.kind() == RuleKind::Failure
                );
                let trigger = rule.trigger();
                for (target, label, fb) in rule_edges(rule) {
                    let label = match bounded {
                        Some((_, budget)) if is_failure_retry => {
                            format!("on failure retry ≤{budget}")
                        }
                        Some((_, budget)) => format!("{} revise ≤{budget}", strip_fb(label)),
                        None => label,
                    };
                    let to = target.unwrap_or(key.as_str());
                    records.push(EdgeRecord {
                        from,
                        to: to.to_string(),
                        resolved: None,
                        edge: GraphEdge {
                            kind: EdgeKind::Rule(trigger),
                            rule_index: Some(ri),
                            label,
                            bounded,
                            with_feedback: if bounded.is_some() { false } else { fb },
                            is_escalation: false,
                            self_loop: to == key,
                        },
                    });
                }
                if let TransitionRule::Bounded {
                    otherwise,
                    escalation_with_feedback,
                    ..
                } = rule
                {
                    records.push(EdgeRecord {
                        from,
                        to: otherwise.clone(),
                        resolved: None,
                        edge: GraphEdge {
                            kind: EdgeKind::Rule(trigger),
                            rule_index: Some(ri),
                            label: "budget exhausted".into(),
                            bounded,
                            with_feedback: *escalation_with_feedback,
                            is_escalation: true,
                            self_loop: otherwise == key,
                        },
                    });
                }
            }

            let mut fork_targets = Vec::new();
            let mut await_targets = Vec::new();
            let mut branches = Vec::new();
            match node {
                Node::Fork(f) => {
                    for t in &f.targets {
                        fork_targets.push(resolve(t));
                        records.push(EdgeRecord {
                            from,
                            to: t.clone(),
                            resolved: None,
                            edge: GraphEdge {
                                kind: EdgeKind::Fork,
                                rule_index: None,
                                label: "fork".into(),
                                bounded: None,
                                with_feedback: false,
                                is_escalation: false,
                                self_loop: t == key,
                            },
                        });
                    }
                }
                Node::Join(j) => {
                    await_targets = j.await_targets.iter().map(|t| resolve(t)).collect();
                }
                Node::Parallel(p) => {
                    branches = p.branches.iter().map(|b| b.id.clone()).collect();
                }
                _ => {}
            }

            if let Some(gn) = graph.node_weight_mut(from) {
                gn.rules = rules;
                gn.routing_vars = routing_vars;
                gn.fork_targets = fork_targets;
                gn.await_targets = await_targets;
                gn.branches = branches;
            }
        }

        let mut unresolved = Vec::new();
        for rec in &mut records {
            match index.get(&rec.to) {
                Some(&to) => rec.resolved = Some(graph.add_edge(rec.from, to, rec.edge.clone())),
                None => unresolved.push(UnresolvedEdge {
                    from: rec.from,
                    target: rec.to.clone(),
                    edge: rec.edge.clone(),
                }),
            }
        }

        let start = index.get(&workflow.start_node).copied();
        ExecGraph {
            workflow: workflow.clone(),
            graph,
            index,
            start,
            records,
            unresolved,
        }
    }

    /// The workflow this graph was built from.
    pub fn workflow(&self) -> &Workflow {
        &self.workflow
    }

    /// The underlying petgraph graph (for analysis: SCCs, reachability, …).
    pub fn graph(&self) -> &StableDiGraph<GraphNode, GraphEdge> {
        &self.graph
    }

    /// Node id → index, in declaration order.
    pub fn node_indices(&self) -> &IndexMap<String, NodeIndex> {
        &self.index
    }

    /// The index of a node id.
    pub fn index_of(&self, id: &str) -> Option<NodeIndex> {
        self.index.get(id).copied()
    }

    /// The node declared at position `i` of [`Workflow::nodes`]. Nodes are added in declaration
    /// order and never removed, so `NodeIndex::index()` is that position and indices are dense
    /// (`0..workflow().nodes.len()`).
    pub fn node_at(&self, i: usize) -> Option<&GraphNode> {
        self.graph.node_weight(NodeIndex::new(i))
    }

    /// The start node (`None` when `start_node` names no node).
    pub fn start(&self) -> Option<NodeIndex> {
        self.start
    }

    /// A graph node.
    pub fn node(&self, ix: NodeIndex) -> Option<&GraphNode> {
        self.graph.node_weight(ix)
    }

    /// The IR node behind a graph node.
    pub fn payload(&self, ix: NodeIndex) -> Option<&Node> {
        let gn = self.graph.node_weight(ix)?;
        self.workflow
            .nodes
            .get_index(gn.workflow_index)
            .map(|(_, n)| n)
    }

    /// The compiled rules of a node, in order (empty for unknown indices and end nodes).
    pub fn rules(&self, ix: NodeIndex) -> &[CompiledRule] {
        self.graph.node_weight(ix).map_or(&[], |n| &n.rules)
    }

    /// Edges whose target names no node.
    pub fn unresolved(&self) -> &[UnresolvedEdge] {
        &self.unresolved
    }

    /// Outgoing resolved edges of a node: `(target, edge)`.
    pub fn successors(&self, ix: NodeIndex) -> Vec<(NodeIndex, &GraphEdge)> {
        let mut out: Vec<(EdgeIndex, NodeIndex, &GraphEdge)> = self
            .graph
            .edges_directed(ix, Direction::Outgoing)
            .map(|e| (e.id(), e.target(), e.weight()))
            .collect();
        out.sort_by_key(|(e, _, _)| *e);
        out.into_iter().map(|(_, t, w)| (t, w)).collect()
    }

    /// Node indices reachable from the start node (rule and fork edges), start included.
    pub fn reachable_from_start(&self) -> Vec<NodeIndex> {
        let Some(start) = self.start else {
            return Vec::new();
        };
        let mut seen = vec![start];
        let mut bfs = petgraph::visit::Bfs::new(&self.graph, start);
        while let Some(n) = bfs.next(&self.graph) {
            if n != start {
                seen.push(n);
            }
        }
        seen
    }

    /// The versioned topology export (see [`topology_json`]).
    pub fn topology_json(&self) -> Value {
        topology_json(self)
    }
}

/// Versioned topology export, like agent-core's `toGraph()`:
/// `{schemaVersion: 1, workflowId, entryNodeId, nodes: [{id, kind, agent?, terminal, start}],
/// edges: [{from, to, kind, label, bounded?: {namespace, budget}, withFeedback, escalation,
/// selfLoop, resolved}]}`. Nodes in declaration order; edges per node in rule order (bounded:
/// inner edges then the escalation edge), then fork edges. Unresolved targets are included with
/// `"resolved": false`.
pub fn topology_json(graph: &ExecGraph) -> Value {
    let wf = graph.workflow();
    let mut nodes = Vec::with_capacity(wf.nodes.len());
    for ix in graph.index.values() {
        let Some(n) = graph.node(*ix) else { continue };
        let mut m = Map::new();
        m.insert("id".into(), Value::from(n.id.as_str()));
        m.insert("kind".into(), Value::from(n.kind.as_str()));
        if let Some(a) = &n.agent_id {
            m.insert("agent".into(), Value::from(a.as_str()));
        }
        m.insert("terminal".into(), Value::Bool(n.terminal));
        m.insert("start".into(), Value::Bool(n.start));
        nodes.push(Value::Object(m));
    }
    let mut edges = Vec::with_capacity(graph.records.len());
    for rec in &graph.records {
        let from = graph.node(rec.from).map_or("", |n| n.id.as_str());
        let e = &rec.edge;
        let mut m = Map::new();
        m.insert("from".into(), Value::from(from));
        m.insert("to".into(), Value::from(rec.to.as_str()));
        m.insert("kind".into(), Value::from(e.kind.as_str()));
        m.insert("label".into(), Value::from(e.label.as_str()));
        if let Some((ns, budget)) = e.bounded {
            let mut b = Map::new();
            b.insert("namespace".into(), Value::from(ns.as_str()));
            b.insert("budget".into(), Value::from(budget));
            m.insert("bounded".into(), Value::Object(b));
        }
        m.insert("withFeedback".into(), Value::Bool(e.with_feedback));
        m.insert("escalation".into(), Value::Bool(e.is_escalation));
        m.insert("selfLoop".into(), Value::Bool(e.self_loop));
        m.insert("resolved".into(), Value::Bool(rec.resolved.is_some()));
        edges.push(Value::Object(m));
    }
    let mut top = Map::new();
    top.insert("schemaVersion".into(), Value::from(1));
    top.insert("workflowId".into(), Value::from(wf.id.as_str()));
    top.insert("entryNodeId".into(), Value::from(wf.start_node.as_str()));
    top.insert("nodes".into(), Value::Array(nodes));
    top.insert("edges".into(), Value::Array(edges));
    Value::Object(top)
}

/// [`topology_json`] straight from a workflow.
pub fn workflow_topology_json(workflow: &Workflow) -> Value {
    topology_json(&ExecGraph::build(workflow))
}
