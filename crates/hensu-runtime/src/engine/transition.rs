//! Transition resolution and the engine-variable lifecycle (docs/language.md,
//! *Transition resolution and budgets*).

use std::time::Duration;

use hensu_ir::{CompiledRule, RuleKind, Target};
use serde_json::Value;

use super::Exec;
use super::Prepared;
use super::pipeline::{PostCtx, ProcessorOutcome};
use crate::error::RuntimeError;
use crate::events::{BoundedInfo, Event, TransitionCause};
use crate::plan::{RuleEval, RuleExtra, evaluate, explain_no_match};
use crate::state::{Backtrack, BacktrackKind, NodeStatus, RunState};
use crate::value::remove_var;

/// Where a matching rule leads, and how.
struct Route<'p> {
    dest: usize,
    /// Whether the review's reason (or the retry's feedback) stays as `recommendation`.
    feedback: bool,
    /// The rule's budget, for a bounded rule.
    bounded: Option<BoundedInfo<'p>>,
    /// A bounded rule retried (within its budget): a revise back-track.
    retried: bool,
}

impl Exec<'_> {
    /// Transition resolution and the engine-variable lifecycle.
    pub(super) fn transition(
        &self,
        p: &Prepared,
        state: &mut RunState,
        pc: &mut PostCtx<'_>,
    ) -> Result<ProcessorOutcome, RuntimeError> {
        let pn = &p.plan.nodes[pc.idx];
        let id = p.plan.id(pc.idx);
        if state.node_redirected {
            self.redirected(p, state, pc);
            return Ok(ProcessorOutcome::Continue);
        }
        let verdict_reason = state
            .review_verdict
            .as_ref()
            .and_then(|v| v.reason.clone())
            .filter(|r| !r.trim().is_empty());
        let mut tried: Vec<String> = Vec::new();
        for (rule, extra) in p.plan.rules(pc.idx).iter().zip(&pn.rule_extras) {
            let (target, cause) = match evaluate(
                rule,
                extra,
                &pc.result,
                &state.context,
                state.review_verdict.as_ref(),
            ) {
                RuleEval::Match { target, cause } => (target, cause),
                RuleEval::NoMatch(diag) => {
                    tried.push(explain_no_match(
                        rule,
                        extra,
                        &pc.result,
                        &state.context,
                        state.review_verdict.as_ref(),
                    ));
                    if let Some(message) = diag.filter(|_| pc.result.status == NodeStatus::Success)
                    {
                        self.listener.on_event(&Event::TransitionWarning {
                            node_id: id,
                            message: &message,
                        });
                    }
                    continue;
                }
            };
            let route = route(p, state, pc.idx, rule, extra, target, &verdict_reason)?;
            if !route.retried {
                reset_after_route(p, state, pc.idx, route.feedback, &verdict_reason);
            } else if let (CompiledRule::Bounded { inner, .. }, Some(b)) = (rule, &route.bounded)
                && inner.trigger() == RuleKind::Failure
            {
                pc.backoff = backoff(p.workflow(), id, b.count);
            }
            self.take(p, state, pc, route, cause);
            return Ok(ProcessorOutcome::Continue);
        }
        state.review_verdict = None;
        if tried.is_empty() {
            tried.push("the node has no transition rules".to_string());
        }
        // A timeout is the reason the run failed: said first, so the run's failure names it.
        if let Some(e) = pc
            .result
            .error
            .as_deref()
            .filter(|e| e.starts_with("timed out after"))
        {
            tried.insert(0, format!("the node {e}"));
        }
        Err(RuntimeError::NoValidTransition {
            node: id.to_string(),
            tried,
        })
    }

    /// A rubric or review already chose the next node (`pc.next`): the review's reason, if
    /// any, becomes the `recommendation` it goes back with.
    fn redirected(&self, p: &Prepared, state: &mut RunState, pc: &PostCtx<'_>) {
        state.node_redirected = false;
        if let Some(reason) = state
            .review_verdict
            .take()
            .and_then(|v| v.reason)
            .filter(|r| !r.trim().is_empty())
        {
            state
                .context
                .insert("recommendation".into(), Value::String(reason));
        }
        if let Some(next) = pc.next.filter(|_| self.step_events) {
            self.listener.on_event(&Event::TransitionTaken {
                from: p.plan.id(pc.idx),
                to: p.plan.id(next),
                cause: TransitionCause::Redirected,
                bounded: None,
                feedback: state.context.contains_key("recommendation"),
            });
        }
    }

    /// Takes `route`: the verdict is spent, a retry is a revise back-track, and the run moves
    /// to the destination.
    #[inline]
    fn take(
        &self,
        p: &Prepared,
        state: &mut RunState,
        pc: &mut PostCtx<'_>,
        route: Route<'_>,
        cause: TransitionCause<'_>,
    ) {
        let id = p.plan.id(pc.idx);
        state.review_verdict = None;
        let to = p.plan.id(route.dest);
        if route.retried {
            let reason = format!("{cause}");
            state.backtracks.push(Backtrack {
                from: id.to_string(),
                to: to.to_string(),
                kind: BacktrackKind::Revise,
                reason,
            });
        }
        if self.step_events {
            self.listener.on_event(&Event::TransitionTaken {
                from: id,
                to,
                cause,
                bounded: route.bounded,
                feedback: route.feedback && state.context.contains_key("recommendation"),
            });
        }
        state.current_node.clear();
        state.current_node.push_str(to);
        pc.next = Some(route.dest);
    }
}

/// The wait before failure retry `attempt` (1-based) of `node`: its `backoff` doubled per
/// attempt, capped at [`hensu_ir::MAX_BACKOFF_MS`], less a jitter of up to a quarter. The jitter
/// is a hash of the workflow, the node and the attempt — the same on every run, so a test's
/// timing is reproducible, while the nodes of a workflow do not retry in step.
pub(crate) fn backoff(wf: &hensu_ir::Workflow, node: &str, attempt: i64) -> Option<Duration> {
    let attempt = u32::try_from(attempt.max(1)).unwrap_or(u32::MAX);
    let full = wf.timing.nodes.get(node)?.backoff_before(attempt)?;
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in wf
        .id
        .bytes()
        .chain([0])
        .chain(node.bytes())
        .chain(attempt.to_le_bytes())
    {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    let jitter = h % (full / 4 + 1);
    Some(Duration::from_millis(full - jitter))
}

/// Where the matching `rule` leads. A bounded rule within its budget counts the retry, and the
/// feedback of its inner rule's trigger becomes the `recommendation` (a failure retries
/// without one); once the budget is spent the rule escalates to its `otherwise` target.
#[inline]
fn route<'p>(
    p: &'p Prepared,
    state: &mut RunState,
    idx: usize,
    rule: &'p CompiledRule,
    extra: &RuleExtra,
    target: &Target,
    verdict_reason: &Option<String>,
) -> Result<Route<'p>, RuntimeError> {
    let CompiledRule::Bounded {
        namespace,
        budget,
        otherwise,
        inner,
        ..
    } = rule
    else {
        return Ok(Route {
            dest: p.plan.resolve(idx, target)?,
            feedback: rule.with_feedback(),
            bounded: None,
            retried: false,
        });
    };
    let counter_key = &extra.counter_key;
    let count = state.retry_counters.get(counter_key).copied().unwrap_or(0);
    if count >= *budget {
        return Ok(Route {
            dest: p.plan.resolve(idx, otherwise)?,
            feedback: rule.with_feedback(),
            bounded: Some(BoundedInfo {
                namespace: namespace.as_str(),
                count,
                budget: *budget,
                exhausted: true,
            }),
            retried: false,
        });
    }
    state.retry_counters.insert(counter_key.clone(), count + 1);
    let ctx = &mut state.context;
    let id = p.plan.id(idx);
    match inner.trigger() {
        RuleKind::Failure => {
            remove_var(ctx, "recommendation");
        }
        RuleKind::NoConsensus => {
            let key = format!("consensus_feedback:{id}");
            if let Some(Value::String(fb)) = ctx.shift_remove(key.as_str())
                && !fb.trim().is_empty()
            {
                ctx.insert("recommendation".into(), Value::String(fb));
            }
        }
        _ => {
            if let Some(r) = verdict_reason {
                ctx.insert("recommendation".into(), Value::String(r.clone()));
            }
        }
    }
    for v in p.plan.routing_vars(idx) {
        remove_var(ctx, v);
    }
    Ok(Route {
        dest: p.plan.resolve(idx, target)?,
        feedback: ctx.contains_key("recommendation"),
        bounded: Some(BoundedInfo {
            namespace: namespace.as_str(),
            count: count + 1,
            budget: *budget,
            exhausted: false,
        }),
        retried: true,
    })
}

/// Leaving the node other than by a retry: its retry counters reset, its routing variables
/// go, and the `recommendation` stays (the review's reason) only when the rule carries
/// feedback.
#[inline]
fn reset_after_route(
    p: &Prepared,
    state: &mut RunState,
    idx: usize,
    feedback: bool,
    verdict_reason: &Option<String>,
) {
    if !state.retry_counters.is_empty() {
        let suffix = p.plan.nodes[idx].counter_suffix.as_str();
        state.retry_counters.retain(|k, _| !k.ends_with(suffix));
    }
    let ctx = &mut state.context;
    for v in p.plan.routing_vars(idx) {
        remove_var(ctx, v);
    }
    if feedback {
        if let Some(r) = verdict_reason {
            ctx.insert("recommendation".into(), Value::String(r.clone()));
        }
    } else {
        remove_var(ctx, "recommendation");
    }
}
