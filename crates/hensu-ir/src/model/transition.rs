//! Transition rules: one [`TransitionRule`] variant per rule kind, with score conditions and
//! condition predicates.

use super::*;
use crate::number::{canonical_number, java_double_to_string};

/// One transition rule; one variant per rule kind (the `transitionRules` of a node).
#[derive(Clone, Debug, PartialEq)]
pub enum TransitionRule {
    /// `onSuccess` / `onConsensus` / `onComplete goto`.
    Success {
        target_node: String,
        with_feedback: bool,
    },
    /// `onFailure goto "x"` (`Some`) or the self-retry inner rule of `onFailure retry` (`None`).
    Failure { target_node: Option<String> },
    /// `onNoConsensus goto`.
    NoConsensus {
        target_node: String,
        with_feedback: bool,
    },
    /// `onApproval` (`expected = true`) / `onRejection` (`false`).
    Approval {
        expected: bool,
        target_node: String,
        with_feedback: bool,
    },
    /// A group of `whenScore` arms; the first matching condition wins.
    Score {
        conditions: Vec<ScoreCondition>,
        with_feedback: bool,
    },
    /// One `whenValue` arm of `onCondition("variable")`.
    Condition {
        variable: String,
        predicate: ConditionPredicate,
        target_node: String,
        with_feedback: bool,
    },
    /// An `otherwise` else-arm.
    Always {
        target_node: String,
        with_feedback: bool,
    },
    /// `revise … retry N otherwise "x"` / `onFailure retry N otherwise "x"`.
    Bounded {
        namespace: Namespace,
        budget: i64,
        /// The escalation target once the budget is exhausted.
        otherwise: String,
        escalation_with_feedback: bool,
        inner: Box<TransitionRule>,
    },
    /// Java-API-only rule; reads back as a rule that never matches.
    RubricFail,
    /// hensu extension: `review { deadline = 48.hours; onTimeout goto "x" }` — where a review
    /// not decided by its deadline goes (docs/language.md, *Review*).
    ReviewTimeout { target_node: String },
}

impl TransitionRule {
    /// The outer rule kind (`Bounded` for a bounded rule).
    pub fn kind(&self) -> RuleKind {
        match self {
            TransitionRule::Success { .. } => RuleKind::Success,
            TransitionRule::Failure { .. } => RuleKind::Failure,
            TransitionRule::NoConsensus { .. } => RuleKind::NoConsensus,
            TransitionRule::Approval { .. } => RuleKind::Approval,
            TransitionRule::Score { .. } => RuleKind::Score,
            TransitionRule::Condition { .. } => RuleKind::Condition,
            TransitionRule::Always { .. } => RuleKind::Always,
            TransitionRule::Bounded { .. } => RuleKind::Bounded,
            TransitionRule::RubricFail => RuleKind::RubricFail,
            TransitionRule::ReviewTimeout { .. } => RuleKind::ReviewTimeout,
        }
    }

    /// The innermost rule kind (a bounded rule's trigger is its inner rule's kind).
    pub fn trigger(&self) -> RuleKind {
        self.trigger_rule().kind()
    }

    /// The innermost rule (self for non-bounded rules).
    pub fn trigger_rule(&self) -> &TransitionRule {
        let mut r = self;
        while let TransitionRule::Bounded { inner, .. } = r {
            r = inner;
        }
        r
    }

    /// Every target node id, in order: own targets (score: one per condition), for bounded the
    /// inner targets then `otherwise`. The self-retry `None` of a failure rule is skipped.
    pub fn targets(&self) -> Vec<&str> {
        let mut out = Vec::new();
        self.collect_targets(&mut out);
        out
    }

    fn collect_targets<'a>(&'a self, out: &mut Vec<&'a str>) {
        match self {
            TransitionRule::Success { target_node, .. }
            | TransitionRule::NoConsensus { target_node, .. }
            | TransitionRule::Approval { target_node, .. }
            | TransitionRule::Condition { target_node, .. }
            | TransitionRule::Always { target_node, .. }
            | TransitionRule::ReviewTimeout { target_node } => out.push(target_node),
            TransitionRule::Failure { target_node } => {
                if let Some(t) = target_node {
                    out.push(t);
                }
            }
            TransitionRule::Score { conditions, .. } => {
                out.extend(conditions.iter().map(|c| c.target_node.as_str()));
            }
            TransitionRule::Bounded {
                otherwise, inner, ..
            } => {
                inner.collect_targets(out);
                out.push(otherwise);
            }
            TransitionRule::RubricFail => {}
        }
    }

    /// The context variables this rule routes on (upstream `requiredRoutingVars()`): score →
    /// `score, recommendation`; approval → `approved, recommendation`; condition → its variable,
    /// `recommendation`; bounded → its inner rule's; others none.
    pub fn required_routing_vars(&self) -> Vec<&str> {
        match self.trigger_rule() {
            TransitionRule::Score { .. } => vec!["score", "recommendation"],
            TransitionRule::Approval { .. } => vec!["approved", "recommendation"],
            TransitionRule::Condition { variable, .. } => vec![variable.as_str(), "recommendation"],
            _ => Vec::new(),
        }
    }

    /// The feedback flag that applies when this rule matches forward: `with_feedback` of plain
    /// rules, `escalation_with_feedback` of a bounded rule.
    pub fn with_feedback(&self) -> bool {
        match self {
            TransitionRule::Success { with_feedback, .. }
            | TransitionRule::NoConsensus { with_feedback, .. }
            | TransitionRule::Approval { with_feedback, .. }
            | TransitionRule::Score { with_feedback, .. }
            | TransitionRule::Condition { with_feedback, .. }
            | TransitionRule::Always { with_feedback, .. } => *with_feedback,
            TransitionRule::Bounded {
                escalation_with_feedback,
                ..
            } => *escalation_with_feedback,
            TransitionRule::Failure { .. }
            | TransitionRule::RubricFail
            | TransitionRule::ReviewTimeout { .. } => false,
        }
    }

    /// The bounded wrapper's `(namespace, budget)`, if any.
    pub fn bounded(&self) -> Option<(Namespace, i64)> {
        match self {
            TransitionRule::Bounded {
                namespace, budget, ..
            } => Some((*namespace, *budget)),
            _ => None,
        }
    }

    /// Whether the rule is unconditional on a successful result (`always`, or bounded `always`).
    pub fn is_unconditional(&self) -> bool {
        matches!(self.trigger(), RuleKind::Always)
    }
}

/// One arm of a score rule.
#[derive(Clone, Debug, PartialEq)]
pub struct ScoreCondition {
    pub operator: ComparisonOperator,
    /// The threshold; `Some(0.0)` for DSL-built RANGE arms, `None` when absent in JSON.
    pub value: Option<f64>,
    /// Closed range for `RANGE`.
    pub range: Option<ScoreRange>,
    pub target_node: String,
}

impl ScoreCondition {
    /// Whether `score` satisfies this condition (a missing operand never matches).
    pub fn matches(&self, score: f64) -> bool {
        match self.operator {
            ComparisonOperator::Range => self
                .range
                .is_some_and(|r| score >= r.start && score <= r.end),
            op => match self.value {
                None => false,
                Some(v) => match op {
                    ComparisonOperator::Gt => score > v,
                    ComparisonOperator::Gte => score >= v,
                    ComparisonOperator::Lt => score < v,
                    ComparisonOperator::Lte => score <= v,
                    ComparisonOperator::Eq => score == v,
                    ComparisonOperator::Range => false,
                },
            },
        }
    }

    /// Upstream visualize rendering: `LT 70.0`, `RANGE 50.0..79.0` (Java double formatting).
    pub fn describe(&self) -> String {
        match self.operator {
            ComparisonOperator::Range => match self.range {
                Some(r) => format!(
                    "RANGE {}..{}",
                    java_double_to_string(r.start),
                    java_double_to_string(r.end)
                ),
                None => "RANGE".to_string(),
            },
            op => match self.value {
                Some(v) => format!("{} {}", op.as_str(), java_double_to_string(v)),
                None => op.as_str().to_string(),
            },
        }
    }
}

/// A closed score interval `[start, end]`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScoreRange {
    pub start: f64,
    pub end: f64,
}

/// The predicate of a condition arm. Equality operands are stored in canonical string form
/// (see [`crate::canonical_number`]); ordering operands as numbers.
#[derive(Clone, Debug, PartialEq)]
pub enum ConditionPredicate {
    /// `equalTo` — JSON `EQ`.
    Eq(String),
    /// `notEqualTo` — JSON `NEQ`.
    Neq(String),
    /// `greaterThan` — JSON `GT`.
    Gt(f64),
    /// `greaterThanOrEqual` — JSON `GTE`.
    Gte(f64),
    /// `lessThan` — JSON `LT`.
    Lt(f64),
    /// `lessThanOrEqual` — JSON `LTE`.
    Lte(f64),
}

impl ConditionPredicate {
    /// The JSON `operator`.
    pub fn operator_name(&self) -> &'static str {
        match self {
            ConditionPredicate::Eq(_) => "EQ",
            ConditionPredicate::Neq(_) => "NEQ",
            ConditionPredicate::Gt(_) => "GT",
            ConditionPredicate::Gte(_) => "GTE",
            ConditionPredicate::Lt(_) => "LT",
            ConditionPredicate::Lte(_) => "LTE",
        }
    }

    /// The numeric operand of an ordering predicate.
    pub fn numeric_operand(&self) -> Option<f64> {
        match self {
            ConditionPredicate::Gt(v)
            | ConditionPredicate::Gte(v)
            | ConditionPredicate::Lt(v)
            | ConditionPredicate::Lte(v) => Some(*v),
            _ => None,
        }
    }

    /// Upstream `describe()`: `== "x"`, `!= "x"`, `> 0.9`, `>= 80`, `< 5`, `<= 5`.
    pub fn describe(&self) -> String {
        match self {
            ConditionPredicate::Eq(s) => format!("== \"{s}\""),
            ConditionPredicate::Neq(s) => format!("!= \"{s}\""),
            ConditionPredicate::Gt(v) => format!("> {}", canonical_number(*v)),
            ConditionPredicate::Gte(v) => format!(">= {}", canonical_number(*v)),
            ConditionPredicate::Lt(v) => format!("< {}", canonical_number(*v)),
            ConditionPredicate::Lte(v) => format!("<= {}", canonical_number(*v)),
        }
    }
}
