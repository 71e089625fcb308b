//! Transition-rule checks: E0301, E0302, E0304, E0305/W0305, E0306, E0308, E0309, E0310, W0304,
//! W0306, W0309.

use hensu_diagnostics::{Diagnostic, Span, codes};
use hensu_ir::{
    ComparisonOperator, ConditionPredicate, ConsensusStrategy, MergeStrategy, Namespace, Node,
    RuleKind, ScoreCondition, TransitionRule, java_double_to_string,
};

use super::fxhash::FxHashMap as HashMap;
use super::graph::for_each_rule_target;
use super::intervals::{condition_arms_overlap, describe_score_arm, score_overlap};
use super::{Ctx, InputKind, describe_rule};

pub(super) fn check(cx: &mut Ctx<'_>) {
    let wf = cx.wf;
    for (id, node) in &wf.nodes {
        let rules = node.transition_rules();
        score_arms(cx, id, rules);
        condition_arms(cx, id, rules);
        namespaces(cx, id, rules);
        unconditional(cx, id, rules);
        shadowed_exits(cx, id, rules);
        if !node.is_end() && rules.is_empty() {
            let d = Diagnostic::new(
                codes::E0310,
                format!("node `{id}` has no transition"),
                cx.node_span(id),
                "a run reaching this node can never leave it",
            )
            .with_help(match node {
                Node::Fork(_) => "add `onComplete goto \"<join>\"`".to_string(),
                _ => "add a transition, e.g. `onSuccess goto \"…\"`".to_string(),
            });
            cx.emit(d);
        }
        match node {
            Node::Standard(n) if n.review_config.is_some() => review_arms(cx, id, rules),
            Node::Fork(_) => fork_completion(cx, id, rules),
            Node::Parallel(p) => {
                if let Some(c) = &p.consensus_config
                    && c.strategy == ConsensusStrategy::JudgeDecides
                    && c.judge_agent_id.is_none()
                {
                    {
                        let span = cx
                            .node_origin(id)
                            .and_then(|o| {
                                o.consensus_props.get("strategy").copied().or(o.consensus)
                            })
                            .unwrap_or_else(|| cx.node_span(id));
                        let d = Diagnostic::new(
                            codes::E0308,
                            "`JUDGE_DECIDES` consensus without a judge",
                            span,
                            "this strategy needs a judge agent",
                        )
                        .with_help("add `judge = \"<agent id>\"` to the `consensus { }` block");
                        cx.emit(d);
                    }
                }
            }
            Node::Join(j) => {
                let n = j.writes.len();
                let bad = match j.merge_strategy {
                    MergeStrategy::MergeMaps => n == 0 && cx.input == InputKind::Json,
                    _ => n > 1 || (n == 0 && cx.input == InputKind::Json),
                };
                if bad {
                    let strategy = j.merge_strategy.as_str();
                    let span = cx.list_span(id, |o| &o.writes, 1.min(n.saturating_sub(1)));
                    let (message, help) = if j.merge_strategy == MergeStrategy::MergeMaps {
                        (
                            format!("`{strategy}` join writes no variable"),
                            "declare at least one `writes(\"…\")`".to_string(),
                        )
                    } else {
                        (
                            format!("`{strategy}` join writes {n} variables, expected exactly one"),
                            "write one variable, or use `mergeStrategy = MergeStrategy.MERGE_MAPS` \
                             to merge maps into several"
                                .to_string(),
                        )
                    };
                    let d = Diagnostic::new(
                        codes::E0309,
                        message,
                        span,
                        format!("`{strategy}` merges into one variable"),
                    )
                    .with_help(help);
                    cx.emit(d);
                }
            }
            _ => {}
        }
    }
}

/// A score arm of a node: rule index, condition index, condition, inside a bounded rule.
struct ScoreArm<'w> {
    rule: usize,
    cond: usize,
    condition: &'w ScoreCondition,
    /// The arm is `… revise "x" retry N otherwise "y"`.
    bounded: bool,
}

fn collect_score_arms(rules: &[TransitionRule]) -> Vec<ScoreArm<'_>> {
    let mut arms = Vec::new();
    for (r, rule) in rules.iter().enumerate() {
        if let TransitionRule::Score { conditions, .. } = rule.trigger_rule() {
            for (j, condition) in conditions.iter().enumerate() {
                arms.push(ScoreArm {
                    rule: r,
                    cond: j,
                    condition,
                    bounded: rule.bounded().is_some(),
                });
            }
        }
    }
    arms
}

/// E0301 (overlapping score arms, in evaluation order across every score rule of the node) and
/// W0309 (threshold outside 0..100).
fn score_arms(cx: &mut Ctx<'_>, id: &str, rules: &[TransitionRule]) {
    let arms = collect_score_arms(rules);
    for arm in &arms {
        let c = arm.condition;
        let outside = |v: f64| !(0.0..=100.0).contains(&v);
        let bad: Vec<f64> = match c.operator {
            ComparisonOperator::Range => c
                .range
                .map(|r| {
                    [r.start, r.end]
                        .into_iter()
                        .filter(|v| outside(*v))
                        .collect()
                })
                .unwrap_or_default(),
            _ => c.value.filter(|v| outside(*v)).into_iter().collect(),
        };
        if let Some(v) = bad.first() {
            let d = Diagnostic::new(
                codes::W0309,
                format!(
                    "score threshold {} is outside 0..100",
                    java_double_to_string(*v)
                ),
                cx.condition_span(id, arm.rule, arm.cond),
                "scores are between 0 and 100",
            )
            .with_help("use a threshold between 0 and 100");
            cx.emit(d);
        }
    }
    for (j, later) in arms.iter().enumerate() {
        // A bounded arm before an overlapping exit arm is budget-first routing: W0306.
        let Some((earlier, common)) = arms[..j]
            .iter()
            .filter(|a| !a.bounded || later.bounded)
            .find_map(|a| score_overlap(a.condition, later.condition).map(|o| (a, o)))
        else {
            continue;
        };
        let later_span = cx.condition_span(id, later.rule, later.cond);
        let earlier_span = cx.condition_span(id, earlier.rule, earlier.cond);
        let a = describe_score_arm(earlier.condition);
        let b = describe_score_arm(later.condition);
        let mut d = Diagnostic::new(
            codes::E0301,
            format!("score arms `{a}` and `{b}` overlap"),
            later_span,
            if common.lo.is_some() && common.lo == common.hi {
                format!("this arm never sees the score {}", common.render())
            } else {
                format!("this arm never sees scores {}", common.render())
            },
        )
        .with_label(
            earlier_span,
            format!("`{a}` is evaluated first and takes them"),
        )
        .with_help("make the arms disjoint: the first matching arm wins");
        if later_span.start < earlier_span.start && later_span != earlier_span {
            d = d.with_note(
                "`goto` arms are evaluated before `goto … withFeedback` arms, and those before \
                 `revise` arms, whatever order they are written in",
            );
        }
        cx.emit(d);
    }
}

/// E0302: two arms on the same `onCondition` variable can match the same value.
fn condition_arms(cx: &mut Ctx<'_>, id: &str, rules: &[TransitionRule]) {
    let mut seen: Vec<(usize, &str, &ConditionPredicate)> = Vec::new();
    for (r, rule) in rules.iter().enumerate() {
        let TransitionRule::Condition {
            variable,
            predicate,
            ..
        } = rule.trigger_rule()
        else {
            continue;
        };
        let earlier = seen
            .iter()
            .find(|(_, v, p)| *v == variable.as_str() && condition_arms_overlap(p, predicate));
        if let Some(&(er, _, ep)) = earlier {
            let a = ep.describe();
            let b = predicate.describe();
            let label = match predicate {
                ConditionPredicate::Eq(x) => {
                    format!("this arm can never match: \"{x}\" is taken by the earlier arm")
                }
                _ => format!("some values of `{variable}` match both arms; the earlier one wins"),
            };
            let d = Diagnostic::new(
                codes::E0302,
                format!("condition arms `{a}` and `{b}` on `{variable}` overlap"),
                cx.rule_span(id, r),
                label,
            )
            .with_label(cx.rule_span(id, er), format!("`{a}` is evaluated first"))
            .with_help("make the arms disjoint: the first matching arm wins");
            cx.emit(d);
        }
        seen.push((r, variable.as_str(), predicate));
    }
}

/// E0304: two bounded rules of one node share a retry-counter namespace.
fn namespaces(cx: &mut Ctx<'_>, id: &str, rules: &[TransitionRule]) {
    let mut first: HashMap<Namespace, usize> = HashMap::default();
    for (r, rule) in rules.iter().enumerate() {
        let Some((ns, _)) = rule.bounded() else {
            continue;
        };
        match first.get(&ns) {
            None => {
                first.insert(ns, r);
            }
            Some(&f) => {
                let d = Diagnostic::new(
                    codes::E0304,
                    format!("two bounded rules share the `{ns}` retry namespace"),
                    cx.trigger_span(id, r),
                    "this rule would share a retry counter with the first one",
                )
                .with_label(
                    cx.trigger_span(id, f),
                    format!("first `{ns}` retry rule here"),
                )
                .with_help("keep a single revise/retry arm per trigger kind on a node");
                cx.emit(d);
            }
        }
    }
}

/// E0305 / W0305: a reviewed node routes only one of the two verdicts.
fn review_arms(cx: &mut Ctx<'_>, id: &str, rules: &[TransitionRule]) {
    let mut last_approval = None;
    let mut last_rejection = None;
    for (r, rule) in rules.iter().enumerate() {
        if let TransitionRule::Approval { expected, .. } = rule.trigger_rule() {
            if *expected {
                last_approval = Some(r);
            } else {
                last_rejection = Some(r);
            }
        }
    }
    let (present, missing, verdict) = match (last_approval, last_rejection) {
        (Some(a), None) => (a, "onRejection", "a rejection"),
        (None, Some(r)) => (r, "onApproval", "an approval"),
        _ => return,
    };
    let review_span = cx
        .node_origin(id)
        .and_then(|o| o.review)
        .unwrap_or_else(|| cx.node_span(id));
    let catch_all = rules
        .iter()
        .enumerate()
        .skip(present + 1)
        .find(|(_, r)| matches!(r.trigger(), RuleKind::Success | RuleKind::Always));
    match catch_all {
        Some((c, rule)) => {
            let d = Diagnostic::new(
                codes::W0305,
                format!("{verdict} at reviewed node `{id}` falls through to a catch-all rule"),
                cx.rule_span(id, c),
                format!("{verdict} is routed by `{}`", describe_rule(rule)),
            )
            .with_label(
                cx.rule_span(id, present),
                format!("no `{missing}` arm next to this one"),
            )
            .with_help(format!(
                "add `{missing} goto \"…\"` if {verdict} should go elsewhere"
            ));
            cx.emit(d);
        }
        None => {
            let d = Diagnostic::new(
                codes::E0305,
                format!("reviewed node `{id}` has no `{missing}` arm"),
                cx.rule_span(id, present),
                format!("only this verdict is routed; {verdict} has nowhere to go"),
            )
            .with_label(review_span, "the reviewer can give either verdict")
            .with_help(format!("add `{missing} goto \"…\"`"));
            cx.emit(d);
        }
    }
}

/// E0306: a fork's `onComplete` must target a join that awaits this fork.
fn fork_completion(cx: &mut Ctx<'_>, id: &str, rules: &[TransitionRule]) {
    let wf = cx.wf;
    for (r, rule) in rules.iter().enumerate() {
        let TransitionRule::Success { target_node, .. } = rule else {
            continue;
        };
        let span = cx
            .rule_origin(id, r)
            .and_then(|o| o.target)
            .unwrap_or_else(|| cx.rule_span(id, r));
        match wf.nodes.get(target_node) {
            None => {} // E0204
            Some(Node::Join(join)) if !join.await_targets.iter().any(|a| a == id) => {
                let await_span = cx
                    .node_origin(target_node)
                    .and_then(|o| o.awaits.first().copied())
                    .unwrap_or_else(|| cx.node_span(target_node));
                let d = Diagnostic::new(
                    codes::E0306,
                    format!("join `{target_node}` does not await fork `{id}`"),
                    span,
                    format!("the fork completes into `{target_node}`"),
                )
                .with_label(await_span, format!("`{id}` is not awaited here"))
                .with_help(format!("add `await(\"{id}\")` to join `{target_node}`"));
                cx.emit(d);
            }
            Some(Node::Join(_)) => {}
            Some(other) => {
                let d = Diagnostic::new(
                    codes::E0306,
                    format!("fork `{id}` completes into `{target_node}`, which is not a join"),
                    span,
                    format!("`{target_node}` is {}", kind_phrase(other)),
                )
                .with_label(cx.node_span(target_node), "declared here")
                .with_help(
                    "`onComplete` must target a `join(\"…\") { await(\"<this fork>\") }` node",
                );
                cx.emit(d);
            }
        }
    }
}

/// W0304: an unconditional rule makes every later success-only rule unreachable.
fn unconditional(cx: &mut Ctx<'_>, id: &str, rules: &[TransitionRule]) {
    let Some(u) = rules
        .iter()
        .position(|r| matches!(r.trigger(), RuleKind::Always | RuleKind::Success))
    else {
        return;
    };
    // Success, Always, Condition, Score and Approval rules match only a successful result (the
    // review verdict and the score are read from one), which rule `u` takes.
    let dead: Vec<usize> = (u + 1..rules.len())
        .filter(|&r| {
            matches!(
                rules[r].trigger(),
                RuleKind::Success
                    | RuleKind::Always
                    | RuleKind::Condition
                    | RuleKind::Score
                    | RuleKind::Approval
            )
        })
        .collect();
    let Some(&first) = dead.first() else {
        return;
    };
    let mut d = Diagnostic::new(
        codes::W0304,
        "transition after an unconditional rule can never match",
        cx.rule_span(id, first),
        "this rule can never match",
    )
    .with_label(
        cx.rule_span(id, u),
        format!(
            "`{}` takes every successful result first",
            describe_rule(&rules[u])
        ),
    )
    .with_help("remove the rule, or move it before the unconditional one");
    if dead.len() > 1 {
        d = d.with_note(format!(
            "{} more rules after it can never match either",
            dead.len() - 1
        ));
    }
    cx.emit(d);
}

/// The routing condition of a rule, for the shadowing check W0306.
#[derive(Clone, Copy)]
enum Guard<'w> {
    Score(&'w [ScoreCondition]),
    Condition(&'w str),
    Approval(bool),
    NoConsensus,
}

fn guard(rule: &TransitionRule) -> Option<Guard<'_>> {
    match rule {
        TransitionRule::Score { conditions, .. } => Some(Guard::Score(conditions)),
        TransitionRule::Condition { variable, .. } => Some(Guard::Condition(variable)),
        TransitionRule::Approval { expected, .. } => Some(Guard::Approval(*expected)),
        TransitionRule::NoConsensus { .. } => Some(Guard::NoConsensus),
        _ => None,
    }
}

/// Whether a bounded arm guarded by `b` can take values meant for a later exit arm guarded by
/// `x`. Overlapping score arms are W0306 here, not E0301, when the earlier one is bounded (the
/// overlap is budget-first routing); same-variable condition pairs are E0302.
fn shadows(b: Guard<'_>, x: Guard<'_>) -> bool {
    match (b, x) {
        (Guard::Score(_), Guard::Condition(_)) | (Guard::Condition(_), Guard::Score(_)) => true,
        (Guard::Score(a), Guard::Score(b)) => a
            .iter()
            .any(|a| b.iter().any(|b| score_overlap(a, b).is_some())),
        (Guard::Condition(v), Guard::Condition(w)) => v != w,
        (Guard::Approval(e), Guard::Approval(f)) => e == f,
        (Guard::NoConsensus, Guard::NoConsensus) => true,
        _ => false,
    }
}

/// W0306: an exit arm after an overlapping bounded arm is shadowed while the budget lasts.
fn shadowed_exits(cx: &mut Ctx<'_>, id: &str, rules: &[TransitionRule]) {
    let mut bounded: Vec<(usize, Guard<'_>)> = Vec::new();
    for (r, rule) in rules.iter().enumerate() {
        if rule.bounded().is_some() {
            // `onFailure retry` and `otherwise revise` are not guarded arms (W0304 covers the latter).
            if let Some(g) = guard(rule.trigger_rule()) {
                bounded.push((r, g));
            }
            continue;
        }
        let Some(x) = guard(rule) else { continue };
        let Some(&(b, _)) = bounded.iter().find(|(_, g)| shadows(*g, x)) else {
            continue;
        };
        let mut exits = false;
        for_each_rule_target(rule, &mut |t| exits |= t.target.is_some_and(|t| t != id));
        if !exits {
            continue;
        }
        let back = rules[b]
            .trigger_rule()
            .targets()
            .first()
            .map(|t| format!(" and loops back to `{t}`"))
            .unwrap_or_default();
        let d = Diagnostic::new(
            codes::W0306,
            "exit arm declared after an overlapping bounded arm",
            exit_span(cx, id, r, rule),
            "this arm cannot fire for the shared values until the retry budget is spent",
        )
        .with_label(
            cx.rule_span(id, b),
            format!("this bounded arm matches first{back}"),
        )
        .with_help(
            "declare the exit arm before the bounded arm, unless budget-first routing is intended",
        );
        cx.emit(d);
    }
}

fn exit_span(cx: &Ctx<'_>, id: &str, r: usize, rule: &TransitionRule) -> Span {
    match rule {
        TransitionRule::Score { .. } => cx.condition_span(id, r, 0),
        _ => cx.rule_span(id, r),
    }
}

/// `a standard node`, `an end node`, `a sub-workflow node`, ….
fn kind_phrase(node: &Node) -> &'static str {
    match node {
        Node::Standard(_) => "a standard node",
        Node::Parallel(_) => "a parallel node",
        Node::Fork(_) => "a fork",
        Node::Join(_) => "a join",
        Node::Generic(_) => "a generic node",
        Node::Action(_) => "an action node",
        Node::SubWorkflow(_) => "a sub-workflow node",
        Node::End(_) => "an end node",
        Node::Wait(w) if w.signal().is_some() => "an awaitSignal node",
        Node::Wait(_) => "a wait node",
        Node::Map(_) => "a map node",
    }
}
