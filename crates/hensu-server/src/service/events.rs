//! Server-sent events (docs/server.md, *Events*). Every event is built from the run log, so a
//! stream can be replayed: each carries `id: <step>` (per execution) or `id: <seq>` (per
//! tenant: the global sequence of the store's tenant event log, [`super::tenant_stream`]), and
//! a reconnect with `Last-Event-ID` continues after it. Streams wake on this process's writes
//! and also poll the shared store, so they follow runs executing on another server that
//! shares the database.

use std::sync::Arc;
use std::time::Duration;

use axum::response::sse::Event as SseEvent;
use futures_util::Stream;
use hensu_store::{LogEntry, LogKind, RunRecord, RunStatus, StateStore, TenantEvent};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::broadcast;
use utoipa::ToSchema;

use super::executions::{ExecutionState, owned_record, public_context};
use crate::AppState;
use crate::auth::Tenant;
use crate::error::{ApiError, ApiResult};
use crate::exec::RunChanged;

/// How often a stream re-reads the log without a local wake-up.
const POLL: Duration = Duration::from_millis(500);
const PAGE: usize = 200;

/// Why an execution paused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum PauseReason {
    /// A human review: resume with its `correlationId` and a decision.
    Review,
    /// A node waits for an external answer.
    Pending,
}

/// One event of the SSE streams (the `data:` of a message; its `event:` is `type`).
/// Timestamps are RFC 3339, UTC.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(tag = "type")]
pub enum ExecutionEvent {
    #[serde(rename = "execution.started", rename_all = "camelCase")]
    Started {
        execution_id: String,
        workflow_id: String,
        tenant_id: String,
        timestamp: String,
    },
    /// A node finished; `nodeId` runs next.
    #[serde(rename = "execution.step", rename_all = "camelCase")]
    Step {
        execution_id: String,
        workflow_id: String,
        node_id: Option<String>,
        /// The node that finished.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        executed_node_id: Option<String>,
        /// Its output (redacted), any JSON value — an agent's text is a string: what its
        /// `execution.token` events wrote, whole (docs/server.md, *Token events*).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schema(value_type = Option<serde_json::Value>)]
        node_output: Option<Value>,
        timestamp: String,
    },
    #[serde(rename = "execution.paused", rename_all = "camelCase")]
    Paused {
        execution_id: String,
        workflow_id: String,
        node_id: Option<String>,
        correlation_id: Option<String>,
        reason: PauseReason,
        /// The public context.
        #[schema(value_type = Object)]
        output: Value,
        timestamp: String,
    },
    /// The end was reached (`completed`, or `rejected` by a review).
    #[serde(rename = "execution.completed", rename_all = "camelCase")]
    Completed {
        execution_id: String,
        workflow_id: String,
        status: ExecutionState,
        /// The end node's exit status is `SUCCESS` (a `FAILURE` end is not a success).
        success: bool,
        final_node_id: Option<String>,
        #[schema(value_type = Object)]
        output: Value,
        timestamp: String,
        /// The end node's exit status; on the event of the run's latest step only.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schema(value_type = Option<String>)]
        exit_status: Option<Option<String>>,
    },
    #[serde(rename = "execution.error", rename_all = "camelCase")]
    Error {
        execution_id: String,
        error_type: String,
        message: String,
        node_id: Option<String>,
        timestamp: String,
    },
    /// A call of the node in flight was journaled (docs/security.md, *Call journal*): a tool
    /// of the tool loop, a command, a webhook or api-caller request, a model response. Never
    /// its arguments or result.
    #[serde(rename = "execution.call", rename_all = "camelCase")]
    Call {
        execution_id: String,
        workflow_id: String,
        node_id: Option<String>,
        /// `model`, `tool`, `command`, `webhook`, `api_call`, `action` or `approval` (the
        /// decision on a gated tool call).
        kind: String,
        /// The tool, command, handler or model.
        name: String,
        /// The call's number in its node visit.
        call_index: u32,
        /// `started`, `finished`, or `held` (an interrupted unsafe call paused the run, or a
        /// gated tool call waits for approval).
        phase: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ok: Option<bool>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        duration_ms: Option<u64>,
        timestamp: String,
    },
    /// A piece of the text the node in flight is writing (docs/server.md, *Token events*):
    /// live only, never in the run log (the node's output is, on its `execution.step`). Its
    /// `id:` is `<id of the last log event>.<token number>`.
    #[serde(rename = "execution.token", rename_all = "camelCase")]
    Token {
        execution_id: String,
        workflow_id: String,
        node_id: String,
        /// The parallel branch or map item writing.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        branch_id: Option<String>,
        /// 0, 1, … within the node's agent call.
        sequence: u64,
        text: String,
        /// Tokens this stream lost before this one because it read too slowly.
        #[serde(default, skip_serializing_if = "is_zero")]
        dropped: u64,
        timestamp: String,
    },
    #[serde(rename = "execution.cancelled", rename_all = "camelCase")]
    Cancelled {
        execution_id: String,
        workflow_id: String,
        node_id: Option<String>,
        timestamp: String,
    },
    /// The execution was forked from another at a step of that one's log (docs/server.md,
    /// *Time travel*): its first own event; the events before it are its parent's.
    #[serde(rename = "execution.forked", rename_all = "camelCase")]
    Forked {
        execution_id: String,
        workflow_id: String,
        parent_execution_id: String,
        parent_step: u64,
        /// The node the fork continues with.
        node_id: Option<String>,
        timestamp: String,
    },
    /// A review the paused execution waits for (docs/server.md, *Pending reviews*): before
    /// the `execution.paused` of the pause the execution is in, one per waiting review (the
    /// main flow's, each fork branch's, each child's), under the pause's id. A review still
    /// waiting after another was decided is announced again with the same `correlationId`.
    #[serde(rename = "execution.review_requested", rename_all = "camelCase")]
    ReviewRequested {
        execution_id: String,
        workflow_id: String,
        /// The resume's `correlationId` for this review.
        correlation_id: String,
        kind: super::reviews::ReviewKind,
        node_id: Option<String>,
        /// The fork target whose branch waits (innermost).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        branch: Option<String>,
        /// The fork and sub-workflow nodes it is nested in, outermost first.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        within: Vec<String>,
        /// When it is rejected undecided (RFC 3339, UTC).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        deadline_at: Option<String>,
        /// When the review was requested.
        timestamp: String,
    },
    /// Tenant stream only: the events after the `Last-Event-ID` sent are no longer all held
    /// (older than the retention window, or an id this store never gave), so the stream
    /// continues from now and the client should re-read what it shows (docs/server.md,
    /// *Events*). Its `id:` is where the stream continues from.
    #[serde(rename = "stream.reset", rename_all = "camelCase")]
    Reset { reason: String, timestamp: String },
}

impl ExecutionEvent {
    /// The `type` (and the SSE `event:` name).
    pub fn kind(&self) -> &'static str {
        match self {
            ExecutionEvent::Started { .. } => "execution.started",
            ExecutionEvent::Step { .. } => "execution.step",
            ExecutionEvent::Paused { .. } => "execution.paused",
            ExecutionEvent::Completed { .. } => "execution.completed",
            ExecutionEvent::Error { .. } => "execution.error",
            ExecutionEvent::Cancelled { .. } => "execution.cancelled",
            ExecutionEvent::Call { .. } => "execution.call",
            ExecutionEvent::Token { .. } => "execution.token",
            ExecutionEvent::Forked { .. } => "execution.forked",
            ExecutionEvent::ReviewRequested { .. } => "execution.review_requested",
            ExecutionEvent::Reset { .. } => "stream.reset",
        }
    }

    /// The node the event names (the final node of a completion).
    pub fn node(&self) -> Option<&str> {
        match self {
            ExecutionEvent::Started { .. } | ExecutionEvent::Reset { .. } => None,
            ExecutionEvent::Step { node_id, .. }
            | ExecutionEvent::Paused { node_id, .. }
            | ExecutionEvent::Error { node_id, .. }
            | ExecutionEvent::Cancelled { node_id, .. }
            | ExecutionEvent::Call { node_id, .. }
            | ExecutionEvent::Forked { node_id, .. }
            | ExecutionEvent::ReviewRequested { node_id, .. } => node_id.as_deref(),
            ExecutionEvent::Completed { final_node_id, .. } => final_node_id.as_deref(),
            ExecutionEvent::Token { node_id, .. } => Some(node_id),
        }
    }

    pub fn timestamp(&self) -> &str {
        match self {
            ExecutionEvent::Started { timestamp, .. }
            | ExecutionEvent::Step { timestamp, .. }
            | ExecutionEvent::Paused { timestamp, .. }
            | ExecutionEvent::Completed { timestamp, .. }
            | ExecutionEvent::Error { timestamp, .. }
            | ExecutionEvent::Cancelled { timestamp, .. }
            | ExecutionEvent::Call { timestamp, .. }
            | ExecutionEvent::Token { timestamp, .. }
            | ExecutionEvent::Forked { timestamp, .. }
            | ExecutionEvent::ReviewRequested { timestamp, .. }
            | ExecutionEvent::Reset { timestamp, .. } => timestamp,
        }
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// The `execution.token` event of a token (`dropped`: what the stream lost before it).
pub(crate) fn token_event(t: &crate::tokens::TokenMsg, dropped: u64) -> ExecutionEvent {
    ExecutionEvent::Token {
        execution_id: t.run_id.clone(),
        workflow_id: t.workflow_id.clone(),
        node_id: t.node_id.clone(),
        branch_id: t.branch_id.clone(),
        sequence: t.sequence,
        text: t.text.clone(),
        dropped,
        timestamp: ts(t.at_ms),
    }
}

fn ts(ms: u64) -> String {
    hensu_store::rfc3339(ms)
}

/// The creation event of a run (step 0: the log is read *after* a step, so it is built from
/// the record).
pub fn started_event(record: &RunRecord, tenant: &str) -> ExecutionEvent {
    ExecutionEvent::Started {
        execution_id: record.run_id.clone(),
        workflow_id: record.workflow_id.clone(),
        tenant_id: tenant.to_string(),
        timestamp: ts(record.started_at),
    }
}

/// The `execution.call` event of a `journal` row (its kind, name, number, phase and outcome;
/// never its result).
fn call_event(
    execution_id: String,
    workflow_id: String,
    node_id: Option<String>,
    timestamp: String,
    e: &LogEntry,
) -> Option<ExecutionEvent> {
    let entry: hensu_runtime::journal::JournalEntry =
        serde_json::from_value(e.output.clone()?).ok()?;
    let phase = match entry.phase {
        hensu_runtime::journal::CallPhase::Started => "started",
        hensu_runtime::journal::CallPhase::Finished => "finished",
        hensu_runtime::journal::CallPhase::Held => "held",
    };
    Some(ExecutionEvent::Call {
        execution_id,
        workflow_id,
        node_id: entry.node.or(node_id),
        kind: entry.kind.as_str().to_string(),
        name: entry.name,
        call_index: entry.index,
        phase: phase.to_string(),
        ok: entry.ok,
        duration_ms: entry.duration_ms,
        timestamp,
    })
}

/// The upstream event of one log row (None for rows that are not events).
pub fn log_event(
    run_id: &str,
    workflow_id: &str,
    tenant: &str,
    e: &LogEntry,
    output: &dyn Fn() -> Value,
) -> Option<ExecutionEvent> {
    let m = &e.meta;
    let (execution_id, workflow_id, node_id, timestamp) = (
        run_id.to_string(),
        workflow_id.to_string(),
        m.node.clone(),
        ts(m.at),
    );
    Some(match (m.kind, m.status) {
        (LogKind::Created, _) => ExecutionEvent::Started {
            execution_id,
            workflow_id,
            tenant_id: tenant.to_string(),
            timestamp,
        },
        (LogKind::Forked, _) => {
            let parent: Option<hensu_store::RunParent> = e
                .output
                .as_ref()
                .and_then(|o| serde_json::from_value(o.clone()).ok());
            let parent = parent?;
            ExecutionEvent::Forked {
                execution_id,
                workflow_id,
                parent_execution_id: parent.run_id,
                parent_step: parent.step,
                node_id,
                timestamp,
            }
        }
        (LogKind::Journal, _) => call_event(execution_id, workflow_id, node_id, timestamp, e)?,
        // A worker's claim is bookkeeping, not an upstream event; a queued run has none yet.
        (LogKind::Claimed, _) | (_, RunStatus::Queued) => return None,
        (_, RunStatus::Running) => ExecutionEvent::Step {
            execution_id,
            workflow_id,
            node_id,
            executed_node_id: m.executed_node.clone(),
            node_output: m.executed_node.as_ref().and(e.output.clone()),
            timestamp,
        },
        (_, RunStatus::Paused) => {
            let correlation_id = correlation(e);
            ExecutionEvent::Paused {
                execution_id,
                workflow_id,
                node_id,
                reason: pause_reason(correlation_id.as_deref()),
                correlation_id,
                output: output(),
                timestamp,
            }
        }
        (_, status @ (RunStatus::Completed | RunStatus::Rejected)) => ExecutionEvent::Completed {
            execution_id,
            workflow_id,
            status: status.into(),
            success: status == RunStatus::Completed,
            final_node_id: node_id,
            output: output(),
            timestamp,
            exit_status: None,
        },
        (_, RunStatus::Failed) => ExecutionEvent::Error {
            execution_id,
            error_type: "ExecutionFailure".into(),
            message: "the execution failed".into(),
            node_id,
            timestamp,
        },
        (_, RunStatus::Cancelled) => ExecutionEvent::Cancelled {
            execution_id,
            workflow_id,
            node_id,
            timestamp,
        },
    })
}

fn pause_reason(correlation_id: Option<&str>) -> PauseReason {
    if correlation_id.is_some() {
        PauseReason::Review
    } else {
        PauseReason::Pending
    }
}

fn correlation(e: &LogEntry) -> Option<String> {
    // The log row does not carry it; the paused event reads it from the record instead.
    e.output
        .as_ref()
        .and_then(|o| o.get("correlationId"))
        .and_then(Value::as_str)
        .map(str::to_string)
}

/// The `execution.review_requested` events of the pause `state` (a run's snapshot) is in:
/// one per review it waits for, in the order of [`hensu_runtime::waiting_reviews`].
pub(crate) fn review_events(run_id: &str, workflow_id: &str, state: &Value) -> Vec<ExecutionEvent> {
    let Ok(state) = hensu_host::restore(run_id, state) else {
        return Vec::new();
    };
    hensu_runtime::waiting_reviews(&state)
        .into_iter()
        .map(|w| {
            let r = super::reviews::PendingReview::from(w);
            ExecutionEvent::ReviewRequested {
                execution_id: run_id.to_string(),
                workflow_id: workflow_id.to_string(),
                correlation_id: r.correlation_id,
                kind: r.kind,
                node_id: Some(r.node_id),
                branch: r.branch,
                within: r.within,
                deadline_at: r.deadline_at,
                timestamp: r.requested_at,
            }
        })
        .collect()
}

/// What one read of a run's log found.
struct EventsRead {
    /// (step, event), oldest first.
    events: Vec<(u64, ExecutionEvent)>,
    /// The last step read (`after` when nothing was).
    last: u64,
    /// The run's status and step now.
    status: RunStatus,
    step: u64,
}

/// One run's events after `after` (from its creation when `None`), read from the store; fills
/// in the record's correlation id and the current public context.
async fn read_events(
    store: &dyn StateStore,
    run_id: &str,
    tenant: &str,
    after: Option<u64>,
) -> hensu_store::Result<EventsRead> {
    // The log first, then the record: the record is then at least as new as every row read,
    // so the pause row that is the record's latest step gets the record's correlation id.
    let rows = store.read_log(run_id, after.unwrap_or(0), PAGE).await?;
    let record = store.record(run_id).await?;
    let mut events = Vec::new();
    if after.is_none() {
        // The creation row is step 0; the log is read *after* a step, so it is built here.
        events.push((0, started_event(&record, tenant)));
    }
    let after = after.unwrap_or(0);
    let needs_state = rows.iter().any(|r| r.meta.status != RunStatus::Running);
    let state = if needs_state {
        store
            .load(run_id)
            .await
            .map(|s| s.snapshot)
            .unwrap_or(Value::Null)
    } else {
        Value::Null
    };
    let output = || public_context(&state);
    let mut last = after;
    for r in &rows {
        last = r.meta.step;
        if r.meta.kind == LogKind::Created {
            continue;
        }
        if let Some(ev) = log_event(run_id, &record.workflow_id, tenant, r, &output) {
            let latest = (r.meta.step == record.step).then_some(&record);
            let completed = complete_row_event(run_id, &record.workflow_id, ev, latest, &state);
            events.extend(completed.into_iter().map(|e| (r.meta.step, e)));
        }
    }
    Ok(EventsRead {
        events,
        last,
        status: record.status,
        step: record.step,
    })
}

/// The event of the run's latest step takes what only the record knows: a pause's review,
/// a completion's exit status.
fn latest_from_record(ev: &mut ExecutionEvent, record: &RunRecord) {
    match ev {
        ExecutionEvent::Paused {
            correlation_id,
            reason,
            ..
        } => {
            correlation_id.clone_from(&record.correlation_id);
            *reason = pause_reason(correlation_id.as_deref());
        }
        ExecutionEvent::Completed {
            status: ExecutionState::Completed,
            success,
            exit_status,
            ..
        } => {
            let exit = record.exit_status.clone();
            // `success` is the end node's exit status (a FAILURE end is not a success).
            *success = super::outcome::succeeded(record).unwrap_or(false);
            *exit_status = Some(exit);
        }
        _ => {}
    }
}

/// The events of one row of the tenant event log, in order (none for rows that are not
/// events: a queued run's rows). A pause or an end reads the run's record (its review, its
/// exit status) and its public context; every other row needs nothing but itself. The pause
/// the run is in now is preceded by its `execution.review_requested` events (one per pending
/// review, docs/server.md, *Pending reviews*), all under the row's id.
pub(crate) async fn tenant_row_events(
    store: &dyn StateStore,
    row: &TenantEvent,
) -> Vec<ExecutionEvent> {
    let e = &row.entry;
    let (run_id, workflow_id, tenant) = (&row.run_id, &row.workflow_id, &row.tenant_id);
    let plain = e.meta.kind == LogKind::Created
        || matches!(e.meta.status, RunStatus::Running | RunStatus::Queued);
    if plain {
        return log_event(run_id, workflow_id, tenant, e, &|| Value::Null)
            .into_iter()
            .collect();
    }
    let record = store.record(run_id).await.ok();
    let state = store
        .load(run_id)
        .await
        .map(|s| s.snapshot)
        .unwrap_or(Value::Null);
    let Some(ev) = log_event(run_id, workflow_id, tenant, e, &|| public_context(&state)) else {
        return Vec::new();
    };
    let latest = record.as_ref().filter(|r| r.step == e.meta.step);
    complete_row_event(run_id, workflow_id, ev, latest, &state)
}

/// A row's event completed from its run, for both streams: the record's fields when the row
/// is the run's latest step (`latest`), a failure's message from the state, and — for the
/// review pause the run is in now — its `execution.review_requested` announcements before it
/// (the pause stays the last event of the row; docs/server.md, *Pending reviews*).
fn complete_row_event(
    run_id: &str,
    workflow_id: &str,
    mut ev: ExecutionEvent,
    latest: Option<&RunRecord>,
    state: &Value,
) -> Vec<ExecutionEvent> {
    if let Some(record) = latest {
        latest_from_record(&mut ev, record);
    }
    if let ExecutionEvent::Error { message, .. } = &mut ev
        && let Some(reason) = super::executions::failure_message(state)
    {
        *message = reason;
    }
    let review_pause = matches!(
        &ev,
        ExecutionEvent::Paused {
            reason: PauseReason::Review,
            ..
        }
    );
    let mut events = if latest.is_some() && review_pause {
        review_events(run_id, workflow_id, state)
    } else {
        Vec::new()
    };
    events.push(ev);
    events
}

/// One message of a stream: the event and its id (what a reconnect sends as
/// `Last-Event-ID`).
#[derive(Clone, Debug, PartialEq)]
pub struct StreamedEvent {
    /// `<step>` on an execution's stream, `<seq>` on the tenant's.
    pub id: String,
    pub event: ExecutionEvent,
}

impl StreamedEvent {
    /// The SSE message: `id:`, `event:` (the type) and the event as JSON `data:`. A review
    /// announcement goes without an `id:`: it precedes its pause's row, so a client that drops
    /// between the two reconnects from the row before and gets both again instead of losing
    /// the pause (docs/server.md, *Pending reviews*).
    pub fn to_sse(&self) -> SseEvent {
        let sse = SseEvent::default();
        let sse = match self.event {
            ExecutionEvent::ReviewRequested { .. } => sse,
            _ => sse.id(self.id.clone()),
        };
        sse.event(self.event.kind())
            .json_data(&self.event)
            .unwrap_or_else(|e| {
                tracing::error!(error = %e, "an event did not encode");
                SseEvent::default().comment("an event did not encode")
            })
    }
}

pub(crate) fn sse(id: String, event: &ExecutionEvent) -> StreamedEvent {
    StreamedEvent {
        id,
        event: event.clone(),
    }
}

/// A stream's `Last-Event-ID` (blank: none).
pub(crate) fn given(last_event_id: Option<&str>) -> Option<&str> {
    last_event_id.map(str::trim).filter(|s| !s.is_empty())
}

pub(crate) fn bad_last_event_id() -> ApiError {
    ApiError::bad_request("Last-Event-ID must be an event id of this stream")
}

/// The events of one of the tenant's executions: replayed after `last_event_id` (a step of
/// this stream; from the start without one), then live until it pauses or ends.
pub async fn execution_events(
    app: &AppState,
    tenant: &Tenant,
    run_id: &str,
    last_event_id: Option<&str>,
) -> ApiResult<impl Stream<Item = StreamedEvent> + use<>> {
    owned_record(app, tenant, run_id).await?;
    // `<step>`, or `<step>.<token>` (docs/server.md, *Token events*).
    let (after, token) = match given(last_event_id) {
        None => (None, 0),
        Some(s) => {
            let (step, token) = crate::tokens::split_id(s).unwrap_or((s, 0));
            (
                Some(step.parse::<u64>().map_err(|_| bad_last_event_id())?),
                token,
            )
        }
    };
    let slot = app.streams.acquire(&tenant.tenant_id)?;
    let stream = execution_stream(
        app.store.clone(),
        app.events.subscribe(),
        app.tokens.clone(),
        run_id.to_string(),
        tenant.tenant_id.clone(),
        (after, token),
    );
    Ok(crate::streams::guarded(
        stream,
        slot,
        app.closing.clone(),
        tenant.valid_until,
    ))
}

/// The stream of one execution after step `after` (and token `token`); it ends when the run
/// pauses or ends. Between its log events come the tokens of the node in flight, when it
/// runs on this server.
fn execution_stream(
    store: Arc<dyn StateStore>,
    mut wake: broadcast::Receiver<RunChanged>,
    tokens: Arc<crate::tokens::TokenHub>,
    run_id: String,
    tenant: String,
    (after, token): (Option<u64>, u64),
) -> impl Stream<Item = StreamedEvent> {
    // Subscribed before the response starts (the producer task may run later): a client that
    // has the response headers gets every token after them, kept or live.
    let (kept, rx) = tokens.subscribe(&|t: &crate::tokens::TokenMsg| t.run_id == run_id, token);
    async_stream(move |tx| async move {
        let mut after = after;
        let of_run = |t: &crate::tokens::TokenMsg| t.run_id == run_id;
        let mut follow = crate::tokens::Follow {
            rx,
            dropped: 0,
            last: token,
        };
        let mut kept = kept.into_iter();
        let mut emitted = false;
        // The latest event shown was a fork's first: the fork waits paused at its fork point
        // only until it is started, not for a human.
        let mut at_fork_point = false;
        loop {
            let Ok(read) = read_events(store.as_ref(), &run_id, &tenant, after).await else {
                return;
            };
            for (step, ev) in &read.events {
                emitted = true;
                at_fork_point = matches!(ev, ExecutionEvent::Forked { .. });
                if tx.send(sse(step.to_string(), ev)).await.is_err() {
                    return;
                }
            }
            after = Some(read.last.max(after.unwrap_or(0)));
            let caught_up = read.last >= read.step;
            // A stream ends with the run's segment: at its end, or at a pause it has shown.
            // Opened right at a pause (Last-Event-ID = the pause), it waits for the resume.
            if caught_up
                && (read.status.is_terminal()
                    || (read.status == RunStatus::Paused && emitted && !at_fork_point))
            {
                return;
            }
            // The kept tokens of the node in flight after the one the client saw, then the
            // live ones until the log moves.
            let row = after.unwrap_or(0);
            for t in kept.by_ref() {
                follow.last = follow.last.max(t.index);
                let ev = token_event(&t, 0);
                if tx
                    .send(sse(format!("{row}.{}", t.index), &ev))
                    .await
                    .is_err()
                {
                    return;
                }
            }
            let woken = wait_for(&mut wake, |c| c.run_id == run_id);
            tokio::pin!(woken);
            loop {
                tokio::select! {
                    () = &mut woken => {
                        // The node's tokens published before the log moved come before it.
                        for t in follow.ready(&of_run) {
                            let ev = token_event(&t, std::mem::take(&mut follow.dropped));
                            if tx.send(sse(format!("{row}.{}", t.index), &ev)).await.is_err() {
                                return;
                            }
                        }
                        break;
                    }
                    t = follow.next(&of_run) => {
                        let Some(t) = t else {
                            (&mut woken).await;
                            break;
                        };
                        let ev = token_event(&t, std::mem::take(&mut follow.dropped));
                        if tx.send(sse(format!("{row}.{}", t.index), &ev)).await.is_err() {
                            return;
                        }
                    }
                }
            }
        }
    })
}

async fn wait_for(
    wake: &mut broadcast::Receiver<RunChanged>,
    matches: impl Fn(&RunChanged) -> bool,
) {
    let _ = tokio::time::timeout(POLL, async {
        loop {
            match wake.recv().await {
                Ok(c) if matches(&c) => return,
                Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => {}
                Err(broadcast::error::RecvError::Closed) => {
                    std::future::pending::<()>().await;
                }
            }
        }
    })
    .await;
}

/// A stream fed by a producer task through a small channel (back-pressure: the producer waits
/// for a slow client; a closed client ends the producer).
pub(crate) fn async_stream<F, Fut>(producer: F) -> impl Stream<Item = StreamedEvent>
where
    F: FnOnce(tokio::sync::mpsc::Sender<StreamedEvent>) -> Fut,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let (tx, rx) = tokio::sync::mpsc::channel(64);
    tokio::spawn(producer(tx));
    tokio_stream::wrappers::ReceiverStream::new(rx)
}
