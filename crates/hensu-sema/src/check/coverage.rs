//! Outcomes a workflow leaves without a route, and declarations nothing uses: W0311 (score arms
//! with a gap), W0312 (action node without `onFailure`), W0313 (agent never used), W0314 (rubric
//! whose criteria weigh nothing). docs/language.md, *Checks*.

use hensu_diagnostics::{Diagnostic, codes};
use hensu_ir::{Action, Node, RuleKind, TransitionRule};

use super::Ctx;
use super::intervals::score_gaps;

/// The handler ids `send("…")` accepts without extra host configuration.
pub const BUILTIN_HANDLERS: &[&str] = &["log"];

pub(super) fn check(cx: &mut Ctx<'_>) {
    let wf = cx.wf;
    // An unknown agent (E0205) is usually a misspelling of the declared one, which would then
    // look unused: the root cause is reported, not its echo.
    let agent_unresolved = cx.diagnostics.iter().any(|d| codes::E0205 == d.code);
    for (id, node) in &wf.nodes {
        let rules = node.transition_rules();
        score_gap(cx, id, rules);
        if let Node::Action(a) = node {
            action_failure(cx, id, &a.actions, rules);
        }
        if let Some(rubric) = node.rubric() {
            rubric_weight(cx, id, rubric);
        }
    }
    if !agent_unresolved {
        unused_agents(cx);
    }
}

/// W0314: a rubric without a `#### Criterion` (the parser then falls back to one "Overall
/// Quality" criterion, so nothing specific is checked), or whose criteria weigh 0 (every output
/// scores 0.0 and fails).
fn rubric_weight(cx: &mut Ctx<'_>, id: &str, rubric: &hensu_ir::Rubric) {
    let declares_none = !rubric
        .raw_content
        .lines()
        .any(|l| l.trim_start().starts_with("#### "));
    let weight: f64 = rubric.criteria.iter().map(|c| c.weight).sum();
    if !declares_none && weight > 0.0 {
        return;
    }
    let (message, label, note) = if declares_none {
        (
            format!("rubric `{}` declares no criterion", rubric.id),
            "no `#### Criterion` in this rubric",
            "hensu then scores against one generic criterion, \"Overall Quality\"; list items \
             that are not under a `####` criterion are ignored",
        )
    } else {
        (
            format!("rubric `{}` has no weighted criteria", rubric.id),
            "the weights of its criteria add up to 0",
            "the rubric then scores every output 0.0 and fails it",
        )
    };
    let d = Diagnostic::new(codes::W0314, message, cx.prop_span(id, "rubric"), label)
        .with_note(note)
        .with_help(
            "put the categories under a `## Criteria` heading: `### Category (weight: N)`, then \
             each `#### Criterion` with a `- points: N` line; `## Metadata` holds only \
             `- key: value` lines",
        );
    cx.emit(d);
}

/// W0311: the score arms leave part of 0..100 without a route and no catch-all follows them.
fn score_gap(cx: &mut Ctx<'_>, id: &str, rules: &[TransitionRule]) {
    let Some(first) = rules.iter().position(|r| r.trigger() == RuleKind::Score) else {
        return;
    };
    // Any later rule that routes a successful result (a catch-all, a condition, the review
    // verdicts) may take the scores the arms leave; only a score block that ends the routing
    // has a gap.
    if rules[first..]
        .iter()
        .any(|r| !matches!(r.trigger(), RuleKind::Score | RuleKind::Failure))
    {
        return;
    }
    let arms = rules.iter().filter_map(|r| match r.trigger_rule() {
        TransitionRule::Score { conditions, .. } => Some(conditions.iter()),
        _ => None,
    });
    let gaps = score_gaps(arms.flatten());
    let Some(gap) = gaps.first() else {
        return;
    };
    let rendered: Vec<String> = gaps.iter().map(|g| g.render()).collect();
    let list = rendered.join(", ");
    let mut d = Diagnostic::new(
        codes::W0311,
        format!("no score arm matches the scores {list}"),
        cx.trigger_span(id, first),
        format!("a score in {} has nowhere to go", gap.render()),
    )
    .with_note("a run whose score falls there stops with \"no valid transition\"")
    .with_help(
        "widen an arm to cover the gap, or add `otherwise goto \"…\"` as the last arm of the \
         `onScore { }` block",
    );
    if gaps.len() > 1 {
        d = d.with_note(format!("{} uncovered intervals in all", gaps.len()));
    }
    cx.emit(d);
}

/// W0312: an action that can fail (a command, or a handler other than `log`) with no
/// `onFailure` rule.
fn action_failure(cx: &mut Ctx<'_>, id: &str, actions: &[Action], rules: &[TransitionRule]) {
    let can_fail = actions.iter().any(|a| match a {
        Action::Execute { .. } => true,
        Action::Send { handler_id, .. } => !BUILTIN_HANDLERS.contains(&handler_id.as_str()),
    });
    if !can_fail
        || rules.is_empty()
        || rules
            .iter()
            .any(|r| matches!(r.trigger(), RuleKind::Failure | RuleKind::Always))
    {
        return;
    }
    let d = Diagnostic::new(
        codes::W0312,
        format!("action node `{id}` has no `onFailure` transition"),
        cx.node_span(id),
        "a failing command or handler ends the run here",
    )
    .with_note("a run whose action fails stops with \"no valid transition\"")
    .with_help("add `onFailure goto \"…\"`, or `onFailure retry 2 otherwise \"…\"` to retry it");
    cx.emit(d);
}

/// W0313: an agent that no node, branch or judge refers to.
fn unused_agents(cx: &mut Ctx<'_>) {
    let wf = cx.wf;
    let mut used = rustc_hash::FxHashSet::default();
    for node in wf.nodes.values() {
        match node {
            Node::Standard(n) => used.extend(n.agent_id.as_deref()),
            Node::Map(m) => used.extend(m.agent_id.as_deref()),
            Node::Parallel(p) => {
                used.extend(p.branches.iter().map(|b| b.agent_id.as_str()));
                used.extend(
                    p.consensus_config
                        .as_ref()
                        .and_then(|c| c.judge_agent_id.as_deref()),
                );
            }
            _ => {}
        }
    }
    for (agent, _) in &wf.agents {
        if used.contains(agent.as_str()) {
            continue;
        }
        let span = cx
            .origins
            .agents
            .get(agent)
            .map(|a| a.id)
            .unwrap_or_else(|| cx.fallback());
        let d = Diagnostic::new(
            codes::W0313,
            format!("agent `{agent}` is never used"),
            span,
            "no node, branch or judge uses this agent",
        )
        .with_help(format!(
            "use it with `agent = \"{agent}\"` in a node, or remove the declaration"
        ));
        cx.emit(d);
    }
}
