//! The executable plan: a workflow with node ids resolved to indices once, transition rules with
//! resolved targets, and the per-node engine-variable sets precomputed, so the hot path never
//! looks a node up by name.

use std::sync::Arc;

use hensu_ir::{
    ConditionPredicate, Namespace, Node, ScoreCondition, TransitionRule, Workflow,
    is_engine_variable,
};
use serde_json::Value;

use crate::error::RuntimeError;
use crate::events::TransitionCause;
use crate::state::{NodeResult, NodeStatus, ReviewVerdict};
use crate::value::{Context, as_bool, as_number, canonical_string, java_to_string, java_type_name};

/// A transition rule with resolved targets.
#[derive(Clone, Debug)]
pub enum PlanRule {
    Success {
        target: usize,
        with_feedback: bool,
    },
    /// `None` = the current node (self-retry).
    Failure {
        target: Option<usize>,
    },
    NoConsensus {
        target: usize,
        with_feedback: bool,
    },
    Approval {
        expected: bool,
        target: usize,
        with_feedback: bool,
    },
    Score {
        /// Condition, target, upstream description (`GTE 70.0`).
        conditions: Vec<(ScoreCondition, usize, String)>,
        with_feedback: bool,
    },
    Condition {
        variable: String,
        predicate: ConditionPredicate,
        describe: String,
        target: usize,
        with_feedback: bool,
    },
    Always {
        target: usize,
        with_feedback: bool,
    },
    Bounded {
        namespace: Namespace,
        budget: i64,
        otherwise: usize,
        escalation_with_feedback: bool,
        inner: Box<PlanRule>,
        /// `"<namespace>:<ownerNodeId>"`.
        counter_key: String,
    },
    RubricFail,
}

/// The outcome of evaluating one rule.
#[derive(Debug)]
pub enum RuleEval<'p> {
    Match {
        target: usize,
        cause: TransitionCause<'p>,
    },
    /// No match; the diagnostic is reported as a transition warning on a SUCCESS result.
    NoMatch(Option<String>),
}

impl PlanRule {
    /// The feedback flag applying when this rule matches forward.
    pub fn with_feedback(&self) -> bool {
        match self {
            PlanRule::Success { with_feedback, .. }
            | PlanRule::NoConsensus { with_feedback, .. }
            | PlanRule::Approval { with_feedback, .. }
            | PlanRule::Score { with_feedback, .. }
            | PlanRule::Condition { with_feedback, .. }
            | PlanRule::Always { with_feedback, .. } => *with_feedback,
            PlanRule::Bounded {
                escalation_with_feedback,
                ..
            } => *escalation_with_feedback,
            PlanRule::Failure { .. } | PlanRule::RubricFail => false,
        }
    }

    /// The innermost rule.
    pub fn trigger(&self) -> &PlanRule {
        let mut r = self;
        while let PlanRule::Bounded { inner, .. } = r {
            r = inner;
        }
        r
    }

    /// Evaluates the trigger of this rule (for bounded rules: the inner rule; budgets are the
    /// transition processor's business).
    pub fn evaluate<'p>(
        &'p self,
        current: usize,
        result: &NodeResult,
        ctx: &Context,
        verdict: Option<&ReviewVerdict>,
    ) -> RuleEval<'p> {
        let ok = result.status == NodeStatus::Success;
        let consensus_false = result.metadata.get("consensus_reached") == Some(&Value::Bool(false));
        let hit = |target: usize, cause: TransitionCause<'p>| RuleEval::Match { target, cause };
        match self {
            PlanRule::Success { target, .. } if ok => hit(*target, TransitionCause::Success),
            PlanRule::Always { target, .. } if ok => hit(*target, TransitionCause::Always),
            PlanRule::Failure { target }
                if result.status == NodeStatus::Failure && !consensus_false =>
            {
                hit(target.unwrap_or(current), TransitionCause::Failure)
            }
            PlanRule::NoConsensus { target, .. }
                if result.status == NodeStatus::Failure && consensus_false =>
            {
                hit(*target, TransitionCause::NoConsensus)
            }
            PlanRule::Approval {
                expected, target, ..
            } => {
                let decided = match verdict {
                    Some(v) => Some((v.approved, true)),
                    None => ctx.get("approved").and_then(as_bool).map(|b| (b, false)),
                };
                match decided {
                    Some((approved, from_review)) if approved == *expected => hit(
                        *target,
                        TransitionCause::Approval {
                            expected: *expected,
                            from_review,
                        },
                    ),
                    _ => RuleEval::NoMatch(None),
                }
            }
            PlanRule::Score { conditions, .. } => {
                let Some(score) = ctx.get("score").and_then(as_number) else {
                    return RuleEval::NoMatch(None);
                };
                for (cond, target, describe) in conditions {
                    if cond.matches(score) {
                        return hit(
                            *target,
                            TransitionCause::Score {
                                score,
                                condition: describe,
                            },
                        );
                    }
                }
                RuleEval::NoMatch(None)
            }
            PlanRule::Condition {
                variable,
                predicate,
                describe,
                target,
                ..
            } => {
                if !ok {
                    return RuleEval::NoMatch(None);
                }
                let actual = ctx.get(variable.as_str()).filter(|v| !v.is_null());
                match eval_predicate(predicate, actual) {
                    Some(true) => hit(
                        *target,
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
            PlanRule::Bounded { inner, .. } => inner.evaluate(current, result, ctx, verdict),
            _ => RuleEval::NoMatch(None),
        }
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

/// Per-node precomputed data.
#[derive(Clone, Debug)]
pub struct PlanNode {
    pub id: String,
    pub rules: Vec<PlanRule>,
    /// ∪ required routing vars of all rules ∪ {score, approved} − {recommendation}: removed from
    /// the context on every transition out of the node.
    pub routing_vars: Vec<String>,
    /// Extraction keys of a standard node: writes ∪ engine vars (ordered, deduplicated).
    pub extract_keys: Vec<String>,
    /// Whether the node has engine variables (rubric or routing vars).
    pub has_engine_vars: bool,
    pub needs_score: bool,
    pub needs_approved: bool,
    pub needs_recommendation: bool,
    /// The node has an `onRejection` arm (bare or bounded).
    pub has_rejection_arm: bool,
    /// `":<id>"`, the suffix of every retry counter owned by this node.
    pub counter_suffix: String,
}

/// A workflow ready to run.
#[derive(Clone, Debug)]
pub struct ExecPlan {
    pub workflow: Arc<Workflow>,
    pub nodes: Vec<PlanNode>,
    pub start: usize,
}

impl ExecPlan {
    /// Resolves every target; an unknown target or start node is an error naming it.
    pub fn new(workflow: Arc<Workflow>) -> Result<Self, RuntimeError> {
        let index = |id: &str, from: &str| -> Result<usize, RuntimeError> {
            workflow
                .nodes
                .get_index_of(id)
                .ok_or_else(|| RuntimeError::InvalidWorkflow {
                    message: format!(
                        "node '{from}' has a transition to '{id}' which does not exist"
                    ),
                })
        };
        let start = workflow
            .nodes
            .get_index_of(&workflow.start_node)
            .ok_or_else(|| RuntimeError::InvalidWorkflow {
                message: format!("start node '{}' does not exist", workflow.start_node),
            })?;
        let mut nodes = Vec::with_capacity(workflow.nodes.len());
        for (id, node) in &workflow.nodes {
            let rules = node
                .transition_rules()
                .iter()
                .map(|r| compile_rule(r, id, &index))
                .collect::<Result<Vec<_>, _>>()?;
            let mut routing: Vec<String> = Vec::new();
            let mut needs = (false, false, false);
            for r in node.transition_rules() {
                for v in r.required_routing_vars() {
                    match v {
                        "score" => needs.0 = true,
                        "approved" => needs.1 = true,
                        "recommendation" => needs.2 = true,
                        _ => {}
                    }
                    push_unique(&mut routing, v);
                }
            }
            let mut engine_vars: Vec<String> = Vec::new();
            if node.rubric().is_some() {
                push_unique(&mut engine_vars, "score");
                push_unique(&mut engine_vars, "recommendation");
            }
            for v in &routing {
                push_unique(&mut engine_vars, v);
            }
            push_unique(&mut routing, "score");
            push_unique(&mut routing, "approved");
            routing.retain(|v| v != "recommendation");
            let mut extract_keys: Vec<String> = Vec::new();
            if let Node::Standard(s) = node {
                for w in &s.writes {
                    push_unique(&mut extract_keys, w);
                }
                for v in &engine_vars {
                    push_unique(&mut extract_keys, v);
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
            nodes.push(PlanNode {
                id: id.clone(),
                rules,
                routing_vars: routing,
                has_engine_vars: !engine_vars.is_empty(),
                extract_keys,
                needs_score: needs.0,
                needs_approved: needs.1,
                needs_recommendation: needs.2,
                has_rejection_arm,
                counter_suffix: format!(":{id}"),
            });
        }
        Ok(ExecPlan {
            workflow,
            nodes,
            start,
        })
    }

    /// The IR node at `idx`.
    pub fn node(&self, idx: usize) -> Option<&Node> {
        self.workflow.nodes.get_index(idx).map(|(_, n)| n)
    }

    /// The index of a node id.
    pub fn index_of(&self, id: &str) -> Option<usize> {
        self.workflow.nodes.get_index_of(id)
    }
}

fn push_unique(v: &mut Vec<String>, s: &str) {
    if !v.iter().any(|x| x == s) {
        v.push(s.to_string());
    }
}

fn compile_rule(
    rule: &TransitionRule,
    owner: &str,
    index: &impl Fn(&str, &str) -> Result<usize, RuntimeError>,
) -> Result<PlanRule, RuntimeError> {
    Ok(match rule {
        TransitionRule::Success {
            target_node,
            with_feedback,
        } => PlanRule::Success {
            target: index(target_node, owner)?,
            with_feedback: *with_feedback,
        },
        TransitionRule::Failure { target_node } => PlanRule::Failure {
            target: match target_node {
                Some(t) => Some(index(t, owner)?),
                None => None,
            },
        },
        TransitionRule::NoConsensus {
            target_node,
            with_feedback,
        } => PlanRule::NoConsensus {
            target: index(target_node, owner)?,
            with_feedback: *with_feedback,
        },
        TransitionRule::Approval {
            expected,
            target_node,
            with_feedback,
        } => PlanRule::Approval {
            expected: *expected,
            target: index(target_node, owner)?,
            with_feedback: *with_feedback,
        },
        TransitionRule::Score {
            conditions,
            with_feedback,
        } => PlanRule::Score {
            conditions: conditions
                .iter()
                .map(|c| Ok((c.clone(), index(&c.target_node, owner)?, c.describe())))
                .collect::<Result<Vec<_>, RuntimeError>>()?,
            with_feedback: *with_feedback,
        },
        TransitionRule::Condition {
            variable,
            predicate,
            target_node,
            with_feedback,
        } => PlanRule::Condition {
            variable: variable.clone(),
            predicate: predicate.clone(),
            describe: predicate.describe(),
            target: index(target_node, owner)?,
            with_feedback: *with_feedback,
        },
        TransitionRule::Always {
            target_node,
            with_feedback,
        } => PlanRule::Always {
            target: index(target_node, owner)?,
            with_feedback: *with_feedback,
        },
        TransitionRule::Bounded {
            namespace,
            budget,
            otherwise,
            escalation_with_feedback,
            inner,
        } => PlanRule::Bounded {
            namespace: *namespace,
            budget: *budget,
            otherwise: index(otherwise, owner)?,
            escalation_with_feedback: *escalation_with_feedback,
            inner: Box::new(compile_rule(inner, owner, index)?),
            counter_key: format!("{}:{owner}", namespace.as_str()),
        },
        TransitionRule::RubricFail => PlanRule::RubricFail,
    })
}

/// Whether a name is an engine variable (re-exported for handlers).
pub fn engine_variable(name: &str) -> bool {
    is_engine_variable(name)
}
