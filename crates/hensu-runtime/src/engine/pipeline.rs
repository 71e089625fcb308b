//! The post-execution pipeline: output extraction, rubric, review, node completion and
//! history (the transition processor has its own module, `transition`).

use std::time::Instant;

use hensu_ir::{Node, ReviewMode, Rubric, RuleKind, StandardNode};
use serde_json::Value;

use super::Exec;
use super::Prepared;
use crate::error::RuntimeError;
use crate::events::Event;
use crate::extract::extract_object;
use crate::plan::{RuleEval, evaluate};
use crate::review::{ReviewDecision, ReviewOutcome, ReviewRequest};
use crate::run_types::{PostProcessor, RunOutcome};
use crate::state::{
    Backtrack, BacktrackKind, ExecutionPhase, HistoryStep, InheritedHistory, NodeResult,
    NodeStatus, ReviewVerdict, RubricEvaluation, RunState,
};
use crate::validate::{validate_output, validate_rendered};
use crate::value::{as_number, remove_var, render};

/// What a processor decided.
#[derive(Debug)]
pub enum ProcessorOutcome {
    Continue,
    Terminal(RunOutcome),
    Suspend { correlation_id: String },
}

/// Per-node data flowing through the post pipeline.
pub(super) struct PostCtx<'a> {
    pub(super) idx: usize,
    pub(super) result: NodeResult,
    pub(super) started: Instant,
    /// Set by the transition processor, or by a rubric/review backtrack.
    pub(super) next: Option<usize>,
    /// A review decision delivered by a resume call.
    pub(super) resume_decision: Option<ReviewDecision>,
    /// When this `drive` call started (history timestamps).
    pub(super) run_started: Instant,
    /// Set by the node-complete processor (one clock read for the event and the history).
    pub(super) completed: Option<Instant>,
    /// How long a reviewer took to answer (a human in the terminal): the run's time limit
    /// does not count it.
    pub(super) human_wait: std::time::Duration,
    /// The history a fork branch continues (empty outside fork branches).
    pub(super) inherited: InheritedHistory<'a>,
    /// Set by the transition processor when the node failed into a retry with `backoff`:
    /// the wait before it runs again.
    pub(super) backoff: Option<std::time::Duration>,
    /// The deadline of the review this resumed pipeline waited for (unix milliseconds).
    pub(super) review_deadline_at: Option<u64>,
    /// The review this resumed pipeline waited for (correlation id, requested at): resumed
    /// without a decision (another review of the run was answered), it waits on with the
    /// same correlation id, request time and deadline (docs/server.md, *Pending reviews*).
    pub(super) still_waiting: Option<(String, u64)>,
}

/// What the loop does after one node.
pub(super) enum Step {
    Next(usize),
    Stop(RunOutcome),
}

impl Exec<'_> {
    pub(super) async fn post_pipeline(
        &self,
        p: &Prepared,
        state: &mut RunState,
        pc: &mut PostCtx<'_>,
        from: usize,
    ) -> Result<Step, RuntimeError> {
        for (i, processor) in PostProcessor::PIPELINE.iter().enumerate().skip(from) {
            let outcome = match processor {
                PostProcessor::OutputExtraction => self.output_extraction(p, state, pc),
                PostProcessor::Rubric => self.rubric(p, state, pc),
                PostProcessor::Review => {
                    let reviewed = matches!(
                        p.plan.node(pc.idx),
                        Some(Node::Standard(StandardNode {
                            review_config: Some(_),
                            ..
                        }))
                    );
                    if reviewed {
                        Box::pin(self.review(p, state, pc)).await?
                    } else {
                        ProcessorOutcome::Continue
                    }
                }
                PostProcessor::NodeComplete => {
                    let now = Instant::now();
                    pc.completed = Some(now);
                    if self.step_events {
                        let (output, error) =
                            (pc.result.output.as_ref(), pc.result.error.as_deref());
                        self.listener.on_event(&Event::NodeCompleted {
                            node_id: p.plan.id(pc.idx),
                            status: pc.result.status,
                            output,
                            error,
                            duration_us: now.saturating_duration_since(pc.started).as_micros()
                                as u64,
                        });
                    }
                    ProcessorOutcome::Continue
                }
                PostProcessor::History => {
                    // Only the transition processor runs after this one and it reads the
                    // status and metadata, never the output: the output moves into history.
                    state.history.push(HistoryStep {
                        step: state.steps,
                        node_id: p.plan.id(pc.idx).to_string(),
                        status: pc.result.status,
                        output: pc.result.output.take(),
                        error: pc.result.error.clone(),
                        at_ms: pc
                            .completed
                            .unwrap_or_else(Instant::now)
                            .saturating_duration_since(pc.run_started)
                            .as_millis() as u64,
                        rubric: state.rubric_evaluation.clone(),
                        usage: token_usage(&pc.result.metadata),
                        compensates: None,
                    });
                    ProcessorOutcome::Continue
                }
                PostProcessor::Transition => self.transition(p, state, pc)?,
            };
            match outcome {
                ProcessorOutcome::Continue => {}
                ProcessorOutcome::Terminal(o) => return Ok(Step::Stop(o)),
                ProcessorOutcome::Suspend { correlation_id } => {
                    let (requested_at_ms, deadline_at_ms) = match &pc.still_waiting {
                        Some((c, at)) if *c == correlation_id => (*at, pc.review_deadline_at),
                        _ => {
                            // A review's deadline counts on the run's clock (virtual in tests).
                            let at = self.waiter().now_ms();
                            let deadline = p.workflow().timing.of(p.plan.id(pc.idx));
                            (
                                at,
                                deadline.review_deadline_ms.map(|d| at.saturating_add(d)),
                            )
                        }
                    };
                    state.phase = ExecutionPhase::Awaiting {
                        node_id: p.plan.id(pc.idx).to_string(),
                        processor_id: PostProcessor::PIPELINE[i].id().to_string(),
                        cached_result: Box::new(pc.result.clone()),
                        correlation_id,
                        requested_at_ms,
                        deadline_at_ms,
                        tool_call: None,
                    };
                    return Ok(Step::Stop(RunOutcome::Paused));
                }
            }
        }
        match pc.next {
            Some(n) => Ok(Step::Next(n)),
            None => Err(RuntimeError::NoValidTransition {
                node: p.plan.id(pc.idx).to_string(),
                tried: Vec::new(),
            }),
        }
    }

    /// Output extraction (docs/language.md, *Output extraction*): validation, then storage by node kind.
    pub(super) fn output_extraction(
        &self,
        p: &Prepared,
        state: &mut RunState,
        pc: &mut PostCtx<'_>,
    ) -> ProcessorOutcome {
        let Some(output) = &pc.result.output else {
            return ProcessorOutcome::Continue;
        };
        let pn = &p.plan.nodes[pc.idx];
        let id = p.plan.id(pc.idx);
        let node = p.plan.node(pc.idx);
        // A standard node and an action node with a result store the rendered text; other
        // outputs (a fork's merged map) are validated without rendering them.
        let writes: Option<&[String]> = match node {
            Some(Node::Standard(n)) => Some(&n.writes),
            Some(Node::Action(a)) if self.action_has_result(a) => Some(&a.writes),
            _ => None,
        };
        let text = writes.map(|_| render(output));
        let valid = match &text {
            Some(text) => validate_output(text),
            None => validate_rendered(output),
        };
        if let Err(violation) = valid {
            return ProcessorOutcome::Terminal(RunOutcome::Failed(
                RuntimeError::OutputValidation {
                    node: id.to_string(),
                    violation,
                },
            ));
        }
        let ctx = &mut state.context;
        let (Some(writes), Some(text)) = (writes, text) else {
            if let Some(Node::Generic(_)) = node {
                ctx.insert(id.to_string(), output.clone());
            }
            return ProcessorOutcome::Continue;
        };
        // An action's result is its output under the node id, `writes` or not.
        if let Some(Node::Action(_)) = node
            && !pn.extract_keys.is_empty()
        {
            ctx.insert(id.to_string(), Value::String(text.to_string()));
        }
        if pn.extract_keys.is_empty() {
            ctx.insert(id.to_string(), Value::String(text.into_owned()));
            return ProcessorOutcome::Continue;
        }
        for k in &pn.extract_keys {
            remove_var(ctx, k);
        }
        if writes.len() == 1 && !pn.has_engine_vars {
            let key = &writes[0];
            let schema = p.workflow().state_schema.as_ref();
            let value = extract_object(&text)
                .and_then(|mut m| m.shift_remove(key.as_str()))
                .or_else(|| whole_typed(schema, key, &text))
                .unwrap_or_else(|| Value::String(text.into_owned()));
            ctx.insert(key.clone(), value);
        } else if let Some(mut map) = extract_object(&text) {
            for k in &pn.extract_keys {
                if let Some(v) = map.shift_remove(k.as_str()) {
                    ctx.insert(k.clone(), v);
                }
            }
        }
        if let Some(schema) = &p.workflow().state_schema
            && let Some(message) = mistyped_write(schema, writes, ctx)
        {
            pc.result.status = NodeStatus::Failure;
            pc.result.error = Some(message);
        }
        ProcessorOutcome::Continue
    }

    /// Whether an action node runs an action whose output is a result (a command, a handler
    /// other than `log`): only then is its output stored.
    pub(super) fn action_has_result(&self, node: &hensu_ir::ActionNode) -> bool {
        node.actions.iter().any(|a| self.gives_result(a))
    }

    /// Rubric evaluation and auto-backtrack (docs/language.md, *Rubric evaluation*).
    pub(super) fn rubric(
        &self,
        p: &Prepared,
        state: &mut RunState,
        pc: &mut PostCtx<'_>,
    ) -> ProcessorOutcome {
        let Some(rubric) = p.plan.node(pc.idx).and_then(Node::rubric) else {
            return ProcessorOutcome::Continue;
        };
        let id = p.plan.id(pc.idx);
        let score = self.given_score(state, pc, id);
        let final_score = weighted_score(rubric, score);
        let passed = final_score >= rubric.pass_threshold;
        state.rubric_evaluation = Some(RubricEvaluation {
            rubric_id: rubric.id.clone(),
            score: final_score,
            passed,
        });
        self.listener.on_event(&Event::RubricEvaluated {
            node_id: id,
            score: final_score,
            passed,
        });
        // An explicit score rule that handles the score wins over auto-backtrack.
        if passed || score_rule_matches(p, state, pc) {
            return ProcessorOutcome::Continue;
        }
        let failed: Vec<Value> = rubric
            .criteria
            .iter()
            .filter(|c| score < c.min_score)
            .map(|c| Value::String(c.name.clone()))
            .collect();
        // Every automatic backtrack counts against one budget per visit: the node's own bounded
        // rule's when it has one, else the run's limit. Spent: the transitions decide.
        let limit = p
            .plan
            .rules(pc.idx)
            .iter()
            .find_map(|r| match r {
                hensu_ir::CompiledRule::Bounded { budget, .. } => Some((*budget).max(0) as u64),
                _ => None,
            })
            .unwrap_or(self.options.rubric_backtrack_limit);
        let key = format!("rubric_backtrack:{id}");
        let count = state.retry_counters.get(&key).copied().unwrap_or(0);
        if count.max(0) as u64 >= limit {
            self.listener
                .on_event(&Event::RubricBacktracksSpent { node_id: id, limit });
            return ProcessorOutcome::Continue;
        }
        let shown = hensu_ir::java_double_to_string(final_score);
        let target = backtrack_target(p, rubric, state, pc, final_score, &failed, &shown);
        if let Some(t) = target {
            state.retry_counters.insert(key, count + 1);
            self.auto_backtrack(p, state, pc, t, &shown);
        }
        ProcessorOutcome::Continue
    }

    /// The node's score for its rubric: the `score` it wrote on SUCCESS (0 when missing, which
    /// is reported; 0 on failure), a 0–1 score read as a percentage.
    fn given_score(&self, state: &RunState, pc: &PostCtx<'_>, id: &str) -> f64 {
        let given = state.context.get("score").and_then(as_number);
        if pc.result.status == NodeStatus::Success && given.is_none() {
            self.listener
                .on_event(&Event::RubricScoreMissing { node_id: id });
        }
        let mut score = if pc.result.status == NodeStatus::Success {
            given.unwrap_or(0.0)
        } else {
            0.0
        };
        if score > 0.0 && score <= 1.0 {
            score *= 100.0;
        }
        score
    }

    /// The automatic backtrack to node `t`: reported, kept in the run's back-tracks, and taken
    /// (the transition processor only reports it).
    fn auto_backtrack(
        &self,
        p: &Prepared,
        state: &mut RunState,
        pc: &mut PostCtx<'_>,
        t: usize,
        shown: &str,
    ) {
        let id = p.plan.id(pc.idx);
        let to = p.plan.id(t).to_string();
        let reason = format!("Rubric score: {shown}");
        self.listener.on_event(&Event::Backtrack {
            from: id,
            to: &to,
            kind: BacktrackKind::Automatic,
            reason: &reason,
        });
        state.backtracks.push(Backtrack {
            from: id.to_string(),
            to: to.clone(),
            kind: BacktrackKind::Automatic,
            reason,
        });
        state.current_node = to;
        state.node_redirected = true;
        pc.next = Some(t);
    }

    /// Human review (docs/language.md, *Reviews*).
    pub(super) async fn review(
        &self,
        p: &Prepared,
        state: &mut RunState,
        pc: &mut PostCtx<'_>,
    ) -> Result<ProcessorOutcome, RuntimeError> {
        let Some(Node::Standard(node)) = p.plan.node(pc.idx) else {
            return Ok(ProcessorOutcome::Continue);
        };
        let Some(config) = &node.review_config else {
            return Ok(ProcessorOutcome::Continue);
        };
        if state.node_redirected
            || config.mode == ReviewMode::Disabled
            || (config.mode == ReviewMode::Optional && pc.result.status == NodeStatus::Success)
        {
            return Ok(ProcessorOutcome::Continue);
        }
        let mut timed_out = false;
        let overdue = pc
            .review_deadline_at
            .is_some_and(|at| self.waiter().now_ms() >= at);
        if pc.resume_decision.is_none()
            && !overdue
            && let Some((correlation_id, _)) = &pc.still_waiting
        {
            let correlation_id = correlation_id.clone();
            return Ok(ProcessorOutcome::Suspend { correlation_id });
        }
        let decision = match pc.resume_decision.take() {
            Some(d) => d,
            // Not decided by its deadline: rejected (docs/language.md, *Review*).
            None if overdue => {
                let deadline = p.workflow().timing.of(&node.id).review_deadline_ms;
                timed_out = true;
                ReviewDecision::Reject {
                    reason: format!(
                        "no review decision within {}",
                        super::describe_ms(deadline.unwrap_or(0))
                    ),
                }
            }
            None => {
                // Tokio's clock: the one the run's time limit sleeps on.
                let asked = tokio::time::Instant::now();
                // A fork branch's reviewer sees the whole history, inherited steps included.
                let history: std::borrow::Cow<'_, [HistoryStep]> = if pc.inherited.is_empty() {
                    std::borrow::Cow::Borrowed(&state.history)
                } else {
                    pc.inherited.with(&state.history).cloned().collect()
                };
                let branch = crate::review::current_branch();
                let outcome = self
                    .review
                    .request_review(ReviewRequest {
                        node_id: &node.id,
                        config,
                        result: &pc.result,
                        context: &state.context,
                        history: &history,
                        branch: branch.as_deref(),
                    })
                    .await;
                pc.human_wait += asked.elapsed();
                match outcome {
                    ReviewOutcome::Decided(d) => d,
                    ReviewOutcome::Pending { correlation_id } => {
                        return Ok(ProcessorOutcome::Suspend { correlation_id });
                    }
                }
            }
        };
        let pn = &p.plan.nodes[pc.idx];
        let id = p.plan.id(pc.idx);
        match decision {
            ReviewDecision::Approve { edits } => {
                if let Some(edits) = edits {
                    state.context.extend(edits);
                }
                state.review_verdict = Some(ReviewVerdict {
                    approved: true,
                    reason: None,
                    timed_out: false,
                });
            }
            // Not decided in time, and the review's `onTimeout` arm routes it.
            ReviewDecision::Reject { reason } if timed_out && pn.has_review_timeout_arm => {
                state.review_verdict = Some(ReviewVerdict {
                    approved: false,
                    reason: Some(reason),
                    timed_out: true,
                });
            }
            ReviewDecision::Reject { reason } => {
                if !pn.has_rejection_arm {
                    return Ok(ProcessorOutcome::Terminal(RunOutcome::Rejected { reason }));
                }
                state.review_verdict = Some(ReviewVerdict {
                    approved: false,
                    reason: Some(reason),
                    timed_out: false,
                });
            }
            ReviewDecision::Backtrack {
                target,
                edits,
                reason,
            } => {
                let t = p
                    .plan
                    .index_of(&target)
                    .ok_or_else(|| RuntimeError::NodeNotFound {
                        node: target.clone(),
                    })?;
                if let Some(edits) = edits {
                    state.context.extend(edits);
                }
                self.listener.on_event(&Event::Backtrack {
                    from: id,
                    to: &target,
                    kind: BacktrackKind::Manual,
                    reason: &reason,
                });
                state.backtracks.push(Backtrack {
                    from: id.to_string(),
                    to: target.clone(),
                    kind: BacktrackKind::Manual,
                    reason: reason.clone(),
                });
                state.review_verdict = Some(ReviewVerdict {
                    approved: false,
                    reason: Some(reason),
                    timed_out: false,
                });
                state.current_node = target;
                state.node_redirected = true;
                pc.next = Some(t);
            }
        }
        Ok(ProcessorOutcome::Continue)
    }
}

/// The rubric's weighted score when every criterion gets `score` (a node gives one score).
fn weighted_score(rubric: &Rubric, score: f64) -> f64 {
    let total_weight: f64 = rubric.criteria.iter().map(|c| c.weight).sum();
    if total_weight > 0.0 {
        rubric
            .criteria
            .iter()
            .map(|c| score * c.weight)
            .sum::<f64>()
            / total_weight
    } else {
        0.0
    }
}

/// Whether one of the node's score rules matches the result (it then routes the failed
/// rubric, not the auto-backtrack).
fn score_rule_matches(p: &Prepared, state: &RunState, pc: &PostCtx<'_>) -> bool {
    let pn = &p.plan.nodes[pc.idx];
    p.plan
        .rules(pc.idx)
        .iter()
        .zip(&pn.rule_extras)
        .any(|(r, extra)| {
            r.trigger() == RuleKind::Score
                && matches!(
                    evaluate(
                        r,
                        extra,
                        &pc.result,
                        &state.context,
                        state.review_verdict.as_ref()
                    ),
                    RuleEval::Match { .. }
                )
        })
}

/// Where a failed rubric goes back to, with the context it goes back with: below 30 the first
/// node of the flow with a rubric (else the start), below 60 the latest node with another
/// rubric, below 80 the node itself; `None` from 80.
fn backtrack_target(
    p: &Prepared,
    rubric: &Rubric,
    state: &mut RunState,
    pc: &PostCtx<'_>,
    final_score: f64,
    failed: &[Value],
    shown: &str,
) -> Option<usize> {
    let ctx = &mut state.context;
    if final_score < 30.0 {
        let t = pc
            .inherited
            .with(&state.history)
            .find(|h| {
                p.plan
                    .index_of(&h.node_id)
                    .and_then(|i| p.plan.node(i))
                    .is_some_and(|n| n.rubric().is_some())
            })
            .and_then(|h| p.plan.index_of(&h.node_id))
            .unwrap_or(p.plan.start);
        ctx.insert(
            "backtrack_reason".into(),
            Value::String(format!("Critical rubric failure: {shown}")),
        );
        ctx.insert("failed_criteria".into(), Value::Array(failed.to_vec()));
        if !failed.is_empty() {
            let mut rec = String::from("Rubric improvement areas:");
            for f in failed {
                rec.push_str("\n- ");
                rec.push_str(&render(f));
            }
            ctx.insert("recommendation".into(), Value::String(rec));
        }
        return Some(t);
    }
    let previous = if final_score < 60.0 {
        pc.inherited.with(&state.history).rev().find_map(|h| {
            let i = p.plan.index_of(&h.node_id)?;
            let r = p.plan.node(i)?.rubric()?;
            (r.id != rubric.id).then_some(i)
        })
    } else {
        None
    };
    if let Some(t) = previous {
        ctx.insert(
            "backtrack_reason".into(),
            Value::String(format!("Moderate rubric failure: {shown}")),
        );
        ctx.insert(
            "improvement_suggestions".into(),
            Value::Array(failed.to_vec()),
        );
        Some(t)
    } else if final_score < 80.0 {
        ctx.insert("improvement_hints".into(), Value::Array(failed.to_vec()));
        Some(pc.idx)
    } else {
        None
    }
}

/// Wall-clock milliseconds since the epoch (history and pause timestamps).
pub(super) fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// The token usage an agent call left in a node result's metadata (`input_tokens`,
/// `output_tokens`), when the provider reported it.
pub(super) fn token_usage(
    metadata: &indexmap::IndexMap<String, serde_json::Value>,
) -> Option<crate::agent::Usage> {
    if metadata.is_empty() {
        return None;
    }
    let count = |k: &str| metadata.get(k).and_then(serde_json::Value::as_u64);
    match (count("input_tokens"), count("output_tokens")) {
        (None, None) => None,
        (i, o) => Some(crate::agent::Usage {
            input_tokens: i.unwrap_or(0),
            output_tokens: o.unwrap_or(0),
        }),
    }
}

/// The whole output of a single `writes` as a JSON value of the variable's declared type (a
/// command printing `42` or `["a", "b"]`), when it parses as one; `None` for STRING variables
/// and for text that is no such value.
fn whole_typed(schema: Option<&hensu_ir::StateSchema>, key: &str, text: &str) -> Option<Value> {
    let var = schema?.variable(key)?;
    if var.var_type == hensu_ir::VarType::String {
        return None;
    }
    let value: Value = serde_json::from_str(text.trim()).ok()?;
    crate::inputs::written_value_fits(var.var_type, &value).then_some(value)
}

/// A declared variable keeps its type: a NUMBER written as "abc" fails the node, naming the
/// variable (docs/language.md, *Runtime semantics*). The mistyped value is removed; the message
/// is the node's error.
fn mistyped_write(
    schema: &hensu_ir::StateSchema,
    writes: &[String],
    ctx: &mut crate::value::Context,
) -> Option<String> {
    for w in writes {
        let (Some(var), Some(v)) = (schema.variable(w), ctx.get(w.as_str())) else {
            continue;
        };
        if v.is_null() || crate::inputs::written_value_fits(var.var_type, v) {
            continue;
        }
        let message = format!(
            "variable `{w}` ({}) was written as {}",
            var.var_type.as_str(),
            crate::inputs::describe(v)
        );
        ctx.shift_remove(w.as_str());
        return Some(message);
    }
    None
}
