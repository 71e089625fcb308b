//! Executions: start, status, list, paused, result, resume, cancel. A foreign tenant's
//! execution is indistinguishable from an unknown one: 404 everywhere.

use std::sync::Arc;

use hensu_runtime::{Context, ReviewDecision};
use hensu_store::{CancelRequest, LogEntry, RunRecord, RunStatus};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use utoipa::ToSchema;

use crate::AppState;
use crate::auth::Tenant;
use crate::error::{ApiError, ApiResult};
use crate::exec::{ResumeInput, StartRequest, stored_workflow};
use crate::validate::check_id;

/// The status of an execution.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ExecutionState {
    /// Stored for a worker and not claimed yet.
    Queued,
    Running,
    /// Waiting for a review decision or an external answer.
    Paused,
    Completed,
    Failed,
    Rejected,
    Cancelled,
}

impl From<RunStatus> for ExecutionState {
    fn from(s: RunStatus) -> ExecutionState {
        match s {
            RunStatus::Queued => ExecutionState::Queued,
            RunStatus::Running => ExecutionState::Running,
            RunStatus::Paused => ExecutionState::Paused,
            RunStatus::Completed => ExecutionState::Completed,
            RunStatus::Failed => ExecutionState::Failed,
            RunStatus::Rejected => ExecutionState::Rejected,
            RunStatus::Cancelled => ExecutionState::Cancelled,
        }
    }
}

/// `POST /api/v1/executions`: which workflow to run, and its initial context.
#[derive(Clone, Debug, Default, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct StartExecution {
    /// A workflow the tenant pushed (required).
    pub workflow_id: Option<String>,
    /// The initial context (the workflow's inputs and anything else).
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    pub context: Option<Map<String, Value>>,
    /// The `Idempotency-Key` header (checked by [`check_idempotency_key`]); not in the body.
    #[serde(skip)]
    #[schema(ignore)]
    pub idempotency_key: Option<String>,
    /// The W3C `traceparent` header: the run's trace joins the caller's. Not in the body.
    #[serde(skip)]
    #[schema(ignore)]
    pub traceparent: Option<String>,
    /// Signal-with-start (a hensu addition; docs/language.md, *Timers and signals*): signals
    /// sent to the new execution as it starts, each checked like `POST …/signals/{name}`
    /// before anything is stored.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub signals: Vec<crate::service::signal_rules::StartSignal>,
}

/// The rule of an `Idempotency-Key`: 1 to 255 visible ASCII characters, else 400
/// `invalid_idempotency_key` (docs/server.md, *Idempotent starts*).
pub fn check_idempotency_key(key: &[u8]) -> ApiResult<String> {
    let visible = key.iter().all(|b| (0x21..=0x7e).contains(b));
    match std::str::from_utf8(key) {
        Ok(k) if !k.is_empty() && k.len() <= 255 && visible => Ok(k.to_string()),
        _ => Err(ApiError::bad_request(
            "Idempotency-Key: must be 1 to 255 visible ASCII characters (no spaces)",
        )
        .with_code("invalid_idempotency_key")),
    }
}

/// `v` with every object's keys sorted (at every level): two bodies that differ only in key
/// order are one request.
fn canonical(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            Value::Object(
                keys.into_iter()
                    .map(|k| (k.clone(), canonical(&m[k])))
                    .collect(),
            )
        }
        Value::Array(a) => Value::Array(a.iter().map(canonical).collect()),
        other => other.clone(),
    }
}

/// The digest that tells a retried start from another request under the same key: the
/// workflow id and the context, key order aside.
pub(crate) fn request_hash(
    workflow_id: &str,
    context: &Option<Map<String, Value>>,
    signals: &[crate::service::signal_rules::StartSignal],
) -> String {
    let context = context.clone().map(Value::Object).unwrap_or(Value::Null);
    let mut body = serde_json::json!({"workflowId": workflow_id, "context": canonical(&context)});
    // Only a start with signals hashes them: every other start keeps its hash.
    if !signals.is_empty()
        && let (Some(o), Ok(s)) = (body.as_object_mut(), serde_json::to_value(signals))
    {
        o.insert("signals".into(), canonical(&s));
    }
    hensu_host::launch::content_hash(body.to_string().as_bytes())
}

impl StartExecution {
    /// A start of `workflow_id` with `context`.
    pub fn new(workflow_id: impl Into<String>, context: Context) -> StartExecution {
        StartExecution {
            workflow_id: Some(workflow_id.into()),
            context: Some(context.into_iter().collect()),
            idempotency_key: None,
            traceparent: None,
            signals: Vec::new(),
        }
    }

    /// The request of a body: the context's bounds are checked on the text before anything
    /// of it is built (413 `context_too_large`, 400 `context_too_deep`), then it is parsed.
    pub fn from_body(
        body: &[u8],
        bounds: crate::validate::ContextBounds,
    ) -> ApiResult<StartExecution> {
        bounds.check_start_body(body)?;
        let value: Value = serde_json::from_slice(body)
            .map_err(|e| ApiError::bad_request(format!("malformed JSON: {e}")))?;
        StartExecution::from_json(value)
    }

    /// The request of a JSON body (`null` is refused, as upstream).
    pub fn from_json(body: Value) -> ApiResult<StartExecution> {
        if body.is_null() {
            return Err(ApiError::bad_request("request: must not be null"));
        }
        serde_json::from_value(body)
            .map_err(|e| ApiError::bad_request(format!("malformed JSON: {e}")))
    }
}

/// A started execution (202); it runs on in the background.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExecutionStarted {
    pub execution_id: String,
    pub workflow_id: String,
    /// An `Idempotency-Key` had started this execution already (answered 200, not 202).
    #[serde(skip)]
    #[schema(ignore)]
    pub replayed: bool,
}

/// The status of one execution.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExecutionStatus {
    pub execution_id: String,
    pub workflow_id: String,
    pub status: ExecutionState,
    /// The write sequence number (+1 on every checkpoint or status change).
    pub step: u64,
    /// RFC 3339, UTC.
    pub started_at: String,
    pub updated_at: String,
    /// The node executed next (or the end node reached).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_node_id: Option<String>,
    /// The review a paused execution waits for (the resume's `correlationId`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub correlation_id: Option<String>,
    /// The end node's exit status (`SUCCESS` / `FAILURE`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_status: Option<String>,
    /// A cancellation was requested; the running owner stops at its next node boundary.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cancel_requested: bool,
    /// Why a failed execution failed, as on its result (only on the status of one execution;
    /// a hensu addition).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// A paused execution waiting at a `wait` or `awaitSignal` node: the signal it waits for
    /// (the first, when its fork branches or sub-workflow children wait for several;
    /// docs/language.md, *Timers and signals*; a hensu addition).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waiting_for: Option<String>,
    /// When such an execution continues without its signal (RFC 3339, UTC): the earliest wake
    /// time of its waits and review deadlines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wake_at: Option<String>,
}

impl From<&RunRecord> for ExecutionStatus {
    fn from(r: &RunRecord) -> ExecutionStatus {
        ExecutionStatus {
            execution_id: r.run_id.clone(),
            workflow_id: r.workflow_id.clone(),
            status: r.status.into(),
            step: r.step,
            started_at: hensu_store::rfc3339(r.started_at),
            updated_at: hensu_store::rfc3339(r.updated_at),
            current_node_id: r.current_node.clone(),
            correlation_id: r.correlation_id.clone(),
            exit_status: r.exit_status.clone(),
            cancel_requested: r.cancel_requested,
            error: None,
            waiting_for: r.wait.as_ref().and_then(|w| w.signal.clone()),
            wake_at: r
                .wait
                .as_ref()
                .and_then(|w| w.wake_at)
                .map(hensu_store::rfc3339),
        }
    }
}

/// A paused execution (`GET /api/v1/executions/paused`).
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PausedExecution {
    pub execution_id: String,
    pub workflow_id: String,
    /// When the execution started (RFC 3339, UTC).
    pub created_at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_node_id: Option<String>,
    /// Present when it waits for a review (absent: an external answer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub correlation_id: Option<String>,
}

/// The result of an execution: its status and public context.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExecutionResult {
    pub execution_id: String,
    pub workflow_id: String,
    pub status: ExecutionState,
    /// The context, engine keys (starting with `_`) removed.
    #[schema(value_type = Object)]
    pub output: Value,
    /// Why a failed execution failed (the error `hensuc run` prints; a hensu addition).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Why the run whose snapshot is `state` failed, if it did (its `failure` field: the message
/// with its cause).
pub fn failure_message(state: &Value) -> Option<String> {
    let failure: hensu_runtime::RunFailure =
        serde_json::from_value(state.get("failure")?.clone()).ok()?;
    Some(failure.describe())
}

/// What a resume, cancel or pause did.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Acknowledged {
    /// Resumed (202): the execution continues in the background.
    Resumed,
    /// Cancelled at once (200).
    Cancelled,
    /// Cancellation requested (202): the running owner stops at its next node boundary.
    Cancelling,
    /// Pause requested (202): whoever executes the run saves it `paused` at its next node
    /// boundary.
    Pausing,
    /// Paused already (200): for a review or an earlier pause; nothing changed.
    Paused,
}

/// The answer of a resume, cancel or pause.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExecutionAck {
    pub status: Acknowledged,
    pub execution_id: String,
}

/// `POST /api/v1/executions/{executionId}/resume`: a review decision, or a plain resume with
/// optional context edits. Unknown fields are refused.
#[derive(Clone, Debug, Default, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ResumeExecution {
    /// The review being answered (required with a decision).
    pub correlation_id: Option<String>,
    /// `approve`, `reject` or `backtrack`.
    pub decision: Option<String>,
    /// Feedback of a rejection or a backtrack.
    pub reason: Option<String>,
    /// The node a backtrack goes back to (required for `backtrack`).
    pub target_step: Option<String>,
    /// Context entries: merged before a plain resume, or given with an approve / backtrack.
    #[schema(value_type = Option<Object>)]
    pub context_edits: Option<Map<String, Value>>,
    /// The edited arguments of a gated tool call being approved (a JSON object replacing the
    /// model's; docs/mcp.md, *Tool approval*). Only with `approve` of a tool-call review.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub arguments: Option<Map<String, Value>>,
}

const RESUME_FIELDS: [&str; 6] = [
    "correlationId",
    "decision",
    "reason",
    "targetStep",
    "contextEdits",
    "arguments",
];

impl ResumeExecution {
    /// The request of a resume body (empty: a plain resume), with the upstream messages for
    /// unknown fields and wrong types.
    pub fn from_body(body: &[u8]) -> ApiResult<ResumeExecution> {
        if body.iter().all(u8::is_ascii_whitespace) {
            return Ok(ResumeExecution::default());
        }
        let raw: Value = serde_json::from_slice(body)
            .map_err(|e| ApiError::bad_request(format!("malformed JSON: {e}")))?;
        ResumeExecution::from_json(&raw)
    }

    /// [`ResumeExecution::from_body`] of a parsed body.
    pub fn from_json(body: &Value) -> ApiResult<ResumeExecution> {
        let empty = Map::new();
        let obj = match body {
            Value::Null => &empty,
            Value::Object(o) => o,
            _ => {
                return Err(ApiError::bad_request(
                    "the resume body must be a JSON object",
                ));
            }
        };
        let unknown: Vec<&str> = obj
            .keys()
            .map(String::as_str)
            .filter(|k| !RESUME_FIELDS.contains(k))
            .collect();
        if !unknown.is_empty() {
            return Err(ApiError::bad_request(format!(
                "Unrecognized field(s) in resume request: {}. Expected {}.",
                unknown.join(", "),
                RESUME_FIELDS.join(", ")
            )));
        }
        let text = |k: &str| -> ApiResult<Option<String>> {
            match obj.get(k) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.clone())),
                Some(_) => Err(ApiError::bad_request(format!("{k} must be a string"))),
            }
        };
        let correlation_id = text("correlationId")?;
        let reason = text("reason")?;
        let target_step = text("targetStep")?;
        let context_edits = match obj.get("contextEdits") {
            None | Some(Value::Null) => None,
            Some(Value::Object(m)) => Some(m.clone()),
            Some(_) => return Err(ApiError::bad_request("contextEdits must be an object")),
        };
        let arguments = match obj.get("arguments") {
            None | Some(Value::Null) => None,
            Some(Value::Object(m)) => Some(m.clone()),
            Some(_) => {
                return Err(ApiError::bad_request(
                    "arguments must be an object (the edited arguments of a tool call)",
                ));
            }
        };
        Ok(ResumeExecution {
            correlation_id,
            decision: text("decision")?,
            reason,
            target_step,
            context_edits,
            arguments,
        })
    }

    /// The engine's input (the upstream rules: a decision needs the review's correlation id,
    /// a backtrack its target).
    pub fn into_input(self) -> ApiResult<ResumeInput> {
        let correlation_id = self.correlation_id.filter(|c| !c.trim().is_empty());
        let edits: Option<Context> = self
            .context_edits
            .map(|m| m.into_iter().collect::<Context>())
            .filter(|e| !e.is_empty());
        let arguments_given = self.arguments.is_some();
        let Some(decision) = self.decision else {
            if arguments_given {
                return Err(ApiError::bad_request(
                    "arguments answer a tool-call review: give them with decision approve",
                ));
            }
            return Ok(ResumeInput {
                correlation_id,
                decision: None,
                context_edits: edits,
                arguments_given,
            });
        };
        if arguments_given && (decision != "approve" || edits.is_some()) {
            return Err(ApiError::bad_request(
                "arguments go with decision approve of a tool-call review, without contextEdits",
            ));
        }
        if correlation_id.is_none() {
            return Err(ApiError::bad_request(
                "correlationId is required when a review decision is submitted",
            ));
        }
        let decision = match decision.as_str() {
            "approve" => ReviewDecision::Approve {
                edits: match self.arguments {
                    Some(a) => Some(a.into_iter().collect()),
                    None => edits,
                },
            },
            "reject" => ReviewDecision::Reject {
                reason: self.reason.unwrap_or_else(|| "Rejected via API".into()),
            },
            "backtrack" => ReviewDecision::Backtrack {
                target: self.target_step.ok_or_else(|| {
                    ApiError::bad_request("targetStep is required for backtrack decisions")
                })?,
                edits,
                reason: self.reason.unwrap_or_else(|| "Backtrack via API".into()),
            },
            other => {
                let shown: String = other.chars().take(64).collect();
                return Err(ApiError::bad_request(format!(
                    "Invalid decision: {shown}. Must be approve, reject, or backtrack."
                )));
            }
        };
        Ok(ResumeInput {
            correlation_id,
            decision: Some(decision),
            context_edits: None,
            arguments_given,
        })
    }
}

/// The public context of a snapshot: engine keys (`_…`) removed, nulls kept.
pub fn public_context(state: &Value) -> Value {
    let mut out = Map::new();
    if let Some(ctx) = state.get("context").and_then(Value::as_object) {
        for (k, v) in ctx {
            if !k.starts_with('_') {
                out.insert(k.clone(), v.clone());
            }
        }
    }
    Value::Object(out)
}

/// The record of `run_id` if it belongs to `tenant`; 404 otherwise.
pub async fn owned_record(app: &AppState, tenant: &Tenant, run_id: &str) -> ApiResult<RunRecord> {
    check_id("executionId", run_id)?;
    match app.registry.run_tenant(run_id).await? {
        Some(owner) if owner == tenant.tenant_id => {}
        _ => return Err(ApiError::not_found()),
    }
    match app.store.record(run_id).await {
        Ok(r) => Ok(r),
        Err(hensu_store::StoreError::NotFound { .. }) => Err(ApiError::not_found()),
        Err(e) => Err(e.into()),
    }
}

/// Starts an execution of one of the tenant's workflows; it runs on in the background.
pub async fn start(
    app: &AppState,
    tenant: &Tenant,
    request: StartExecution,
) -> ApiResult<ExecutionStarted> {
    let workflow_id = request
        .workflow_id
        .filter(|w| !w.trim().is_empty())
        .ok_or_else(|| ApiError::bad_request("workflowId: workflowId is required"))?;
    check_id("workflowId", &workflow_id)?;
    if let Some(context) = &request.context {
        crate::validate::ContextBounds::from(app.limits.as_ref()).check_context(context)?;
    }
    let reg = app.registry.as_ref();
    let stored = reg
        .get_workflow(&tenant.tenant_id, &workflow_id)
        .await?
        .ok_or_else(ApiError::not_found)?;
    let workflow = hensu_ir::from_json(&stored.definition.to_string())
        .map_err(|e| ApiError::internal(format!("stored workflow does not load: {e:?}")))?;
    let repository = crate::subflows::repository(reg, &tenant.tenant_id, &workflow).await?;
    let idempotency = request
        .idempotency_key
        .as_deref()
        .map(|k| -> ApiResult<hensu_store::IdempotencyKey> {
            Ok(hensu_store::IdempotencyKey {
                key: check_idempotency_key(k.as_bytes())?,
                request_hash: request_hash(&workflow_id, &request.context, &request.signals),
            })
        })
        .transpose()?;
    let context: Context = request.context.unwrap_or_default().into_iter().collect();
    refuse_bad_inputs(&workflow, &context)?;
    crate::service::signal_rules::check_start_signals(&workflow, &repository, &request.signals)?;
    let signals = request.signals;
    // A malformed header is ignored, as the W3C trace context asks of a receiver.
    let traceparent = request
        .traceparent
        .filter(|t| hensu_telemetry::ids::parse_traceparent(t).is_some());
    let started = app
        .executor
        .start(StartRequest {
            tenant: tenant.tenant_id.clone(),
            workflow: Arc::new(workflow),
            context,
            repository,
            idempotency,
            traceparent: traceparent.clone(),
        })
        .await?;
    // In the run's log span: the line carries the run's trace ids (docs/observability.md).
    hensu_host::launch::telemetry::log_span(
        &started.run_id,
        Some(&tenant.tenant_id),
        traceparent.as_deref(),
    )
    .in_scope(|| {
        tracing::info!(
            workflow = workflow_id,
            replayed = started.replayed,
            "execution started"
        );
    });
    // A replayed start sent its signals the first time.
    if !started.replayed {
        crate::service::signal_rules::send_start_signals(app, &started.run_id, signals).await;
    }
    Ok(ExecutionStarted {
        execution_id: started.run_id,
        workflow_id,
        replayed: started.replayed,
    })
}

/// A start whose inputs the workflow's state schema refuses is a 400 with the error
/// `hensuc run` fails with (the same rule, `hensu_runtime::inputs::input_error`), plus how to
/// give the missing ones; nothing is stored.
pub(crate) fn refuse_bad_inputs(workflow: &hensu_ir::Workflow, context: &Context) -> ApiResult<()> {
    let Some(schema) = &workflow.state_schema else {
        return Ok(());
    };
    let Some(e) = hensu_runtime::inputs::input_error(schema, context) else {
        return Ok(());
    };
    let hint = match &e {
        hensu_runtime::RuntimeError::MissingInputs { names } => {
            let example: Vec<String> = names.iter().map(|n| format!("\"{n}\": \"…\"")).collect();
            format!(
                " (give them in the start's \"context\": {{{}}})",
                example.join(", ")
            )
        }
        _ => String::new(),
    };
    Err(ApiError::bad_request(format!("{e}{hint}")))
}

/// The status of one execution.
pub async fn status(app: &AppState, tenant: &Tenant, run_id: &str) -> ApiResult<ExecutionStatus> {
    let record = owned_record(app, tenant, run_id).await?;
    let mut status = ExecutionStatus::from(&record);
    // Only a failed run has a reason, and only its snapshot holds it.
    if record.status == RunStatus::Failed {
        status.error = failure_message(&app.store.load(run_id).await?.snapshot);
    }
    Ok(status)
}

/// The status and public context of one execution.
pub async fn result(app: &AppState, tenant: &Tenant, run_id: &str) -> ApiResult<ExecutionResult> {
    let r = owned_record(app, tenant, run_id).await?;
    let stored = app.store.load(run_id).await?;
    Ok(ExecutionResult {
        execution_id: r.run_id,
        workflow_id: r.workflow_id,
        status: r.status.into(),
        output: public_context(&stored.snapshot),
        error: failure_message(&stored.snapshot),
    })
}

/// Resumes a paused execution (a review decision or a plain resume); it continues in the
/// background.
pub async fn resume(
    app: &AppState,
    tenant: &Tenant,
    run_id: &str,
    request: ResumeExecution,
) -> ApiResult<ExecutionAck> {
    check_id("executionId", run_id)?;
    let input = request.into_input()?;
    owned_record(app, tenant, run_id).await?;
    let stored = app.store.load(run_id).await?;
    let wf = stored_workflow(run_id, &stored.workflow).map_err(ApiError::internal)?;
    let repository =
        crate::subflows::repository(app.registry.as_ref(), &tenant.tenant_id, &wf).await?;
    app.executor.resume(run_id, input, repository).await?;
    Ok(ExecutionAck {
        status: Acknowledged::Resumed,
        execution_id: run_id.to_string(),
    })
}

/// Cancels an execution: at once when idle (`cancelled`), at the running owner's next node
/// boundary (`cancelling`); 409 when it had ended.
pub async fn cancel(app: &AppState, tenant: &Tenant, run_id: &str) -> ApiResult<ExecutionAck> {
    owned_record(app, tenant, run_id).await?;
    let status = match app.executor.cancel(run_id).await? {
        CancelRequest::Cancelled(_) => Acknowledged::Cancelled,
        CancelRequest::Requested { .. } => Acknowledged::Cancelling,
        CancelRequest::AlreadyFinished(s) => {
            return Err(ApiError::conflict(format!(
                "execution {run_id} has already ended ({s})"
            )));
        }
    };
    Ok(ExecutionAck {
        status,
        execution_id: run_id.to_string(),
    })
}

/// Everything stored about one execution (the console's execution and review pages).
pub struct RunDetail {
    pub record: RunRecord,
    /// The workflow stored with the run (the `hensu-wire` envelope).
    pub workflow: Value,
    /// The latest snapshot of the run's state.
    pub snapshot: Value,
    /// The run log, oldest first, at most the limit asked for.
    pub log: Vec<LogEntry>,
}

/// The record, stored workflow, snapshot and first `log_limit` log rows of one execution.
pub async fn detail(
    app: &AppState,
    tenant: &Tenant,
    run_id: &str,
    log_limit: usize,
) -> ApiResult<RunDetail> {
    let record = owned_record(app, tenant, run_id).await?;
    let stored = app.store.load(run_id).await?;
    let log = app.store.read_log(run_id, 0, log_limit).await?;
    Ok(RunDetail {
        record,
        workflow: stored.workflow,
        snapshot: stored.snapshot,
        log,
    })
}
