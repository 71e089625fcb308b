//! The executable plan: the IR's [`ExecGraph`] (node ids mapped to indices once, rules compiled
//! with resolved targets, routing variables) plus what only the runtime needs per node — counter
//! keys, extraction keys, engine-variable flags, condition descriptions — so the hot path never
//! looks a node up by name. A node's index in the plan is its `NodeIndex::index()` in the graph
//! (= its declaration position).

use hensu_ir::{
    CompiledRule, ConditionPredicate, EdgeKind, ExecGraph, GraphNode, Node, NodeIndex, Target,
    TransitionRule, Workflow,
};
use serde_json::Value;

use crate::error::RuntimeError;
use crate::events::TransitionCause;
use crate::state::{NodeResult, NodeStatus, ReviewVerdict};
use crate::value::{Context, as_bool, as_number, canonical_string, java_to_string, java_type_name};

/// What the runtime adds to one compiled rule (parallel to the graph node's rule list).
#[derive(Clone, Debug, Default)]
pub struct RuleExtra {
    /// `"<namespace>:<ownerNodeId>"` for bounded rules (empty otherwise).
    pub counter_key: String,
    /// Upstream descriptions of the trigger rule: one per score arm (`GTE 70.0`), or the
    /// condition's predicate (`== "done"`); empty otherwise.
    pub describe: Vec<String>,
}

impl RuleExtra {
    fn new(rule: &CompiledRule, owner: &str) -> Self {
        let counter_key = match rule {
            CompiledRule::Bounded { namespace, .. } => format!("{}:{owner}", namespace.as_str()),
            _ => String::new(),
        };
        let describe = match rule.trigger_rule() {
            CompiledRule::Score { conditions, .. } => {
                conditions.iter().map(|c| c.describe()).collect()
            }
            CompiledRule::Condition { predicate, .. } => vec![predicate.describe()],
            _ => Vec::new(),
        };
        RuleExtra {
            counter_key,
            describe,
        }
    }
}

/// The outcome of evaluating one rule.
#[derive(Debug)]
pub enum RuleEval<'p> {
    /// Resolve the target with [`ExecPlan::resolve`].
    Match {
        target: &'p Target,
        cause: TransitionCause<'p>,
    },
    /// No match; the diagnostic is reported as a transition warning on a SUCCESS result.
    NoMatch(Option<String>),
}

/// Evaluates the trigger of `rule` (for bounded rules: the inner rule; budgets are the transition
/// processor's business). `extra` is the rule's [`RuleExtra`].
pub fn evaluate<'p>(
    rule: &'p CompiledRule,
    extra: &'p RuleExtra,
    result: &NodeResult,
    ctx: &Context,
    verdict: Option<&ReviewVerdict>,
) -> RuleEval<'p> {
    let ok = result.status == NodeStatus::Success;
    let consensus_false = result.metadata.get("consensus_reached") == Some(&Value::Bool(false));
    let hit = |target: &'p Target, cause: TransitionCause<'p>| RuleEval::Match { target, cause };
    match rule {
        CompiledRule::Success { target, .. } if ok => hit(target, TransitionCause::Success),
        CompiledRule::Always { target, .. } if ok => hit(target, TransitionCause::Always),
        CompiledRule::Failure { target }
            if result.status == NodeStatus::Failure && !consensus_false =>
        {
            hit(target, TransitionCause::Failure)
        }
        CompiledRule::NoConsensus { target, .. }
            if result.status == NodeStatus::Failure && consensus_false =>
        {
            hit(target, TransitionCause::NoConsensus)
        }
        CompiledRule::Approval {
            expected, target, ..
        } => {
            let decided = match verdict {
                Some(v) if v.timed_out => None,
                Some(v) => Some((v.approved, true)),
                None => ctx.get("approved").and_then(as_bool).map(|b| (b, false)),
            };
            match decided {
                Some((approved, from_review)) if approved == *expected => hit(
                    target,
                    TransitionCause::Approval {
                        expected: *expected,
                        from_review,
                    },
                ),
                _ => RuleEval::NoMatch(None),
            }
        }
        CompiledRule::Score { conditions, .. } => {
            let Some(score) = ctx.get("score").and_then(as_number) else {
                return RuleEval::NoMatch(None);
            };
            for (i, cond) in conditions.iter().enumerate() {
                if cond.matches(score) {
                    return hit(
                        &cond.target,
                        TransitionCause::Score {
                            score,
                            condition: extra.describe.get(i).map_or("", String::as_str),
                        },
                    );
                }
            }
            RuleEval::NoMatch(None)
        }
        CompiledRule::Condition {
            variable,
            predicate,
            target,
            ..
        } => {
            if !ok {
                return RuleEval::NoMatch(None);
            }
            let describe = extra.describe.first().map_or("", String::as_str);
            let actual = ctx.get(variable.as_str()).filter(|v| !v.is_null());
            match eval_predicate(predicate, actual) {
                Some(true) => hit(
                    target,
                    TransitionCause::Condition {
                        variable,
                        predicate: describe,
                    },
                ),
                Some(false) => RuleEval::NoMatch(None),
                None => RuleEval::NoMatch(Some(format!(
                    "Condition on variable '{variable}' ({describe}) could not be evaluated: actual value is {}",
                    match actual {
                        None => "absent".to_string(),
                        Some(v) => format!("{} '{}'", java_type_name(v), java_to_string(v)),
                    }
                ))),
            }
        }
        CompiledRule::Bounded { inner, .. } => evaluate(inner, extra, result, ctx, verdict),
        CompiledRule::ReviewTimeout { target } if verdict.is_some_and(|v| v.timed_out) => {
            hit(target, TransitionCause::ReviewTimeout)
        }
        _ => RuleEval::NoMatch(None),
    }
}

/// `Some(matched)`, or `None` for a type mismatch (absent, map, list, non-numeric).
pub fn eval_predicate(predicate: &ConditionPredicate, actual: Option<&Value>) -> Option<bool> {
    let actual = actual?;
    match predicate {
        ConditionPredicate::Eq(s) => Some(canonical_string(actual)? == s.as_str()),
        ConditionPredicate::Neq(s) => Some(canonical_string(actual)? != s.as_str()),
        ConditionPredicate::Gt(v) => Some(as_number(actual)? > *v),
        ConditionPredicate::Gte(v) => Some(as_number(actual)? >= *v),
        ConditionPredicate::Lt(v) => Some(as_number(actual)? < *v),
        ConditionPredicate::Lte(v) => Some(as_number(actual)? <= *v),
    }
}

/// Per-node data the graph does not have.
#[derive(Clone, Debug)]
pub struct PlanNode {
    /// One entry per compiled rule of the graph node, in order.
    pub rule_extras: Vec<RuleExtra>,
    /// Extraction keys of a standard node: writes ∪ engine vars (ordered, deduplicated); of an
    /// action node: its writes.
    pub extract_keys: Vec<String>,
    /// Whether the node has engine variables (rubric or routing vars).
    pub has_engine_vars: bool,
    pub needs_score: bool,
    pub needs_approved: bool,
    pub needs_recommendation: bool,
    /// The node has an `onRejection` arm (bare or bounded).
    pub has_rejection_arm: bool,
    /// The node's review has an `onTimeout` arm (docs/language.md, *Review*).
    pub has_review_timeout_arm: bool,
    /// `":<id>"`, the suffix of every retry counter owned by this node.
    pub counter_suffix: String,
}

/// A workflow ready to run: its executable graph and the runtime's per-node data, indexed alike
/// (`nodes[i]` belongs to the graph node at `NodeIndex::new(i)`).
#[derive(Clone, Debug)]
pub struct ExecPlan {
    graph: ExecGraph,
    pub nodes: Vec<PlanNode>,
    pub start: usize,
}

impl ExecPlan {
    /// Builds the graph and the per-node data; an unknown start node or transition target is an
    /// error naming it.
    pub fn new(workflow: &Workflow) -> Result<Self, RuntimeError> {
        let graph = ExecGraph::build(workflow);
        let start = graph
            .start()
            .ok_or_else(|| RuntimeError::InvalidWorkflow {
                message: format!("start node '{}' does not exist", workflow.start_node),
            })?
            .index();
        // Fork targets that name no node are skipped at run time (upstream); rule targets are not.
        if let Some(u) = graph
            .unresolved()
            .iter()
            .find(|u| u.edge.kind != EdgeKind::Fork)
        {
            let from = graph.node(u.from).map_or("", |n| n.id.as_str());
            return Err(unresolved(from, &u.target));
        }
        let mut nodes = Vec::with_capacity(workflow.nodes.len());
        for (i, (id, node)) in workflow.nodes.iter().enumerate() {
            let gn = graph.node_at(i).filter(|gn| gn.id == *id).ok_or_else(|| {
                RuntimeError::InvalidWorkflow {
                    message: format!("node '{id}' is not at graph index {i}"),
                }
            })?;
            let mut needs = (false, false, false);
            let mut engine_vars: Vec<String> = Vec::new();
            if node.rubric().is_some() {
                push_unique(&mut engine_vars, "score");
                push_unique(&mut engine_vars, "recommendation");
            }
            for r in node.transition_rules() {
                for v in r.required_routing_vars() {
                    match v {
                        "score" => needs.0 = true,
                        "approved" => needs.1 = true,
                        "recommendation" => needs.2 = true,
                        _ => {}
                    }
                    push_unique(&mut engine_vars, v);
                }
            }
            let mut extract_keys: Vec<String> = Vec::new();
            if let Node::Standard(s) = node {
                for w in &s.writes {
                    push_unique(&mut extract_keys, w);
                }
                for v in &engine_vars {
                    push_unique(&mut extract_keys, v);
                }
            }
            // docs/language.md, *Action node*: the result's `writes`, extracted as a standard
            // node's (an action node routes on no engine variable).
            if let Node::Action(a) = node {
                for w in &a.writes {
                    push_unique(&mut extract_keys, w);
                }
            }
            let has_rejection_arm = node.transition_rules().iter().any(|r| {
                matches!(
                    r.trigger_rule(),
                    TransitionRule::Approval {
                        expected: false,
                        ..
                    }
                )
            });
            let has_review_timeout_arm = node
                .transition_rules()
                .iter()
                .any(|r| matches!(r, TransitionRule::ReviewTimeout { .. }));
            nodes.push(PlanNode {
                rule_extras: gn.rules.iter().map(|r| RuleExtra::new(r, id)).collect(),
                has_engine_vars: !engine_vars.is_empty(),
                extract_keys,
                needs_score: needs.0,
                needs_approved: needs.1,
                needs_recommendation: needs.2,
                has_rejection_arm,
                has_review_timeout_arm,
                counter_suffix: format!(":{id}"),
            });
        }
        Ok(ExecPlan {
            graph,
            nodes,
            start,
        })
    }

    /// The workflow (the graph's copy).
    pub fn workflow(&self) -> &Workflow {
        self.graph.workflow()
    }

    /// The executable graph.
    pub fn graph(&self) -> &ExecGraph {
        &self.graph
    }

    /// The graph node at `idx`.
    pub fn graph_node(&self, idx: usize) -> Option<&GraphNode> {
        self.graph.node_at(idx)
    }

    /// The id of the node at `idx` (`""` for an index the plan does not have).
    pub fn id(&self, idx: usize) -> &str {
        self.graph.node_at(idx).map_or("", |n| n.id.as_str())
    }

    /// The compiled rules of the node at `idx`, in order.
    pub fn rules(&self, idx: usize) -> &[CompiledRule] {
        self.graph.node_at(idx).map_or(&[], |n| &n.rules)
    }

    /// The routing variables of the node at `idx`: removed from the context on every transition.
    pub fn routing_vars(&self, idx: usize) -> &[String] {
        self.graph.node_at(idx).map_or(&[], |n| &n.routing_vars)
    }

    /// The IR node at `idx`.
    pub fn node(&self, idx: usize) -> Option<&Node> {
        self.graph.payload(NodeIndex::new(idx))
    }

    /// The index of a node id.
    pub fn index_of(&self, id: &str) -> Option<usize> {
        self.graph.index_of(id).map(NodeIndex::index)
    }

    /// The node a matched target of a rule owned by `owner` leads to (`SelfRetry` = `owner`);
    /// an unresolved target is an error naming the owner and the target.
    pub fn resolve(&self, owner: usize, target: &Target) -> Result<usize, RuntimeError> {
        match target {
            Target::Node(ix) => Ok(ix.index()),
            Target::SelfRetry => Ok(owner),
            Target::Unresolved(t) => Err(unresolved(self.id(owner), t)),
        }
    }
}

fn unresolved(from: &str, target: &str) -> RuntimeError {
    RuntimeError::InvalidWorkflow {
        message: format!("node '{from}' has a transition to '{target}' which does not exist"),
    }
}

fn push_unique(v: &mut Vec<String>, s: &str) {
    if !v.iter().any(|x| x == s) {
        v.push(s.to_string());
    }
}

/// What one rule saw when it did not fire, for the "No valid transition" error
/// (docs/language.md, *Runtime semantics*): `onSuccess: the node's status is FAILURE`,
/// `whenScore: score 55.0 is in none of [GTE 60.0, LT 50.0]`, `approved: missing from the output`.
pub fn explain_no_match(
    rule: &CompiledRule,
    extra: &RuleExtra,
    result: &NodeResult,
    ctx: &Context,
    verdict: Option<&ReviewVerdict>,
) -> String {
    let status = match result.status {
        NodeStatus::Success => "SUCCESS",
        NodeStatus::Failure => "FAILURE",
        NodeStatus::Pending => "PENDING",
        NodeStatus::End => "END",
    };
    let shown = |v: Option<&Value>| match v.filter(|v| !v.is_null()) {
        None => "missing from the output".to_string(),
        Some(v) => format!("{} `{}`", java_type_name(v), java_to_string(v)),
    };
    match rule {
        CompiledRule::Success { .. } => format!("onSuccess: the node's status is {status}"),
        CompiledRule::Always { .. } => format!("always: the node's status is {status}"),
        CompiledRule::Failure { .. } => {
            if result.status == NodeStatus::Failure {
                "onFailure: the failure is a no-consensus result".to_string()
            } else {
                format!("onFailure: the node's status is {status}")
            }
        }
        CompiledRule::NoConsensus { .. } => {
            format!(
                "onNoConsensus: the node's status is {status} and consensus was not reported missing"
            )
        }
        CompiledRule::Approval { expected, .. } => {
            let arm = if *expected {
                "onApproval"
            } else {
                "onRejection"
            };
            match verdict {
                Some(v) if v.timed_out => {
                    format!("{arm}: the review's deadline passed (its onTimeout arm routes it)")
                }
                Some(v) => format!("{arm}: the review decided approved = {}", v.approved),
                None => format!("{arm}: `approved` is {}", shown(ctx.get("approved"))),
            }
        }
        CompiledRule::Score { .. } => {
            let arms = extra.describe.join(", ");
            match ctx.get("score").and_then(as_number) {
                Some(score) => format!(
                    "whenScore: score {} is in none of [{arms}]",
                    hensu_ir::java_double_to_string(score)
                ),
                None => format!("whenScore [{arms}]: `score` is {}", shown(ctx.get("score"))),
            }
        }
        CompiledRule::Condition { variable, .. } => {
            let describe = extra.describe.first().map_or("", String::as_str);
            if result.status != NodeStatus::Success {
                format!("when `{variable}` {describe}: the node's status is {status}")
            } else {
                format!(
                    "when `{variable}` {describe}: `{variable}` is {}",
                    shown(ctx.get(variable.as_str()))
                )
            }
        }
        CompiledRule::Bounded { inner, .. } => explain_no_match(inner, extra, result, ctx, verdict),
        CompiledRule::RubricFail => "onRubricFail: handled by the rubric step".to_string(),
        CompiledRule::ReviewTimeout { .. } => {
            "review onTimeout: the review's deadline did not pass".to_string()
        }
    }
}

#[cfg(test)]
mod tests {
    use hensu_ir::{EndNode, ExitStatus, Metadata, StandardNode};
    use indexmap::IndexMap;

    use super::*;

    fn workflow(target: &str) -> Workflow {
        let mut nodes = IndexMap::new();
        nodes.insert(
            "a".to_string(),
            Node::Standard(StandardNode {
                id: "a".into(),
                agent_id: Some("x".into()),
                transition_rules: vec![TransitionRule::Success {
                    target_node: target.into(),
                    with_feedback: false,
                }],
                ..StandardNode::default()
            }),
        );
        nodes.insert(
            "end".to_string(),
            Node::End(EndNode {
                id: "end".into(),
                status: ExitStatus::Success,
            }),
        );
        Workflow {
            id: "w".into(),
            version: "1".into(),
            metadata: Metadata::default(),
            agents: IndexMap::new(),
            nodes,
            start_node: "a".into(),
            config: None,
            saga: Default::default(),
            timing: Default::default(),
            state_schema: None,
        }
    }

    #[test]
    fn plan_indices_are_graph_indices() -> Result<(), RuntimeError> {
        let plan = ExecPlan::new(&workflow("end"))?;
        assert_eq!(plan.start, 0);
        assert_eq!(plan.id(1), "end");
        assert_eq!(plan.index_of("end"), Some(1));
        assert_eq!(plan.id(2), "");
        let target = match &plan.rules(0)[0] {
            CompiledRule::Success { target, .. } => target.clone(),
            other => panic!("{other:?}"),
        };
        assert_eq!(plan.resolve(0, &target)?, 1);
        assert_eq!(plan.resolve(0, &Target::SelfRetry)?, 0);
        Ok(())
    }

    #[test]
    fn unresolved_targets_are_errors_naming_node_and_target() {
        let message = "node 'a' has a transition to 'ghost' which does not exist";
        let err = ExecPlan::new(&workflow("ghost")).err();
        assert_eq!(
            err,
            Some(RuntimeError::InvalidWorkflow {
                message: message.into()
            })
        );
        let plan = ExecPlan::new(&workflow("end")).ok();
        let err = plan.map(|p| p.resolve(0, &Target::Unresolved("ghost".into())));
        assert_eq!(
            err,
            Some(Err(RuntimeError::InvalidWorkflow {
                message: message.into()
            }))
        );
    }
}
