//! Transition resolution and the engine-variable lifecycle (docs/language.md,
//! *Transition resolution and budgets*).

use hensu_ir::{CompiledRule, RuleKind};
use serde_json::Value;

use super::Exec;
use super::Prepared;
use super::pipeline::{PostCtx, ProcessorOutcome};
use crate::error::RuntimeError;
use crate::events::{BoundedInfo, Event, TransitionCause};
use crate::plan::{RuleEval, evaluate, explain_no_match};
use crate::state::{Backtrack, BacktrackKind, NodeStatus, RunState};
use crate::value::remove_var;

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
                    from: id,
                    to: p.plan.id(next),
                    cause: TransitionCause::Redirected,
                    bounded: None,
                    feedback: state.context.contains_key("recommendation"),
                });
            }
            return Ok(ProcessorOutcome::Continue);
        }
        let verdict_reason = state
            .review_verdict
            .as_ref()
            .and_then(|v| v.reason.clone())
            .filter(|r| !r.trim().is_empty());
        let routing_vars = p.plan.routing_vars(pc.idx);
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
            let ctx = &mut state.context;
            let mut bounded = None;
            let dest;
            let feedback;
            let mut retried = false;
            if let CompiledRule::Bounded {
                namespace,
                budget,
                otherwise,
                inner,
                ..
            } = rule
            {
                let counter_key = &extra.counter_key;
                let count = state.retry_counters.get(counter_key).copied().unwrap_or(0);
                if count < *budget {
                    retried = true;
                    state.retry_counters.insert(counter_key.clone(), count + 1);
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
                            if let Some(r) = &verdict_reason {
                                ctx.insert("recommendation".into(), Value::String(r.clone()));
                            }
                        }
                    }
                    for v in routing_vars {
                        remove_var(ctx, v);
                    }
                    dest = p.plan.resolve(pc.idx, target)?;
                    feedback = ctx.contains_key("recommendation");
                    bounded = Some(BoundedInfo {
                        namespace: namespace.as_str(),
                        count: count + 1,
                        budget: *budget,
                        exhausted: false,
                    });
                } else {
                    dest = p.plan.resolve(pc.idx, otherwise)?;
                    bounded = Some(BoundedInfo {
                        namespace: namespace.as_str(),
                        count,
                        budget: *budget,
                        exhausted: true,
                    });
                    feedback = rule.with_feedback();
                }
            } else {
                dest = p.plan.resolve(pc.idx, target)?;
                feedback = rule.with_feedback();
            }
            if !retried {
                if !state.retry_counters.is_empty() {
                    let suffix = pn.counter_suffix.as_str();
                    state.retry_counters.retain(|k, _| !k.ends_with(suffix));
                }
                for v in routing_vars {
                    remove_var(ctx, v);
                }
                if feedback {
                    if let Some(r) = &verdict_reason {
                        ctx.insert("recommendation".into(), Value::String(r.clone()));
                    }
                } else {
                    remove_var(ctx, "recommendation");
                }
            }
            state.review_verdict = None;
            let to = p.plan.id(dest);
            if retried {
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
                    bounded,
                    feedback: feedback && state.context.contains_key("recommendation"),
                });
            }
            state.current_node.clear();
            state.current_node.push_str(to);
            pc.next = Some(dest);
            return Ok(ProcessorOutcome::Continue);
        }
        state.review_verdict = None;
        if tried.is_empty() {
            tried.push("the node has no transition rules".to_string());
        }
        Err(RuntimeError::NoValidTransition {
            node: id.to_string(),
            tried,
        })
    }
}
