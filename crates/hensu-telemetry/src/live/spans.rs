//! The trace thread's side: a run's records ([`Rec`]) turned into the spans the rebuild makes
//! from the log (same keys through [`semconv`], so the same ids), each finished span handed to
//! the run's sink.

use std::collections::BTreeMap;

use hensu_runtime::{NodeStatus, Usage};

use super::{AgentRec, Finish, Rec, RunTrace};
use crate::ids::{Scope, SpanKey};
use crate::semconv::{self, RunInfo};
use crate::span::{SpanEvent, SpanRecord, Status};

/// A visit or compensation in flight.
struct Open {
    span: SpanRecord,
    /// The node id the events of its agent calls and actions name.
    node_id: String,
    step: u64,
    scope: Scope,
    usage: Option<Usage>,
    actions: u32,
}

/// A run's trace in flight.
#[derive(Default)]
pub(crate) struct Live {
    run: Option<RunInfo>,
    parent: Option<([u8; 16], [u8; 8])>,
    started_ms: u64,
    open: Vec<Open>,
    attempts: BTreeMap<(u64, Option<String>), u32>,
}

/// Handles one record of `run`, taken at `t` (unix nanoseconds).
pub(crate) fn handle(run: &RunTrace, t: u64, rec: Rec) {
    let Ok(mut live) = run.live.lock() else {
        return;
    };
    let live = &mut *live;
    match rec {
        Rec::Parent(parent) => {
            live.parent = parent;
            if let Some(r) = live.run.as_mut() {
                r.parent = parent;
            }
        }
        Rec::Started { run_id } => {
            live.run = Some(run_info(run, live, &run_id));
            live.started_ms = t / 1_000_000;
        }
        Rec::Resuming {
            run_id,
            started_ms,
            awaiting,
        } => {
            live.run = Some(run_info(run, live, &run_id));
            live.started_ms = started_ms;
            if let Some((node, step)) = awaiting {
                open_visit(run, live, &run_id, run.name(&node), step, t);
            }
        }
        rec => on(run, live, t, rec),
    }
}

fn run_info(run: &RunTrace, live: &Live, run_id: &str) -> RunInfo {
    RunInfo {
        run_id: run_id.to_string(),
        workflow_id: run.workflow.id.clone(),
        workflow_version: run.workflow.version.clone(),
        tenant: run.tenant.clone(),
        parent: live.parent,
    }
}

fn open_visit(run: &RunTrace, live: &mut Live, run_id: &str, node_id: &str, step: u64, t: u64) {
    let mut span = semconv::node_span(run_id, &run.workflow, step, node_id);
    span.start_unix_nano = t;
    live.open.push(Open {
        span,
        node_id: node_id.to_string(),
        step,
        scope: Scope::Visit,
        usage: None,
        actions: 0,
    });
}

fn emit(run: &RunTrace, live: &Live, span: SpanRecord) {
    let trace_id = live
        .run
        .as_ref()
        .map_or([0; 16], semconv::RunInfo::trace_id);
    run.sink.export(trace_id, span);
}

fn content(run: &RunTrace, span: &mut SpanRecord, key: &str, role: &str, text: Option<&str>) {
    let Some(text) = text.filter(|_| run.capture_content) else {
        return;
    };
    let text = run.redactor.redact(text);
    let messages =
        serde_json::json!([{"role": role, "parts": [{"type": "text", "content": text}]}]);
    span.attr(key, messages.to_string());
}

fn on(run: &RunTrace, live: &mut Live, t: u64, rec: Rec) {
    let Some(run_id) = live.run.as_ref().map(|r| r.run_id.clone()) else {
        return;
    };
    match rec {
        Rec::NodeStarted { node, step } => {
            open_visit(run, live, &run_id, run.name(&node), step, t);
        }
        Rec::AgentCall(call) => agent_call(run, live, &run_id, t, &call),
        Rec::Action {
            node,
            action,
            success,
        } => {
            let Some(owner) = owner(&mut live.open, run.name(&node)) else {
                return;
            };
            let index = owner.actions;
            owner.actions += 1;
            let mut span = semconv::action_span(
                &run_id,
                owner.step,
                index,
                owner.scope,
                &owner.span.key,
                &action,
            );
            span.start_unix_nano = t;
            span.end_unix_nano = t;
            span.status = if success {
                Status::Ok
            } else {
                Status::Error("action failed".into())
            };
            emit(run, live, span);
        }
        Rec::Tool {
            node,
            visit,
            index,
            tool,
            ok,
            duration_ms,
        } => {
            let Some(step) = semconv::tool_visit_step(&visit) else {
                return;
            };
            let node_id = run.name(&node);
            let mut span = semconv::tool_span(&run_id, step, node_id, &visit, index, &tool, ok);
            span.end_unix_nano = t;
            span.start_unix_nano = t.saturating_sub(duration_ms.saturating_mul(1_000_000));
            emit(run, live, span);
        }
        Rec::Rubric {
            node,
            score,
            passed,
        } => {
            if let Some(o) = owner(&mut live.open, run.name(&node)) {
                o.span
                    .attr("hensu.rubric.score", score)
                    .attr("hensu.rubric.passed", passed);
            }
        }
        Rec::NodeCompleted {
            node,
            status,
            error,
        } => {
            let node_id = run.name(&node);
            let Some(i) = live
                .open
                .iter()
                .rposition(|o| o.scope == Scope::Visit && o.node_id == node_id)
            else {
                return;
            };
            let mut o = live.open.remove(i);
            o.span.end_unix_nano = t;
            let error = error.map(|e| run.redactor.redact(&e).into_owned());
            semconv::node_status(&mut o.span, status, error.as_deref());
            if let Some(u) = &o.usage {
                semconv::usage(&mut o.span, u);
            }
            emit(run, live, o.span);
        }
        Rec::CompensationStarted {
            node,
            compensation,
            visit_step,
        } => {
            let mut span =
                semconv::compensation_span(&run_id, visit_step, &compensation, run.name(&node));
            span.start_unix_nano = t;
            live.open.push(Open {
                span,
                node_id: compensation.into(),
                step: visit_step,
                scope: Scope::Compensation,
                usage: None,
                actions: 0,
            });
        }
        Rec::CompensationEnded {
            compensation,
            error,
        } => close_compensation(run, live, t, &compensation, error.as_deref()),
        Rec::Retry {
            attempt,
            delay_ms,
            error_kind,
            status,
        } => {
            // The call in flight is the latest visit's (its span is built when it ends).
            if let Some(o) = live.open.last_mut() {
                let mut attributes = crate::span::Attrs::new();
                attributes.insert("hensu.retry.attempt".into(), u64::from(attempt).into());
                attributes.insert("hensu.retry.delay_ms".into(), delay_ms.into());
                attributes.insert("error.type".into(), String::from(error_kind).into());
                if let Some(code) = status {
                    attributes.insert("http.response.status_code".into(), u64::from(code).into());
                }
                o.span.events.push(SpanEvent {
                    name: "hensu.provider_retry".into(),
                    time_unix_nano: t,
                    attributes,
                });
            }
        }
        Rec::Backtrack { from, to, kind } => {
            let from = run.name(&from);
            if let Some(o) = live.open.iter_mut().rev().find(|o| o.node_id == from) {
                let b = hensu_runtime::Backtrack {
                    from: from.to_string(),
                    to: run.name(&to).to_string(),
                    kind,
                    reason: String::new(),
                };
                o.span
                    .events
                    .push(crate::rebuild::backtrack_event(&b, t / 1_000_000));
            }
        }
        Rec::Finished(finish) => self::finish(run, live, t, finish),
        Rec::Parent(_) | Rec::Started { .. } | Rec::Resuming { .. } => {}
    }
}

/// An agent call: a `chat` span under its visit or compensation.
fn agent_call(run: &RunTrace, live: &mut Live, run_id: &str, t: u64, call: &AgentRec) {
    let node_id = run.name(&call.node);
    let Some(owner) = owner(&mut live.open, node_id) else {
        return;
    };
    let key = match owner.scope {
        Scope::Compensation => semconv::compensation_agent_key(owner.step, node_id),
        Scope::Visit => {
            let branch = call.branch.as_deref().map(str::to_string);
            let n = live
                .attempts
                .entry((owner.step, branch.clone()))
                .or_insert(0);
            let attempt = *n;
            *n += 1;
            SpanKey::Agent {
                step: owner.step,
                branch,
                attempt,
            }
        }
    };
    let mut span = semconv::agent_span(
        run_id,
        key,
        &owner.span.key,
        run.name(&call.agent),
        run.name(&call.model),
    );
    span.end_unix_nano = t;
    span.start_unix_nano = t.saturating_sub(call.duration_us.saturating_mul(1_000));
    span.status = match &call.error {
        Some(e) => Status::Error(run.redactor.redact(e).into_owned()),
        None => Status::Ok,
    };
    if let Some(u) = &call.usage {
        semconv::usage(&mut span, u);
        let total = owner.usage.get_or_insert(Usage {
            input_tokens: 0,
            output_tokens: 0,
        });
        total.input_tokens += u.input_tokens;
        total.output_tokens += u.output_tokens;
    }
    content(
        run,
        &mut span,
        "gen_ai.input.messages",
        "user",
        call.prompt.as_deref(),
    );
    content(
        run,
        &mut span,
        "gen_ai.output.messages",
        "assistant",
        call.response.as_deref(),
    );
    emit(run, live, span);
}

fn close_compensation(run: &RunTrace, live: &mut Live, t: u64, id: &str, error: Option<&str>) {
    let Some(i) = live
        .open
        .iter()
        .rposition(|o| o.scope == Scope::Compensation && o.node_id == id)
    else {
        return;
    };
    let mut o = live.open.remove(i);
    o.span.end_unix_nano = t;
    let status = if error.is_some() {
        NodeStatus::Failure
    } else {
        NodeStatus::Success
    };
    let error = error.map(|e| run.redactor.redact(e).into_owned());
    semconv::node_status(&mut o.span, status, error.as_deref());
    emit(run, live, o.span);
}

/// The root span, once the run has ended (a paused run's root comes with its end, from the
/// process that ends it).
fn finish(run: &RunTrace, live: &mut Live, t: u64, finish: Finish) {
    live.open.clear();
    let (status, exit, span_status) = match finish {
        Finish::Paused => return,
        Finish::Completed(exit_status) => {
            let exit = exit_status.as_str();
            let s = if exit == "SUCCESS" {
                Status::Ok
            } else {
                Status::Error(format!("ended at a {exit} end node"))
            };
            ("completed", Some(exit), s)
        }
        Finish::Rejected => ("rejected", None, Status::Error("rejected".into())),
        Finish::Failed => ("failed", None, Status::Error("failed".into())),
    };
    let Some(info) = &live.run else {
        return;
    };
    let mut root = semconv::run_span(info);
    root.start_unix_nano = live.started_ms.saturating_mul(1_000_000);
    root.end_unix_nano = t.max(root.start_unix_nano);
    root.attr("hensu.run.status", status);
    if let Some(e) = exit {
        root.attr("hensu.exit_status", e);
    }
    root.status = span_status;
    emit(run, live, root);
}

/// The visit or compensation in flight whose events name `node_id` (the latest).
fn owner<'a>(open: &'a mut [Open], node_id: &str) -> Option<&'a mut Open> {
    open.iter_mut().rev().find(|o| o.node_id == node_id)
}
