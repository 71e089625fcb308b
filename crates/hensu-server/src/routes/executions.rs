//! `/api/v1/executions`: start, status, resume, cancel, paused, result, and the SSE streams.
//! A foreign tenant's execution is indistinguishable from an unknown one: 404 everywhere.

use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::sse::{KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use hensu_runtime::{Context, ReviewDecision};
use hensu_store::{CancelRequest, RunRecord, RunStatus};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::AppState;
use crate::auth::Tenant;
use crate::error::{ApiError, ApiResult};
use crate::events::{execution_stream, public_context, tenant_stream};
use crate::exec::{ResumeInput, StartRequest, stored_workflow};
use crate::validate::check_id;

/// The record of `run_id` if it belongs to `tenant`; 404 otherwise.
pub async fn owned_record(app: &AppState, tenant: &Tenant, run_id: &str) -> ApiResult<RunRecord> {
    check_id("executionId", run_id)?;
    let (reg, store) = (app.registry.clone(), app.store.clone());
    let (id, t) = (run_id.to_string(), tenant.tenant_id.clone());
    tokio::task::spawn_blocking(move || -> ApiResult<RunRecord> {
        match reg.run_tenant(&id)? {
            Some(owner) if owner == t => {}
            _ => return Err(ApiError::not_found()),
        }
        match store.record(&id) {
            Ok(r) => Ok(r),
            Err(hensu_store::StoreError::NotFound { .. }) => Err(ApiError::not_found()),
            Err(e) => Err(e.into()),
        }
    })
    .await
    .map_err(ApiError::internal)?
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StartBody {
    workflow_id: Option<String>,
    #[serde(default)]
    context: Option<Map<String, Value>>,
}

/// Start: 202 `{executionId, workflowId}`; the run continues in the background.
#[utoipa::path(post, path = "/api/v1/executions", tag = "executions",
    responses((status = 202, description = "started"), (status = 400, description = "bad input"),
              (status = 404, description = "unknown workflow")))]
pub async fn start(
    State(app): State<AppState>,
    tenant: Tenant,
    body: Result<Json<Value>, axum::extract::rejection::JsonRejection>,
) -> ApiResult<Response> {
    let Json(raw) = body?;
    if raw.is_null() {
        return Err(ApiError::bad_request("request: must not be null"));
    }
    let body: StartBody = serde_json::from_value(raw)
        .map_err(|e| ApiError::bad_request(format!("malformed JSON: {e}")))?;
    let workflow_id = body
        .workflow_id
        .filter(|w| !w.trim().is_empty())
        .ok_or_else(|| ApiError::bad_request("workflowId: workflowId is required"))?;
    check_id("workflowId", &workflow_id)?;
    let reg = app.registry.clone();
    let (t, w) = (tenant.tenant_id.clone(), workflow_id.clone());
    let (workflow, definition, repository) =
        tokio::task::spawn_blocking(move || -> ApiResult<_> {
            let stored = reg.get_workflow(&t, &w)?.ok_or_else(ApiError::not_found)?;
            let wf = hensu_ir::from_json(&stored.definition.to_string())
                .map_err(|e| ApiError::internal(format!("stored workflow does not load: {e:?}")))?;
            let repo = crate::subflows::repository(reg.as_ref(), &t, &wf)?;
            Ok((wf, stored.definition, repo))
        })
        .await
        .map_err(ApiError::internal)??;
    let mut context = Context::default();
    for (k, v) in body.context.unwrap_or_default() {
        context.insert(k, v);
    }
    let run_id = app
        .executor
        .start(StartRequest {
            tenant: tenant.tenant_id.clone(),
            workflow: Arc::new(workflow),
            definition,
            context,
            repository,
        })
        .await?;
    tracing::info!(
        tenant = tenant.tenant_id,
        run_id,
        workflow = workflow_id,
        "execution started"
    );
    Ok((
        StatusCode::ACCEPTED,
        Json(json!({"executionId": run_id, "workflowId": workflow_id})),
    )
        .into_response())
}

fn status_body(r: &RunRecord) -> Value {
    let mut v = json!({"executionId": r.run_id, "workflowId": r.workflow_id,
        "status": r.status.as_str(), "step": r.step,
        "startedAt": hensu_store::rfc3339(r.started_at),
        "updatedAt": hensu_store::rfc3339(r.updated_at)});
    if let Some(obj) = v.as_object_mut() {
        if let Some(n) = &r.current_node {
            obj.insert("currentNodeId".into(), json!(n));
        }
        if let Some(c) = &r.correlation_id {
            obj.insert("correlationId".into(), json!(c));
        }
        if let Some(x) = &r.exit_status {
            obj.insert("exitStatus".into(), json!(x));
        }
        if r.cancel_requested {
            obj.insert("cancelRequested".into(), json!(true));
        }
    }
    v
}

/// Status: the real status (running, paused, completed, failed, rejected, cancelled).
#[utoipa::path(get, path = "/api/v1/executions/{executionId}", tag = "executions",
    params(("executionId" = String, Path)),
    responses((status = 200, description = "status"), (status = 404, description = "unknown")))]
pub async fn status(
    State(app): State<AppState>,
    tenant: Tenant,
    Path(id): Path<String>,
) -> ApiResult<Json<Value>> {
    let r = owned_record(&app, &tenant, &id).await?;
    Ok(Json(status_body(&r)))
}

/// All executions of the tenant, newest first (a hensu addition).
#[utoipa::path(get, path = "/api/v1/executions", tag = "executions",
    responses((status = 200, description = "the tenant's executions")))]
pub async fn list(State(app): State<AppState>, tenant: Tenant) -> ApiResult<Json<Value>> {
    let (reg, store) = (app.registry.clone(), app.store.clone());
    let all = tokio::task::spawn_blocking(move || -> ApiResult<Vec<Value>> {
        let mut out = Vec::new();
        for id in reg.tenant_runs(&tenant.tenant_id)?.into_iter().rev() {
            if let Ok(r) = store.record(&id) {
                out.push(status_body(&r));
            }
        }
        Ok(out)
    })
    .await
    .map_err(ApiError::internal)??;
    Ok(Json(Value::Array(all)))
}

/// Paused executions of the tenant (review or pending pauses), oldest first.
#[utoipa::path(get, path = "/api/v1/executions/paused", tag = "executions",
    responses((status = 200, description = "paused executions")))]
pub async fn paused(State(app): State<AppState>, tenant: Tenant) -> ApiResult<Json<Value>> {
    let (reg, store) = (app.registry.clone(), app.store.clone());
    let all = tokio::task::spawn_blocking(move || -> ApiResult<Vec<Value>> {
        let mut out = Vec::new();
        for id in reg.tenant_runs(&tenant.tenant_id)? {
            if let Ok(r) = store.record(&id)
                && r.status == RunStatus::Paused
            {
                let mut v = json!({"executionId": r.run_id, "workflowId": r.workflow_id,
                    "createdAt": hensu_store::rfc3339(r.started_at)});
                if let Some(obj) = v.as_object_mut() {
                    if let Some(n) = &r.current_node {
                        obj.insert("currentNodeId".into(), json!(n));
                    }
                    if let Some(c) = &r.correlation_id {
                        obj.insert("correlationId".into(), json!(c));
                    }
                }
                out.push(v);
            }
        }
        Ok(out)
    })
    .await
    .map_err(ApiError::internal)??;
    Ok(Json(Value::Array(all)))
}

/// Result: status and the public context (keys starting with `_` removed).
#[utoipa::path(get, path = "/api/v1/executions/{executionId}/result", tag = "executions",
    params(("executionId" = String, Path)),
    responses((status = 200, description = "result"), (status = 404, description = "unknown")))]
pub async fn result(
    State(app): State<AppState>,
    tenant: Tenant,
    Path(id): Path<String>,
) -> ApiResult<Json<Value>> {
    let r = owned_record(&app, &tenant, &id).await?;
    let store = app.store.clone();
    let stored = tokio::task::spawn_blocking(move || store.load(&id))
        .await
        .map_err(ApiError::internal)??;
    Ok(Json(
        json!({"executionId": r.run_id, "workflowId": r.workflow_id,
        "status": r.status.as_str(), "output": public_context(&stored.snapshot)}),
    ))
}

const RESUME_FIELDS: [&str; 5] = [
    "correlationId",
    "decision",
    "reason",
    "targetStep",
    "contextEdits",
];

/// Maps a resume body to the engine's input (the upstream rules, unknown fields refused).
pub fn resume_input(body: &Value) -> ApiResult<ResumeInput> {
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
    let correlation_id = text("correlationId")?.filter(|c| !c.trim().is_empty());
    let reason = text("reason")?;
    let target = text("targetStep")?;
    let edits: Option<Context> = match obj.get("contextEdits") {
        None | Some(Value::Null) => None,
        Some(Value::Object(m)) => Some(m.iter().map(|(k, v)| (k.clone(), v.clone())).collect()),
        Some(_) => return Err(ApiError::bad_request("contextEdits must be an object")),
    };
    let decision = match text("decision")? {
        None => None,
        Some(d) => {
            if correlation_id.is_none() {
                return Err(ApiError::bad_request(
                    "correlationId is required when a review decision is submitted",
                ));
            }
            Some(match d.as_str() {
                "approve" => ReviewDecision::Approve {
                    edits: edits.clone().filter(|e| !e.is_empty()),
                },
                "reject" => ReviewDecision::Reject {
                    reason: reason.clone().unwrap_or_else(|| "Rejected via API".into()),
                },
                "backtrack" => ReviewDecision::Backtrack {
                    target: target.clone().ok_or_else(|| {
                        ApiError::bad_request("targetStep is required for backtrack decisions")
                    })?,
                    edits: edits.clone().filter(|e| !e.is_empty()),
                    reason: reason.clone().unwrap_or_else(|| "Backtrack via API".into()),
                },
                other => {
                    let shown: String = other.chars().take(64).collect();
                    return Err(ApiError::bad_request(format!(
                        "Invalid decision: {shown}. Must be approve, reject, or backtrack."
                    )));
                }
            })
        }
    };
    Ok(ResumeInput {
        correlation_id,
        context_edits: if decision.is_none() {
            edits.filter(|e| !e.is_empty())
        } else {
            None
        },
        decision,
    })
}

/// Resume: 202 at once; the run continues in the background.
#[utoipa::path(post, path = "/api/v1/executions/{executionId}/resume", tag = "executions",
    params(("executionId" = String, Path)),
    responses((status = 202, description = "resumed"), (status = 400, description = "bad input"),
              (status = 404, description = "unknown"), (status = 409, description = "not resumable now")))]
pub async fn resume(
    State(app): State<AppState>,
    tenant: Tenant,
    Path(id): Path<String>,
    body: axum::body::Bytes,
) -> ApiResult<Response> {
    check_id("executionId", &id)?;
    let raw: Value = if body.iter().all(u8::is_ascii_whitespace) {
        Value::Null
    } else {
        serde_json::from_slice(&body)
            .map_err(|e| ApiError::bad_request(format!("malformed JSON: {e}")))?
    };
    let input = resume_input(&raw)?;
    let record = owned_record(&app, &tenant, &id).await?;
    let reg = app.registry.clone();
    let (t, stored_wf_id) = (tenant.tenant_id.clone(), record.workflow_id.clone());
    let store = app.store.clone();
    let rid = id.clone();
    let repository = tokio::task::spawn_blocking(move || -> ApiResult<_> {
        let stored = store.load(&rid)?;
        let wf = stored_workflow(&stored.workflow).map_err(ApiError::internal)?;
        let _ = stored_wf_id;
        crate::subflows::repository(reg.as_ref(), &t, &wf)
    })
    .await
    .map_err(ApiError::internal)??;
    app.executor.resume(&id, input, repository).await?;
    Ok((
        StatusCode::ACCEPTED,
        Json(json!({"status": "resumed", "executionId": id})),
    )
        .into_response())
}

/// Cancel: 200 when cancelled at once, 202 when the running owner will stop at its next
/// node boundary, 409 when it had ended.
#[utoipa::path(post, path = "/api/v1/executions/{executionId}/cancel", tag = "executions",
    params(("executionId" = String, Path)),
    responses((status = 200, description = "cancelled"), (status = 202, description = "cancellation requested"),
              (status = 404, description = "unknown"), (status = 409, description = "already ended")))]
pub async fn cancel(
    State(app): State<AppState>,
    tenant: Tenant,
    Path(id): Path<String>,
) -> ApiResult<Response> {
    owned_record(&app, &tenant, &id).await?;
    match app.executor.cancel(&id).await? {
        CancelRequest::Cancelled(_) => Ok((
            StatusCode::OK,
            Json(json!({"status": "cancelled", "executionId": id})),
        )
            .into_response()),
        CancelRequest::Requested { .. } => Ok((
            StatusCode::ACCEPTED,
            Json(json!({"status": "cancelling", "executionId": id})),
        )
            .into_response()),
        CancelRequest::AlreadyFinished(s) => Err(ApiError::conflict(format!(
            "execution {id} has already ended ({s})"
        ))),
    }
}

fn last_event_id(headers: &HeaderMap) -> Option<&str> {
    headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
}

/// SSE of one execution: replay after `Last-Event-ID`, then live until it pauses or ends.
#[utoipa::path(get, path = "/api/v1/executions/{executionId}/events", tag = "events",
    params(("executionId" = String, Path)),
    responses((status = 200, description = "text/event-stream"), (status = 404, description = "unknown")))]
pub async fn events(
    State(app): State<AppState>,
    tenant: Tenant,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> ApiResult<Response> {
    owned_record(&app, &tenant, &id).await?;
    let after = match last_event_id(&headers) {
        None | Some("") => None,
        Some(s) => Some(s.parse::<u64>().map_err(|_| {
            ApiError::bad_request("Last-Event-ID must be an event id of this stream")
        })?),
    };
    let stream = execution_stream(
        app.store.clone(),
        app.events.subscribe(),
        id,
        tenant.tenant_id,
        after,
    );
    Ok(Sse::new(stream)
        .keep_alive(KeepAlive::default())
        .into_response())
}

/// SSE of every execution of the tenant (written by this server) from now on.
#[utoipa::path(get, path = "/api/v1/executions/events", tag = "events",
    responses((status = 200, description = "text/event-stream")))]
pub async fn tenant_events(
    State(app): State<AppState>,
    tenant: Tenant,
    headers: HeaderMap,
) -> ApiResult<Response> {
    let resume_from = match last_event_id(&headers) {
        None | Some("") => None,
        Some(s) => {
            let (run, step) = s
                .rsplit_once(':')
                .and_then(|(r, st)| Some((r.to_string(), st.parse::<u64>().ok()?)))
                .ok_or_else(|| {
                    ApiError::bad_request("Last-Event-ID must be an event id of this stream")
                })?;
            owned_record(&app, &tenant, &run).await?;
            Some((run, step))
        }
    };
    let stream = tenant_stream(
        app.store.clone(),
        app.registry.clone(),
        app.events.subscribe(),
        tenant.tenant_id,
        resume_from,
    );
    Ok(Sse::new(stream)
        .keep_alive(KeepAlive::default())
        .into_response())
}
