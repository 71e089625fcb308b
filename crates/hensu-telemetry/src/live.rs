//! The live side: an [`ExecutionListener`] that turns a run's events into the spans the
//! rebuild makes from the log (same keys, so the same ids), handing each finished span to a
//! [`SpanSink`] (the OTLP [`Exporter`](crate::Exporter)). It never waits: a span is built
//! and queued; the SDK's batch thread sends it.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use hensu_ir::Workflow;
use hensu_providers::Redactor;
use hensu_runtime::{Event, ExecutionListener, ExecutionPhase, FinishKind, RunState, Usage};

use crate::ids::{self, Scope, SpanKey};
use crate::semconv::{self, RunInfo};
use crate::span::{SpanRecord, Status};

/// Where finished spans go.
pub trait SpanSink: Send + Sync {
    fn export(&self, trace_id: [u8; 16], span: SpanRecord);
}

impl SpanSink for crate::Exporter {
    fn export(&self, trace_id: [u8; 16], span: SpanRecord) {
        self.emit(trace_id, &span);
    }
}

/// Keeps the spans (tests, benchmarks).
#[derive(Default)]
pub struct CollectingSink {
    spans: Mutex<Vec<SpanRecord>>,
}

impl CollectingSink {
    pub fn spans(&self) -> Vec<SpanRecord> {
        self.spans.lock().map(|s| s.clone()).unwrap_or_default()
    }
}

impl SpanSink for CollectingSink {
    fn export(&self, _trace_id: [u8; 16], span: SpanRecord) {
        if let Ok(mut s) = self.spans.lock() {
            s.push(span);
        }
    }
}

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

#[derive(Default)]
struct Live {
    run: Option<RunInfo>,
    started_ms: u64,
    open: Vec<Open>,
    attempts: BTreeMap<(u64, Option<String>), u32>,
}

/// The listener of one run's live trace.
pub struct TraceListener {
    workflow: Arc<Workflow>,
    version: String,
    tenant: Option<String>,
    sink: Arc<dyn SpanSink>,
    redactor: Arc<Redactor>,
    capture_content: bool,
    parent: Mutex<Option<([u8; 16], [u8; 8])>>,
    live: Mutex<Live>,
}

fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

impl TraceListener {
    /// A listener for a run of `workflow` (its run id comes with `run_started`, or from
    /// [`TraceListener::resuming`]). Prompts and responses are exported only with
    /// `capture_content`, redacted by `redactor`.
    pub fn new(
        workflow: Arc<Workflow>,
        tenant: Option<String>,
        sink: Arc<dyn SpanSink>,
        redactor: Arc<Redactor>,
        capture_content: bool,
    ) -> TraceListener {
        TraceListener {
            version: workflow.version.clone(),
            workflow,
            tenant,
            sink,
            redactor,
            capture_content,
            parent: Mutex::new(None),
            live: Mutex::new(Live::default()),
        }
    }

    /// The run continues a stored one: its id, its start (unix ms, for the root span) and,
    /// when it waits in a review, the visit the resume completes.
    pub fn resuming(&self, run_id: &str, started_ms: u64, state: &RunState) {
        let Ok(mut live) = self.live.lock() else {
            return;
        };
        live.run = Some(self.run_info(run_id));
        live.started_ms = started_ms;
        if let ExecutionPhase::Awaiting { node_id, .. } = &state.phase {
            let mut span = semconv::node_span(run_id, &self.workflow, state.steps, node_id);
            span.start_unix_nano = now_ns();
            live.open.push(Open {
                span,
                node_id: node_id.clone(),
                step: state.steps,
                scope: Scope::Visit,
                usage: None,
                actions: 0,
            });
        }
    }

    fn run_info(&self, run_id: &str) -> RunInfo {
        RunInfo {
            run_id: run_id.to_string(),
            workflow_id: self.workflow.id.clone(),
            workflow_version: self.version.clone(),
            tenant: self.tenant.clone(),
            parent: self.parent.lock().ok().and_then(|p| *p),
        }
    }

    /// The run was started under a caller's trace (a valid W3C `traceparent`).
    pub fn set_parent(&self, traceparent: Option<&str>) {
        let parent = traceparent.and_then(ids::parse_traceparent);
        if let Ok(mut p) = self.parent.lock() {
            *p = parent;
        }
        if let Ok(mut live) = self.live.lock()
            && let Some(run) = live.run.as_mut()
        {
            run.parent = parent;
        }
    }

    fn emit(&self, live: &Live, span: SpanRecord) {
        let trace_id = live
            .run
            .as_ref()
            .map_or([0; 16], semconv::RunInfo::trace_id);
        self.sink.export(trace_id, span);
    }

    fn content(&self, span: &mut SpanRecord, key: &str, role: &str, text: &str) {
        if !self.capture_content {
            return;
        }
        let text = self.redactor.redact(text);
        let messages =
            serde_json::json!([{"role": role, "parts": [{"type": "text", "content": text}]}]);
        span.attr(key, messages.to_string());
    }

    fn on(&self, live: &mut Live, event: &Event<'_>) {
        let Some(run_id) = live.run.as_ref().map(|r| r.run_id.clone()) else {
            return;
        };
        match *event {
            Event::NodeStarted { node_id, step, .. } => {
                let mut span = semconv::node_span(&run_id, &self.workflow, step, node_id);
                span.start_unix_nano = now_ns();
                live.open.push(Open {
                    span,
                    node_id: node_id.to_string(),
                    step,
                    scope: Scope::Visit,
                    usage: None,
                    actions: 0,
                });
            }
            Event::AgentCall { .. } => self.agent_call(live, &run_id, event),
            Event::ActionExecuted {
                node_id,
                action,
                success,
                ..
            } => {
                let Some(owner) = owner(&mut live.open, node_id) else {
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
                    action,
                );
                let t = now_ns();
                span.start_unix_nano = t;
                span.end_unix_nano = t;
                span.status = if success {
                    Status::Ok
                } else {
                    Status::Error("action failed".into())
                };
                self.emit(live, span);
            }
            Event::RubricEvaluated {
                node_id,
                score,
                passed,
            } => {
                if let Some(o) = owner(&mut live.open, node_id) {
                    o.span
                        .attr("hensu.rubric.score", score)
                        .attr("hensu.rubric.passed", passed);
                }
            }
            Event::NodeCompleted {
                node_id,
                status,
                error,
                ..
            } => {
                let Some(i) = live
                    .open
                    .iter()
                    .rposition(|o| o.scope == Scope::Visit && o.node_id == node_id)
                else {
                    return;
                };
                let mut o = live.open.remove(i);
                o.span.end_unix_nano = now_ns();
                let error = error.map(|e| self.redactor.redact(e).into_owned());
                semconv::node_status(&mut o.span, status, error.as_deref());
                if let Some(u) = &o.usage {
                    semconv::usage(&mut o.span, u);
                }
                self.emit(live, o.span);
            }
            Event::CompensationStarted {
                node_id,
                compensation_id,
                visit_step,
            } => {
                let mut span =
                    semconv::compensation_span(&run_id, visit_step, compensation_id, node_id);
                span.start_unix_nano = now_ns();
                live.open.push(Open {
                    span,
                    node_id: compensation_id.to_string(),
                    step: visit_step,
                    scope: Scope::Compensation,
                    usage: None,
                    actions: 0,
                });
            }
            Event::CompensationFinished {
                compensation_id, ..
            } => self.close_compensation(live, compensation_id, None),
            Event::CompensationFailed {
                compensation_id,
                error,
                ..
            } => self.close_compensation(live, compensation_id, Some(error)),
            Event::ProviderRetry { .. } | Event::Backtrack { .. } => point(live, event),
            Event::RunFinished { finish, .. } => self.finish(live, finish),
            _ => {}
        }
    }

    /// An agent call: a `chat` span under its visit or compensation.
    fn agent_call(&self, live: &mut Live, run_id: &str, event: &Event<'_>) {
        let Event::AgentCall {
            node_id,
            agent_id,
            branch_id,
            model,
            prompt,
            response,
            error,
            duration_us,
            usage,
            ..
        } = *event
        else {
            return;
        };
        let Some(owner) = owner(&mut live.open, node_id) else {
            return;
        };
        let key = match owner.scope {
            Scope::Compensation => semconv::compensation_agent_key(owner.step, node_id),
            Scope::Visit => {
                let branch = branch_id.map(str::to_string);
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
        let mut span = semconv::agent_span(run_id, key, &owner.span.key, agent_id, model);
        let end = now_ns();
        span.end_unix_nano = end;
        span.start_unix_nano = end.saturating_sub(duration_us.saturating_mul(1_000));
        span.status = match error {
            Some(e) => Status::Error(self.redactor.redact(e).into_owned()),
            None => Status::Ok,
        };
        if let Some(u) = &usage {
            semconv::usage(&mut span, u);
            let total = owner.usage.get_or_insert(Usage {
                input_tokens: 0,
                output_tokens: 0,
            });
            total.input_tokens += u.input_tokens;
            total.output_tokens += u.output_tokens;
        }
        self.content(&mut span, "gen_ai.input.messages", "user", prompt);
        if let Some(r) = response {
            self.content(&mut span, "gen_ai.output.messages", "assistant", r);
        }
        self.emit(live, span);
    }

    fn close_compensation(&self, live: &mut Live, id: &str, error: Option<&str>) {
        let Some(i) = live
            .open
            .iter()
            .rposition(|o| o.scope == Scope::Compensation && o.node_id == id)
        else {
            return;
        };
        let mut o = live.open.remove(i);
        o.span.end_unix_nano = now_ns();
        let status = if error.is_some() {
            hensu_runtime::NodeStatus::Failure
        } else {
            hensu_runtime::NodeStatus::Success
        };
        let error = error.map(|e| self.redactor.redact(e).into_owned());
        semconv::node_status(&mut o.span, status, error.as_deref());
        self.emit(live, o.span);
    }

    /// The root span, once the run has ended (a paused run's root comes with its end, from
    /// the process that ends it).
    fn finish(&self, live: &mut Live, finish: FinishKind<'_>) {
        live.open.clear();
        let (status, exit, span_status) = match finish {
            FinishKind::Paused => return,
            FinishKind::Completed { exit_status } => {
                let exit = exit_status.as_str();
                let s = if exit == "SUCCESS" {
                    Status::Ok
                } else {
                    Status::Error(format!("ended at a {exit} end node"))
                };
                ("completed", Some(exit), s)
            }
            FinishKind::Rejected { .. } => ("rejected", None, Status::Error("rejected".into())),
            FinishKind::Failed { .. } => ("failed", None, Status::Error("failed".into())),
        };
        let Some(run) = &live.run else {
            return;
        };
        let mut root = semconv::run_span(run);
        root.start_unix_nano = live.started_ms.saturating_mul(1_000_000);
        root.end_unix_nano = now_ns().max(root.start_unix_nano);
        root.attr("hensu.run.status", status);
        if let Some(e) = exit {
            root.attr("hensu.exit_status", e);
        }
        root.status = span_status;
        self.emit(live, root);
    }
}

/// A retry of the call in flight or a backtrack: an event of the visit it happens in.
fn point(live: &mut Live, event: &Event<'_>) {
    match *event {
        Event::ProviderRetry {
            attempt,
            delay_ms,
            error_kind,
            status,
            ..
        } => {
            // The call in flight is the latest visit's (its span is built when it ends).
            if let Some(o) = live.open.last_mut() {
                let mut attributes = crate::span::Attrs::new();
                attributes.insert("hensu.retry.attempt".into(), u64::from(attempt).into());
                attributes.insert("hensu.retry.delay_ms".into(), delay_ms.into());
                attributes.insert("error.type".into(), error_kind.into());
                if let Some(code) = status {
                    attributes.insert("http.response.status_code".into(), u64::from(code).into());
                }
                o.span.events.push(crate::span::SpanEvent {
                    name: "hensu.provider_retry".into(),
                    time_unix_nano: now_ns(),
                    attributes,
                });
            }
        }
        Event::Backtrack { from, to, kind, .. } => {
            if let Some(o) = live.open.iter_mut().rev().find(|o| o.node_id == from) {
                let b = hensu_runtime::Backtrack {
                    from: from.to_string(),
                    to: to.to_string(),
                    kind,
                    reason: String::new(),
                };
                o.span
                    .events
                    .push(crate::rebuild::backtrack_event(&b, now_ns() / 1_000_000));
            }
        }
        _ => {}
    }
}

/// The visit or compensation in flight whose events name `node_id` (the latest).
fn owner<'a>(open: &'a mut [Open], node_id: &str) -> Option<&'a mut Open> {
    open.iter_mut().rev().find(|o| o.node_id == node_id)
}

impl ExecutionListener for TraceListener {
    fn on_event(&self, event: &Event<'_>) {
        let Ok(mut live) = self.live.lock() else {
            return;
        };
        if let Event::RunStarted { execution_id, .. } = *event {
            live.run = Some(self.run_info(execution_id));
            live.started_ms = now_ns() / 1_000_000;
            return;
        }
        self.on(&mut live, event);
    }
}
