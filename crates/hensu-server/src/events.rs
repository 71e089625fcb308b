//! Server-sent events (docs/server.md, *Events*). Every event is built from the run log, so a
//! stream can be replayed: each carries `id: <step>` (per execution) or `id: <run>:<step>`
//! (per tenant), and a reconnect with `Last-Event-ID` continues after it. Streams wake on this
//! process's writes and also poll the shared store, so they follow runs executing on another
//! server that shares the database.

use std::collections::{HashMap, HashSet};
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::response::sse::Event as SseEvent;
use futures_util::Stream;
use hensu_store::{LogEntry, LogKind, RunStatus, StateStore, WorkflowRegistry};
use serde_json::{Value, json};
use tokio::sync::broadcast;

use crate::exec::RunChanged;

/// How often a stream re-reads the log without a local wake-up.
const POLL: Duration = Duration::from_millis(500);
const PAGE: usize = 200;

/// The public context: engine keys (`_…`) removed, nulls kept.
pub fn public_context(state: &Value) -> Value {
    let mut out = serde_json::Map::new();
    if let Some(ctx) = state.get("context").and_then(Value::as_object) {
        for (k, v) in ctx {
            if !k.starts_with('_') {
                out.insert(k.clone(), v.clone());
            }
        }
    }
    Value::Object(out)
}

fn ts(ms: u64) -> String {
    hensu_store::rfc3339(ms)
}

/// The upstream-shaped event of one log row (None for rows that are not events).
pub fn log_event(
    run_id: &str,
    workflow_id: &str,
    tenant: &str,
    e: &LogEntry,
    output: &dyn Fn() -> Value,
) -> Option<Value> {
    let m = &e.meta;
    let at = ts(m.at);
    Some(match (m.kind, m.status) {
        (LogKind::Created, _) => json!({"type": "execution.started", "executionId": run_id,
            "workflowId": workflow_id, "tenantId": tenant, "timestamp": at}),
        // A worker's claim is bookkeeping, not an upstream event; a queued run has none yet.
        (LogKind::Claimed, _) | (_, RunStatus::Queued) => return None,
        (_, RunStatus::Running) => json!({"type": "execution.step", "executionId": run_id,
            "workflowId": workflow_id, "nodeId": m.node, "timestamp": at}),
        (_, RunStatus::Paused) => json!({"type": "execution.paused", "executionId": run_id,
            "workflowId": workflow_id, "nodeId": m.node,
            "correlationId": correlation(e), "reason": if correlation(e).is_some() {"review"} else {"pending"},
            "output": output(), "timestamp": at}),
        (_, RunStatus::Completed) => json!({"type": "execution.completed", "executionId": run_id,
            "workflowId": workflow_id, "status": "completed",
            "success": true,
            "finalNodeId": m.node, "output": output(), "timestamp": at}),
        (_, RunStatus::Rejected) => json!({"type": "execution.completed", "executionId": run_id,
            "workflowId": workflow_id, "status": "rejected", "success": false,
            "finalNodeId": m.node, "output": output(), "timestamp": at}),
        (_, RunStatus::Failed) => json!({"type": "execution.error", "executionId": run_id,
            "errorType": "ExecutionFailure", "message": "the execution failed",
            "nodeId": m.node, "timestamp": at}),
        (_, RunStatus::Cancelled) => json!({"type": "execution.cancelled", "executionId": run_id,
            "workflowId": workflow_id, "nodeId": m.node, "timestamp": at}),
    })
}

fn correlation(e: &LogEntry) -> Option<String> {
    // The log row does not carry it; the paused event reads it from the record instead.
    e.output
        .as_ref()
        .and_then(|o| o.get("correlationId"))
        .and_then(Value::as_str)
        .map(str::to_string)
}

/// What one read of a run's log found.
struct EventsRead {
    /// (step, event), oldest first.
    events: Vec<(u64, Value)>,
    /// The last step read (`after` when nothing was).
    last: u64,
    /// The run's status and step now.
    status: RunStatus,
    step: u64,
}

/// One run's events after `after` (from its creation when `None`), read from the store; fills
/// in the record's correlation id and the current public context.
fn read_events(
    store: &dyn StateStore,
    run_id: &str,
    tenant: &str,
    after: Option<u64>,
) -> hensu_store::Result<EventsRead> {
    // The log first, then the record: the record is then at least as new as every row read,
    // so the pause row that is the record's latest step gets the record's correlation id.
    let rows = store.read_log(run_id, after.unwrap_or(0), PAGE)?;
    let record = store.record(run_id)?;
    let mut events = Vec::new();
    if after.is_none() {
        // The creation row is step 0; the log is read *after* a step, so it is built here.
        events.push((
            0,
            json!({"type": "execution.started", "executionId": run_id,
                   "workflowId": record.workflow_id, "tenantId": tenant,
                   "timestamp": ts(record.started_at)}),
        ));
    }
    let after = after.unwrap_or(0);
    let needs_state = rows.iter().any(|r| r.meta.status != RunStatus::Running);
    let state = if needs_state {
        store
            .load(run_id)
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
        if let Some(mut ev) = log_event(run_id, &record.workflow_id, tenant, r, &output) {
            if r.meta.status == RunStatus::Paused
                && r.meta.step == record.step
                && let Some(obj) = ev.as_object_mut()
            {
                obj.insert("correlationId".into(), json!(record.correlation_id));
                obj.insert(
                    "reason".into(),
                    json!(if record.correlation_id.is_some() {
                        "review"
                    } else {
                        "pending"
                    }),
                );
            }
            if r.meta.status == RunStatus::Completed
                && r.meta.step == record.step
                && let Some(obj) = ev.as_object_mut()
            {
                // `success` is the end node's exit status (a FAILURE end is not a success).
                let exit = record.exit_status.clone();
                obj.insert(
                    "success".into(),
                    json!(exit.as_deref().is_none_or(|x| x == "SUCCESS")),
                );
                obj.insert("exitStatus".into(), json!(exit));
            }
            events.push((r.meta.step, ev));
        }
    }
    Ok(EventsRead {
        events,
        last,
        status: record.status,
        step: record.step,
    })
}

fn sse(id: String, ev: &Value) -> SseEvent {
    let kind = ev.get("type").and_then(Value::as_str).unwrap_or("message");
    SseEvent::default().id(id).event(kind).data(ev.to_string())
}

/// The stream of one execution after step `after`; it ends when the run pauses or ends.
pub fn execution_stream(
    store: Arc<dyn StateStore>,
    mut wake: broadcast::Receiver<RunChanged>,
    run_id: String,
    tenant: String,
    after: Option<u64>,
) -> impl Stream<Item = Result<SseEvent, Infallible>> {
    async_stream(move |tx| async move {
        let mut after = after;
        let mut emitted = false;
        loop {
            let (s, id, t) = (store.clone(), run_id.clone(), tenant.clone());
            let read =
                tokio::task::spawn_blocking(move || read_events(s.as_ref(), &id, &t, after)).await;
            let Ok(Ok(read)) = read else {
                return;
            };
            for (step, ev) in &read.events {
                emitted = true;
                if tx.send(Ok(sse(step.to_string(), ev))).await.is_err() {
                    return;
                }
            }
            after = Some(read.last.max(after.unwrap_or(0)));
            let caught_up = read.last >= read.step;
            // A stream ends with the run's segment: at its end, or at a pause it has shown.
            // Opened right at a pause (Last-Event-ID = the pause), it waits for the resume.
            if caught_up
                && (read.status.is_terminal() || (read.status == RunStatus::Paused && emitted))
            {
                return;
            }
            wait_for(&mut wake, |c| c.run_id == run_id).await;
        }
    })
}

/// Every execution of `tenant` from now on, wherever it runs: a write of this server wakes
/// the stream at once, and every `POLL` (500 ms) the tenant's runs are checked in the shared store
/// (one query for the tenant's run ids, one record read per run not known to be over), so
/// runs executing on another server sharing the database are followed too. The runs that
/// exist when the stream opens start at their current step (no history replay);
/// `resume_from` continues one run after a given step.
pub fn tenant_stream(
    store: Arc<dyn StateStore>,
    registry: Arc<dyn WorkflowRegistry>,
    mut wake: broadcast::Receiver<RunChanged>,
    tenant: String,
    resume_from: Option<(String, u64)>,
) -> impl Stream<Item = Result<SseEvent, Infallible>> {
    async_stream(move |tx| async move {
        let baseline = {
            let (s, r, t) = (store.clone(), registry.clone(), tenant.clone());
            tokio::task::spawn_blocking(move || tenant_steps(s.as_ref(), r.as_ref(), &t)).await
        };
        let Ok(Ok(mut seen)) = baseline else {
            return;
        };
        let mut over: HashSet<String> = HashSet::new();
        if let Some((run, step)) = resume_from {
            seen.insert(run, Progress { step, ended: false });
        }
        for (id, p) in &seen {
            if p.ended {
                over.insert(id.clone());
            }
        }
        let mut poll = tokio::time::interval(POLL);
        poll.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        poll.tick().await;
        loop {
            // Which runs to read: the one this server just wrote, or every open one.
            let candidates: Option<Vec<String>> = tokio::select! {
                changed = wake.recv() => match changed {
                    Ok(c) if c.tenant == tenant => Some(vec![c.run_id]),
                    Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => continue,
                    Err(broadcast::error::RecvError::Closed) => return,
                },
                _ = poll.tick() => None,
            };
            let changed = {
                let (s, r, t) = (store.clone(), registry.clone(), tenant.clone());
                let known = seen.clone();
                let over = over.clone();
                tokio::task::spawn_blocking(move || -> hensu_store::Result<Vec<String>> {
                    let ids = match candidates {
                        Some(ids) => ids,
                        None => r
                            .tenant_runs(&t)?
                            .into_iter()
                            .filter(|id| !over.contains(id))
                            .collect(),
                    };
                    let mut out = Vec::new();
                    for id in ids {
                        let record = s.record(&id)?;
                        if known.get(&id).is_none_or(|p| record.step > p.step) {
                            out.push(id);
                        }
                    }
                    Ok(out)
                })
                .await
            };
            let Ok(Ok(changed)) = changed else {
                continue;
            };
            for run_id in changed {
                let after = seen.get(&run_id).map(|p| p.step);
                let (s, id, t) = (store.clone(), run_id.clone(), tenant.clone());
                let read =
                    tokio::task::spawn_blocking(move || read_events(s.as_ref(), &id, &t, after))
                        .await;
                let Ok(Ok(read)) = read else {
                    continue;
                };
                for (step, ev) in &read.events {
                    let id = format!("{run_id}:{step}");
                    if tx.send(Ok(sse(id, ev))).await.is_err() {
                        return;
                    }
                }
                let ended = read.status.is_terminal() && read.last >= read.step;
                if ended {
                    over.insert(run_id.clone());
                }
                seen.insert(
                    run_id,
                    Progress {
                        step: read.last,
                        ended,
                    },
                );
            }
        }
    })
}

/// How far a tenant stream has shown one run.
#[derive(Clone, Copy, Debug)]
struct Progress {
    step: u64,
    /// The run ended and its last event was shown (or it had ended when the stream opened).
    ended: bool,
}

/// The current step of each of the tenant's runs (the tenant stream's starting point).
fn tenant_steps(
    store: &dyn StateStore,
    registry: &dyn WorkflowRegistry,
    tenant: &str,
) -> hensu_store::Result<HashMap<String, Progress>> {
    let mut out = HashMap::new();
    for id in registry.tenant_runs(tenant)? {
        if let Ok(r) = store.record(&id) {
            out.insert(
                id,
                Progress {
                    step: r.step,
                    ended: r.status.is_terminal(),
                },
            );
        }
    }
    Ok(out)
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
fn async_stream<F, Fut>(producer: F) -> impl Stream<Item = Result<SseEvent, Infallible>>
where
    F: FnOnce(tokio::sync::mpsc::Sender<Result<SseEvent, Infallible>>) -> Fut,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let (tx, rx) = tokio::sync::mpsc::channel(64);
    tokio::spawn(producer(tx));
    tokio_stream::wrappers::ReceiverStream::new(rx)
}
