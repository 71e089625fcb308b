//! The call journal of the node in flight (docs/security.md, *Call journal*): every model
//! response and every tool, command, webhook or api-caller call a node makes is written to
//! the run's journal (a durable run: its run log) *before* its effect is used, so a node that
//! runs again after a crash or a takeover replays the recorded calls instead of issuing them
//! again and goes on from the first call without a recorded result.
//!
//! The engine scopes each node visit ([`in_visit`]; a parallel branch or a fork branch is a
//! nested visit, [`in_nested`]); the callers underneath (the providers' tool loop, hensu-host's
//! commands and HTTP handlers) wrap each call in [`journaled`]. A call is numbered in its visit
//! (0, 1, …): its idempotency key is `(run, visit, index)` ([`CallSlot::key`]), the same when
//! the node runs again. A call that was started but has no recorded result is governed by its
//! [`CallPolicy`]: `idempotent` calls are issued again (with the same key), `unsafe` ones fail
//! the node (E0511) or hold the run for a human ([`OnInterrupted::Pause`]).
//!
//! Without a journal (a run without a store) the scope still numbers the calls, so keys and
//! call events exist; nothing is replayed.

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::review::{ReviewHandler, ToolDecision};

mod approval;
pub use approval::{Approval, approve_tool_call};

/// What kind of call an entry records.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CallKind {
    /// A model request and its response (the tool loop's turns).
    Model,
    /// A tool the model called (MCP or an action handler).
    Tool,
    /// A command of `commands.yaml` (`execute`).
    Command,
    /// A `send("webhook", …)` request.
    Webhook,
    /// An `api-caller` generic node's request.
    ApiCall,
    /// Another `send` handler.
    Action,
    /// A reviewer's decision on a gated tool call (docs/mcp.md, *Tool approval*): held while
    /// it waits, finished with the decision.
    Approval,
}

impl CallKind {
    pub fn as_str(self) -> &'static str {
        match self {
            CallKind::Model => "model",
            CallKind::Tool => "tool",
            CallKind::Command => "command",
            CallKind::Webhook => "webhook",
            CallKind::ApiCall => "api_call",
            CallKind::Action => "action",
            CallKind::Approval => "approval",
        }
    }
}

/// Whether a call may be issued again when it was started but no result was recorded.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CallPolicy {
    /// Issuing it twice does no harm (or the receiver deduplicates by its idempotency key).
    Idempotent,
    /// It may have taken effect: never issued again without a human.
    #[default]
    Unsafe,
}

/// What an interrupted `unsafe` call does to its node.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OnInterrupted {
    /// The node fails with E0511.
    #[default]
    Fail,
    /// The run pauses before the node; resuming it (a human's go-ahead) issues the call again.
    Pause,
}

/// A call's declared policy (`hensu.toml` `[mcp.servers.X]`, `commands.yaml`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Declared {
    pub policy: CallPolicy,
    pub on_interrupted: OnInterrupted,
}

impl Declared {
    pub const IDEMPOTENT: Declared = Declared {
        policy: CallPolicy::Idempotent,
        on_interrupted: OnInterrupted::Fail,
    };
}

/// Where an entry is in its call's life.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CallPhase {
    /// About to be issued (written before the effect).
    Started,
    /// Its result, written before the result is used.
    Finished,
    /// An interrupted `unsafe` call held the run for a human; resuming issues it again.
    Held,
}

/// One entry of the journal, as a durable run's log keeps it (the output of a `journal` row).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JournalEntry {
    /// The node visit the call belongs to ([`in_visit`]).
    pub visit: String,
    /// The call's number in its visit.
    pub index: u32,
    pub kind: CallKind,
    /// The tool, command, handler or model.
    pub name: String,
    pub phase: CallPhase,
    /// The node making the call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// The recorded result ([`CallPhase::Finished`]), redacted as everything in the log.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// Whether the call succeeded ([`CallPhase::Finished`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ok: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
}

/// Where the journal is kept (a durable run: its run log, `hensu-host`'s `DurableRun`).
#[async_trait]
pub trait CallJournal: Send + Sync {
    /// The entries recorded for `visit` by an earlier run of the node, oldest first.
    async fn recorded(&self, visit: &str) -> Vec<JournalEntry>;
    /// Writes one entry durably; the call's effect is used only after it returns.
    async fn write(&self, entry: &JournalEntry) -> Result<(), String>;
}

/// A call's start and end as run events (tool-loop calls, commands, webhooks): never its
/// arguments or result.
#[derive(Clone, Debug, PartialEq)]
pub struct CallEvent<'a> {
    pub run_id: &'a str,
    pub node_id: &'a str,
    pub visit: &'a str,
    pub index: u32,
    pub kind: CallKind,
    pub name: &'a str,
    /// `None`: started; `Some(outcome)`: finished.
    pub finished: Option<CallOutcome>,
}

impl CallEvent<'_> {
    /// The `tool_call` line of a tool-loop call in an `--events` stream (docs/schemas/
    /// events.schema.json): node, branch, call number, tool and phase; when finished, its
    /// outcome, whether it was replayed from the journal, and its duration. `None` for calls
    /// that are not tools (commands and webhooks are `action_executed` events).
    pub fn to_json(&self) -> Option<Value> {
        if self.kind != CallKind::Tool {
            return None;
        }
        let mut v = serde_json::json!({
            "event": "tool_call",
            "node_id": self.node_id,
            "tool": self.name,
            "index": self.index,
            "phase": if self.finished.is_some() { "finished" } else { "started" },
        });
        if let Some((_, branch)) = self.visit.split_once('#') {
            let branch = branch.split_once('/').map_or(branch, |(b, _)| b);
            v["branch_id"] = Value::from(branch);
        }
        if let Some(done) = self.finished {
            v["ok"] = Value::from(done.ok);
            v["replayed"] = Value::from(done.replayed);
            v["duration_ms"] = Value::from(done.duration_ms);
        }
        Some(v)
    }
}

/// How a call ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CallOutcome {
    pub ok: bool,
    /// The result came from the journal (no call was made).
    pub replayed: bool,
    pub duration_ms: u64,
}

/// Receives [`CallEvent`]s (a run's listener: `ExecutionListener::call_observer`).
pub trait CallObserver: Send + Sync {
    fn on_call(&self, event: &CallEvent<'_>);
}

/// Several observers, each told every event.
pub struct Fanout(pub Vec<Arc<dyn CallObserver>>);

impl CallObserver for Fanout {
    fn on_call(&self, event: &CallEvent<'_>) {
        for o in &self.0 {
            o.on_call(event);
        }
    }
}

/// What a run's journal scopes share.
#[derive(Clone)]
pub struct JournalCtx {
    pub run_id: Arc<str>,
    pub journal: Option<Arc<dyn CallJournal>>,
    pub observer: Option<Arc<dyn CallObserver>>,
    /// The run's review handler, asked first to decide a gated tool call
    /// ([`approve_tool_call`]).
    pub approver: Option<Arc<dyn ReviewHandler>>,
}

/// One node visit: its id, its counter and what an earlier run recorded for it.
struct Visit {
    ctx: JournalCtx,
    node_id: Arc<str>,
    visit: Arc<str>,
    next: AtomicU32,
    replay: Mutex<HashMap<u32, Recorded>>,
    /// A visit of the main flow (not a branch, not a sub-workflow child): only there can an
    /// interrupted call hold the run (elsewhere it fails its node).
    root: bool,
    /// A node visit of a flow that can pause at it (the main flow, a sub-workflow child, a
    /// fork branch: [`in_visit`]), not a parallel branch's or a map item's call scope
    /// ([`in_nested`]): only there can a gated tool call wait for approval.
    pausable: bool,
    /// An interrupted `unsafe` call of this visit holds the run ([`OnInterrupted::Pause`]).
    held: AtomicBool,
    /// The decision a resume brought for the tool call this visit held for approval.
    answer: Mutex<Option<ToolDecision>>,
    /// A gated tool call of this visit waits for approval: the run pauses at it.
    approval: Mutex<Option<PendingApproval>>,
}

/// A gated tool call a visit holds for a reviewer (docs/mcp.md, *Tool approval*).
#[derive(Clone, Debug, PartialEq)]
pub struct PendingApproval {
    pub correlation_id: String,
    pub tool: String,
    pub arguments: Value,
}

/// How a visit ended for the run: whether an interrupted call holds the run, or a gated tool
/// call waits for approval (the run then pauses before the node either way).
#[derive(Debug, Default)]
pub struct VisitEnd {
    pub held: bool,
    pub approval: Option<PendingApproval>,
}

/// What the journal says about one call of the visit.
#[derive(Clone, Debug, Default)]
struct Recorded {
    started: bool,
    held: bool,
    /// What the hold recorded (a gated tool call: its correlation id and arguments).
    held_result: Option<Value>,
    finished: Option<JournalEntry>,
}

tokio::task_local! {
    static VISIT: Arc<Visit>;
}

impl Visit {
    async fn new(
        ctx: JournalCtx,
        node_id: &str,
        visit: String,
        (root, pausable): (bool, bool),
        answer: Option<ToolDecision>,
    ) -> Visit {
        let mut replay: HashMap<u32, Recorded> = HashMap::new();
        if let Some(j) = &ctx.journal {
            for e in j.recorded(&visit).await {
                let r = replay.entry(e.index).or_default();
                match e.phase {
                    // A start after a hold is the human's go-ahead being used: should it be
                    // interrupted too, the run holds again.
                    CallPhase::Started => {
                        r.started = true;
                        r.held = false;
                    }
                    CallPhase::Held => {
                        r.held = true;
                        r.held_result = e.result;
                    }
                    CallPhase::Finished => r.finished = Some(e),
                }
            }
        }
        Visit {
            ctx,
            node_id: Arc::from(node_id),
            visit: Arc::from(visit),
            next: AtomicU32::new(0),
            replay: Mutex::new(replay),
            root,
            pausable,
            held: AtomicBool::new(false),
            answer: Mutex::new(answer),
            approval: Mutex::new(None),
        }
    }
}

/// Runs `node` (one visit of node `node_id`, the run's `step`-th) as a journal scope. Inside a
/// visit (a sub-workflow child, a fork branch's flow) the id nests: `7/3`. `answer` is a
/// resume's decision for the tool call the visit held for approval. Also returns whether an
/// interrupted call of a main-flow visit holds the run, or a gated tool call (of any flow's
/// node visit) waits for approval: the flow then pauses before the node — a nested flow
/// suspends the run as a review inside it does — and resuming runs the node again.
pub async fn in_visit<F: Future>(
    ctx: JournalCtx,
    node_id: &str,
    step: u64,
    answer: Option<ToolDecision>,
    node: F,
) -> (F::Output, VisitEnd) {
    let (visit, root) = match VISIT.try_with(|v| v.visit.clone()) {
        Ok(outer) => (format!("{outer}/{step}"), false),
        Err(_) => (step.to_string(), true),
    };
    let scope = Arc::new(Visit::new(ctx, node_id, visit, (root, true), answer).await);
    let out = Box::pin(VISIT.scope(scope.clone(), node)).await;
    let end = VisitEnd {
        held: scope.held.load(Ordering::SeqCst),
        approval: scope.approval.lock().ok().and_then(|mut a| a.take()),
    };
    (out, end)
}

/// Runs `flow` (a parallel branch, a fork branch) as a visit of its own inside the current
/// one: its calls are numbered apart (`7#branch`). Outside a visit, runs it as it is.
pub async fn in_nested<F: Future>(segment: &str, flow: F) -> F::Output {
    let outer = VISIT.try_with(|v| {
        let visit = format!("{}#{}", v.visit, key_safe(segment));
        (v.ctx.clone(), v.node_id.clone(), visit)
    });
    match outer {
        Ok((ctx, node_id, visit)) => {
            let scope = Arc::new(Visit::new(ctx, &node_id, visit, (false, false), None).await);
            Box::pin(VISIT.scope(scope, flow)).await
        }
        Err(_) => flow.await,
    }
}

/// Characters a key keeps (an HTTP header value, an environment value): ASCII letters,
/// digits, `-`, `_`, `.`; anything else becomes `_`.
fn key_safe(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// One call being made: its number and idempotency key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallSlot {
    pub index: u32,
    /// `hensu:<run>:<visit>:<index>`, the same when the node runs again.
    pub key: String,
}

/// The next call of visit `v`.
fn slot(v: &Visit) -> CallSlot {
    let index = v.next.fetch_add(1, Ordering::SeqCst);
    CallSlot {
        index,
        key: format!(
            "hensu:{}:{}:{index}",
            key_safe(&v.ctx.run_id),
            key_safe(&v.visit)
        ),
    }
}

/// A journaled call could not go on.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum CallError {
    /// E0511: an `unsafe` call was started by an earlier run of the node and has no
    /// recorded result; its policy forbids issuing it again.
    #[error(
        "error[E0511]: {kind} call '{name}' (call {index} of node '{node}') was started before the run stopped and has no recorded result; its policy is `unsafe`, so it is not issued again (it may have taken effect). Check the outside system, then declare it `idempotent` or redrive the run (docs/diagnostics/E0511.md)",
        kind = .kind.as_str()
    )]
    Interrupted {
        kind: CallKind,
        name: String,
        node: String,
        index: u32,
    },
    /// The same, with `on_interrupted = "pause"`: the run pauses before the node.
    #[error(
        "error[E0511]: {kind} call '{name}' (call {index} of node '{node}') was started before the run stopped and has no recorded result; the run pauses for a human (resume it to issue the call again)",
        kind = .kind.as_str()
    )]
    Held {
        kind: CallKind,
        name: String,
        node: String,
        index: u32,
    },
    /// E0512: the node asked for another call than the one recorded at this place.
    #[error(
        "error[E0512]: call {index} of node '{node}' is {kind} '{name}' now but was {was} before the run stopped: the node no longer makes the calls its journal recorded (docs/diagnostics/E0512.md)",
        kind = .kind.as_str()
    )]
    Diverged {
        kind: CallKind,
        name: String,
        node: String,
        index: u32,
        was: String,
    },
    /// The journal could not be written (the store failed): the effect was not used.
    #[error("the call journal could not be written: {0}")]
    Journal(String),
    /// A gated tool call waits for a reviewer: the run pauses at it (docs/mcp.md, *Tool
    /// approval*).
    #[error(
        "tool call '{tool}' (call {index} of node '{node}') waits for approval (correlation id `{correlation_id}`)"
    )]
    AwaitingApproval {
        tool: String,
        node: String,
        index: u32,
        correlation_id: String,
    },
    /// E0520: a gated tool call where the run cannot pause for a reviewer.
    #[error(
        "error[E0520]: tool '{tool}' requires approval (`require_approval` in hensu.toml), but node '{node}' calls it {why}, where the run cannot pause for a reviewer (docs/diagnostics/E0520.md)"
    )]
    ApprovalUnavailable {
        tool: String,
        node: String,
        why: &'static str,
    },
}

impl CallError {
    /// The `errorType` of a node failed by this error.
    pub fn kind(&self) -> &'static str {
        match self {
            CallError::Interrupted { .. } => "interrupted_call",
            CallError::Held { .. } => HELD_KIND,
            CallError::Diverged { .. } => "journal_diverged",
            CallError::Journal(_) => "journal",
            CallError::AwaitingApproval { .. } => APPROVAL_KIND,
            CallError::ApprovalUnavailable { .. } => "tool_approval_unavailable",
        }
    }
}

/// The `errorType` of a node whose interrupted call holds the run (the run loop pauses).
pub const HELD_KIND: &str = "interrupted_call_held";

/// The `errorType` of a node whose gated tool call waits for approval (the run loop pauses).
pub const APPROVAL_KIND: &str = "tool_approval_pending";

/// A call to make: its kind, name and declared policy.
#[derive(Clone, Copy, Debug)]
pub struct CallSpec<'a> {
    pub kind: CallKind,
    pub name: &'a str,
    pub declared: Declared,
}

/// A journaled call's failure: the effect's own error, or the journal's.
#[derive(Debug)]
pub enum Journaled<E> {
    Effect(E),
    Call(CallError),
}

/// Makes one call of the current visit through the journal: a result recorded by an earlier
/// run of the node is returned as it is (the effect does not run); otherwise the start is
/// journaled (for a call other than a model request), the effect runs with the call's slot,
/// and an `Ok` result is journaled before it is returned. An `Err` of the effect (a failed
/// model request, a cancelled tool) is not recorded. Outside a visit the effect just runs.
pub async fn journaled<T, E, F, Fut>(spec: CallSpec<'_>, effect: F) -> Result<T, Journaled<E>>
where
    T: Serialize + serde::de::DeserializeOwned,
    F: FnOnce(Option<CallSlot>) -> Fut,
    Fut: Future<Output = Result<(T, bool), E>>,
{
    let Ok(visit) = VISIT.try_with(Clone::clone) else {
        return effect(None)
            .await
            .map(|(t, _)| t)
            .map_err(Journaled::Effect);
    };
    let slot = slot(&visit);
    let recorded = visit
        .replay
        .lock()
        .ok()
        .and_then(|mut r| r.remove(&slot.index))
        .unwrap_or_default();
    let entry = |phase: CallPhase| JournalEntry {
        visit: visit.visit.to_string(),
        index: slot.index,
        kind: spec.kind,
        name: spec.name.to_string(),
        phase,
        node: Some(visit.node_id.to_string()),
        result: None,
        ok: None,
        duration_ms: None,
    };
    if let Some(done) = recorded.finished {
        if done.kind != spec.kind || done.name != spec.name {
            return Err(Journaled::Call(CallError::Diverged {
                kind: spec.kind,
                name: spec.name.to_string(),
                node: visit.node_id.to_string(),
                index: slot.index,
                was: format!("{} '{}'", done.kind.as_str(), done.name),
            }));
        }
        if let Some(value) = done.result
            && let Ok(t) = serde_json::from_value::<T>(value)
        {
            visit.observe(&slot, &spec, None);
            let outcome = CallOutcome {
                ok: done.ok.unwrap_or(true),
                replayed: true,
                duration_ms: 0,
            };
            visit.observe(&slot, &spec, Some(outcome));
            return Ok(t);
        }
    }
    if recorded.started && !recorded.held && spec.declared.policy == CallPolicy::Unsafe {
        let (name, node) = (spec.name.to_string(), visit.node_id.to_string());
        // Only a main-flow visit can hold the run; elsewhere (a branch, a child) the call
        // fails its node.
        let hold = spec.declared.on_interrupted == OnInterrupted::Pause && visit.root;
        let err = match hold {
            false => CallError::Interrupted {
                kind: spec.kind,
                name,
                node,
                index: slot.index,
            },
            true => {
                visit.write(&entry(CallPhase::Held)).await?;
                visit.held.store(true, Ordering::SeqCst);
                CallError::Held {
                    kind: spec.kind,
                    name,
                    node,
                    index: slot.index,
                }
            }
        };
        return Err(Journaled::Call(err));
    }
    if spec.kind != CallKind::Model {
        visit.write(&entry(CallPhase::Started)).await?;
    }
    visit.observe(&slot, &spec, None);
    let started = Instant::now();
    let (result, ok) = effect(Some(slot.clone()))
        .await
        .map_err(Journaled::Effect)?;
    let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    if visit.ctx.journal.is_some() {
        let value = serde_json::to_value(&result)
            .map_err(|e| Journaled::Call(CallError::Journal(e.to_string())))?;
        let mut done = entry(CallPhase::Finished);
        done.result = Some(value);
        done.ok = Some(ok);
        done.duration_ms = Some(duration_ms);
        visit.write(&done).await?;
    }
    let outcome = CallOutcome {
        ok,
        replayed: false,
        duration_ms,
    };
    visit.observe(&slot, &spec, Some(outcome));
    Ok(result)
}

impl Visit {
    async fn write<E>(&self, entry: &JournalEntry) -> Result<(), Journaled<E>> {
        match &self.ctx.journal {
            Some(j) => j
                .write(entry)
                .await
                .map_err(|e| Journaled::Call(CallError::Journal(e))),
            None => Ok(()),
        }
    }

    fn observe(&self, slot: &CallSlot, spec: &CallSpec<'_>, finished: Option<CallOutcome>) {
        if spec.kind == CallKind::Model {
            return;
        }
        if let Some(o) = &self.ctx.observer {
            o.on_call(&CallEvent {
                run_id: &self.ctx.run_id,
                node_id: &self.node_id,
                visit: &self.visit,
                index: slot.index,
                kind: spec.kind,
                name: spec.name,
                finished,
            });
        }
    }
}

/// Whether the current task is inside a node visit (calls are numbered and keyed).
pub fn in_scope() -> bool {
    VISIT.try_with(|_| ()).is_ok()
}
