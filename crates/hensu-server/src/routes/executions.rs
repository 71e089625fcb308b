//! `/api/v1/executions`: start, batch start, status, list, paused, result, resume, fork,
//! redrive, replay, diff, cancel, pause, signals, pending reviews, and the SSE streams —
//! adapters of [`crate::service::executions`] and [`crate::service::events`].

use std::convert::Infallible;

use axum::Json;
use axum::extract::rejection::BytesRejection;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::sse::{KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures_util::{Stream, StreamExt};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::AppState;
use crate::auth::Tenant;
use crate::error::{ApiError, ApiResult, ErrorBody};
use crate::service::batch::{self, BatchStart, BatchStarted};
use crate::service::events::{self, ExecutionEvent, StreamedEvent};
use crate::service::executions::{
    self as service, Acknowledged, ExecutionAck, ExecutionResult, ExecutionStarted,
    ExecutionStatus, PausedExecution, ResumeExecution, StartExecution,
};
use crate::service::listing::{self, ListParams};
use crate::service::replay::{self as replay_service, ExecutionReplayed, ReplayExecution};
use crate::service::time_travel::{self, ExecutionForked, ForkExecution, RedriveExecution};

/// The routes of this file, documented.
pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list, start))
        .routes(routes!(start_batch))
        // Literal segments win over `{executionId}` (axum matches static routes first).
        .routes(routes!(paused))
        .routes(routes!(tenant_events))
        .routes(routes!(status))
        .routes(routes!(result))
        .routes(routes!(resume))
        .routes(routes!(fork))
        .routes(routes!(redrive))
        .routes(routes!(replay))
        .routes(routes!(diff))
        .routes(routes!(cancel))
        .routes(routes!(pause))
        .routes(routes!(signal))
        .routes(routes!(reviews))
        .routes(routes!(execution_events))
}

/// Start: 202 `{executionId, workflowId}`; the run continues in the background. With an
/// `Idempotency-Key`, a repeat of the same request within 24 hours answers 200 with the same
/// execution and starts nothing (docs/server.md, *Idempotent starts*).
#[utoipa::path(post, path = "/api/v1/executions", tag = "executions",
    request_body = StartExecution,
    params(("Idempotency-Key" = Option<String>, Header,
            description = "1-255 visible ASCII characters; the same key and body within 24 h give the same execution")),
    responses((status = 202, description = "started", body = ExecutionStarted),
              (status = 200, description = "the Idempotency-Key started this execution already; nothing new started", body = ExecutionStarted),
              (status = 400, description = "bad input (`code` context_too_deep: the context nests too deep; invalid_idempotency_key)", body = ErrorBody),
              (status = 404, description = "unknown workflow", body = ErrorBody),
              (status = 413, description = "body or context too large (`code` body_too_large, context_too_large)", body = ErrorBody),
              (status = 422, description = "the Idempotency-Key was used for a different request (`code` idempotency_key_reused), or a start signal the workflow does not wait for or whose payload does not fit (`code` unknown_signal, invalid_signal_payload)", body = ErrorBody),
              (status = 503, description = "shutting down, or the store is unreachable (`code` store_unavailable, with `Retry-After`); retry with the same Idempotency-Key", body = ErrorBody,
               headers(("Retry-After" = u32, description = "seconds to wait before retrying")))))]
pub async fn start(
    State(app): State<AppState>,
    tenant: Tenant,
    headers: HeaderMap,
    body: Result<axum::body::Bytes, BytesRejection>,
) -> ApiResult<(StatusCode, Json<ExecutionStarted>)> {
    // The body as bytes, not `Json<Value>`: the context's bounds are checked before it is built.
    crate::routes::require_json(&headers)?;
    let bounds = crate::validate::ContextBounds::from(app.limits.as_ref());
    let mut request = StartExecution::from_body(&body?, bounds)?;
    if let Some(key) = headers.get("idempotency-key") {
        request.idempotency_key = Some(service::check_idempotency_key(key.as_bytes())?);
    }
    request.traceparent = headers
        .get("traceparent")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let started = service::start(&app, &tenant, request).await?;
    let status = if started.replayed {
        StatusCode::OK
    } else {
        StatusCode::ACCEPTED
    };
    Ok((status, Json(started)))
}

/// Batch start (a hensu addition): one run per context, stored `queued` for the workers
/// (this server's and any other's on the same store) to claim within their concurrency.
/// Every context is checked first; one bad context refuses the batch and queues nothing
/// (docs/server.md, *Batch starts*).
#[utoipa::path(post, path = "/api/v1/executions/batch", tag = "executions",
    request_body = BatchStart,
    params(("Idempotency-Key" = Option<String>, Header,
            description = "the run of `contexts[i]` is started under `<key>#<i>`: a retried batch queues nothing twice")),
    responses((status = 202, description = "queued, in the order of the contexts", body = BatchStarted),
              (status = 200, description = "the Idempotency-Key had queued every run already; nothing new queued", body = BatchStarted),
              (status = 400, description = "bad input: malformed, 0 or too many contexts (`code` invalid_parameter), a context the workflow refuses, context_too_deep, invalid_idempotency_key", body = ErrorBody),
              (status = 404, description = "unknown workflow", body = ErrorBody),
              (status = 413, description = "body or a context too large (`code` body_too_large, context_too_large)", body = ErrorBody),
              (status = 422, description = "the Idempotency-Key was used for a different request (`code` idempotency_key_reused)", body = ErrorBody),
              (status = 503, description = "shutting down, or the store is unreachable (`code` store_unavailable, with `Retry-After`); retry with the same Idempotency-Key", body = ErrorBody,
               headers(("Retry-After" = u32, description = "seconds to wait before retrying")))))]
pub async fn start_batch(
    State(app): State<AppState>,
    tenant: Tenant,
    headers: HeaderMap,
    body: Result<axum::body::Bytes, BytesRejection>,
) -> ApiResult<(StatusCode, Json<BatchStarted>)> {
    crate::routes::require_json(&headers)?;
    let bounds = crate::validate::ContextBounds::from(app.limits.as_ref());
    let request = BatchStart::from_body(&body?, bounds, app.limits.batch_max_starts)?;
    let key = headers
        .get("idempotency-key")
        .map(|k| service::check_idempotency_key(k.as_bytes()))
        .transpose()?;
    let (queued, all_replayed) = batch::start_batch(&app, &tenant, request, key.as_deref()).await?;
    let status = if all_replayed {
        StatusCode::OK
    } else {
        StatusCode::ACCEPTED
    };
    Ok((status, Json(queued)))
}

/// Status: the real status (running, paused, completed, failed, rejected, cancelled).
#[utoipa::path(get, path = "/api/v1/executions/{executionId}", tag = "executions", operation_id = "execution_status",
    params(("executionId" = String, Path)),
    responses((status = 200, description = "status", body = ExecutionStatus),
              (status = 404, description = "unknown", body = ErrorBody)))]
pub async fn status(
    State(app): State<AppState>,
    tenant: Tenant,
    Path(id): Path<String>,
) -> ApiResult<Json<ExecutionStatus>> {
    service::status(&app, &tenant, &id).await.map(Json)
}

/// One page of the tenant's executions, newest first (a hensu addition). The body stays an
/// array; the next page's cursor comes in `X-Next-Cursor` and `Link: <…>; rel="next"`
/// (docs/server.md, *Paging*).
#[utoipa::path(get, path = "/api/v1/executions", tag = "executions", operation_id = "list_executions",
    params(ListParams),
    responses((status = 200, description = "one page of the tenant's executions, newest first",
               body = Vec<ExecutionStatus>,
               headers(("X-Next-Cursor" = String, description = "the cursor of the next page; absent on the last page"),
                       ("Link" = String, description = "`<next page URL>; rel=\"next\"`; absent on the last page"))),
              (status = 400, description = "a bad parameter (`code` invalid_parameter, invalid_cursor)", body = ErrorBody)))]
pub async fn list(
    State(app): State<AppState>,
    tenant: Tenant,
    params: Result<Query<ListParams>, QueryRejection>,
) -> ApiResult<Response> {
    let Query(params) = params.map_err(|e| {
        ApiError::bad_request(format!("query: {}", e.body_text())).with_code("invalid_parameter")
    })?;
    let page = listing::list(&app, &tenant, &params).await?;
    let mut response = Json(page.items).into_response();
    if let Some(cursor) = page.next_cursor {
        let link = params.next_page_link("/api/v1/executions", &cursor);
        // Both are visible ASCII by construction (hex cursor, percent-encoded link).
        if let (Ok(cursor), Ok(link)) = (
            HeaderValue::from_str(&cursor),
            HeaderValue::from_str(&format!("<{link}>; rel=\"next\"")),
        ) {
            let headers = response.headers_mut();
            headers.insert("x-next-cursor", cursor);
            headers.insert(axum::http::header::LINK, link);
        }
    }
    Ok(response)
}

/// Paused executions of the tenant (review or pending pauses), oldest first.
#[utoipa::path(get, path = "/api/v1/executions/paused", tag = "executions",
    responses((status = 200, description = "paused executions", body = Vec<PausedExecution>)))]
pub async fn paused(
    State(app): State<AppState>,
    tenant: Tenant,
) -> ApiResult<Json<Vec<PausedExecution>>> {
    listing::paused(&app, &tenant).await.map(Json)
}

/// Result: status and the public context (keys starting with `_` removed).
#[utoipa::path(get, path = "/api/v1/executions/{executionId}/result", tag = "executions",
    params(("executionId" = String, Path)),
    responses((status = 200, description = "result", body = ExecutionResult),
              (status = 404, description = "unknown", body = ErrorBody)))]
pub async fn result(
    State(app): State<AppState>,
    tenant: Tenant,
    Path(id): Path<String>,
) -> ApiResult<Json<ExecutionResult>> {
    service::result(&app, &tenant, &id).await.map(Json)
}

/// Resume: 202 at once; the run continues in the background. An empty body is a plain resume.
#[utoipa::path(post, path = "/api/v1/executions/{executionId}/resume", tag = "executions",
    params(("executionId" = String, Path)),
    request_body(content = Option<ResumeExecution>),
    responses((status = 202, description = "resumed", body = ExecutionAck),
              (status = 400, description = "bad input", body = ErrorBody),
              (status = 404, description = "unknown", body = ErrorBody),
              (status = 409, description = "not resumable now", body = ErrorBody)))]
pub async fn resume(
    State(app): State<AppState>,
    tenant: Tenant,
    Path(id): Path<String>,
    body: axum::body::Bytes,
) -> ApiResult<(StatusCode, Json<ExecutionAck>)> {
    // The id rule before the body's, as upstream.
    crate::validate::check_id("executionId", &id)?;
    let request = ResumeExecution::from_body(&body)?;
    let ack = service::resume(&app, &tenant, &id, request).await?;
    Ok((StatusCode::ACCEPTED, Json(ack)))
}

/// Fork: 202 with the new execution, which runs in the background from the parent's step
/// (docs/server.md, *Time travel*).
#[utoipa::path(post, path = "/api/v1/executions/{executionId}/fork", tag = "executions",
    params(("executionId" = String, Path)),
    request_body = ForkExecution,
    responses((status = 202, description = "forked; the new execution runs", body = ExecutionForked),
              (status = 400, description = "bad input, or the execution has no such step", body = ErrorBody),
              (status = 404, description = "unknown execution or workflow", body = ErrorBody),
              (status = 422, description = "the state at the step does not fit the other workflow (`code` fork_refused, `diagnostics` E0908, E0909); nothing was written", body = ErrorBody)))]
pub async fn fork(
    State(app): State<AppState>,
    tenant: Tenant,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> ApiResult<(StatusCode, Json<ExecutionForked>)> {
    crate::validate::check_id("executionId", &id)?;
    crate::routes::require_json(&headers)?;
    let request = ForkExecution::from_body(&body)?;
    let forked = time_travel::fork(&app, &tenant, &id, request).await?;
    Ok((StatusCode::ACCEPTED, Json(forked)))
}

/// Redrive: 202 with the new execution, a fork of the failed one at the step before its
/// failure, in which only the failed branches of a parallel or fork node run again.
#[utoipa::path(post, path = "/api/v1/executions/{executionId}/redrive", tag = "executions",
    params(("executionId" = String, Path)),
    request_body(content = Option<RedriveExecution>),
    responses((status = 202, description = "redriven; the new execution runs", body = ExecutionForked),
              (status = 400, description = "bad input", body = ErrorBody),
              (status = 404, description = "unknown execution", body = ErrorBody),
              (status = 409, description = "the execution did not fail", body = ErrorBody)))]
pub async fn redrive(
    State(app): State<AppState>,
    tenant: Tenant,
    Path(id): Path<String>,
    body: axum::body::Bytes,
) -> ApiResult<(StatusCode, Json<ExecutionForked>)> {
    crate::validate::check_id("executionId", &id)?;
    let request = RedriveExecution::from_body(&body)?;
    let forked = time_travel::redrive(&app, &tenant, &id, request).await?;
    Ok((StatusCode::ACCEPTED, Json(forked)))
}

/// Replay: 200 with the comparison of the execution replayed from its recorded outputs
/// with the recording (docs/server.md, *Replay*); nothing is written, no model is called.
#[utoipa::path(post, path = "/api/v1/executions/{executionId}/replay", tag = "executions",
    params(("executionId" = String, Path)),
    request_body(content = Option<ReplayExecution>),
    responses((status = 200, description = "replayed: identical, or the first divergence (E0916, E0917)", body = ExecutionReplayed),
              (status = 400, description = "bad input, or the execution has no such step", body = ErrorBody),
              (status = 404, description = "unknown execution or workflow", body = ErrorBody),
              (status = 422, description = "the execution or the workflow asked for cannot be replayed (`code` replay_invalid)", body = ErrorBody)))]
pub async fn replay(
    State(app): State<AppState>,
    tenant: Tenant,
    Path(id): Path<String>,
    body: axum::body::Bytes,
) -> ApiResult<Json<ExecutionReplayed>> {
    crate::validate::check_id("executionId", &id)?;
    let request = ReplayExecution::from_body(&body)?;
    Ok(Json(
        replay_service::replay(&app, &tenant, &id, request).await?,
    ))
}

/// Diff: the two executions compared step by step — path, outputs, errors, final context and
/// status, with the first step where they part (docs/server.md, *Time travel*): the document
/// `hensuc runs diff A B --json` prints (docs/schemas/runs-diff.schema.json).
#[utoipa::path(get, path = "/api/v1/executions/{executionId}/diff/{otherExecutionId}", tag = "executions",
    operation_id = "diff_executions",
    params(("executionId" = String, Path, description = "run A"),
           ("otherExecutionId" = String, Path, description = "run B")),
    responses((status = 200, description = "the comparison (`same`: no difference)", body = hensu_host::runs_diff::RunsDiff),
              (status = 400, description = "a malformed id", body = ErrorBody),
              (status = 404, description = "either execution unknown (or another tenant's)", body = ErrorBody)))]
pub async fn diff(
    State(app): State<AppState>,
    tenant: Tenant,
    Path((id, other)): Path<(String, String)>,
) -> ApiResult<Json<hensu_host::runs_diff::RunsDiff>> {
    Ok(Json(
        crate::service::diff::diff(&app, &tenant, &id, &other).await?,
    ))
}

/// Cancel: 200 when cancelled at once, 202 when the running owner will stop at its next
/// node boundary, 409 when it had ended.
#[utoipa::path(post, path = "/api/v1/executions/{executionId}/cancel", tag = "executions",
    params(("executionId" = String, Path)),
    responses((status = 200, description = "cancelled", body = ExecutionAck),
              (status = 202, description = "cancellation requested", body = ExecutionAck),
              (status = 404, description = "unknown", body = ErrorBody),
              (status = 409, description = "already ended", body = ErrorBody)))]
pub async fn cancel(
    State(app): State<AppState>,
    tenant: Tenant,
    Path(id): Path<String>,
) -> ApiResult<(StatusCode, Json<ExecutionAck>)> {
    let ack = service::cancel(&app, &tenant, &id).await?;
    Ok((ack_code(ack.status), Json(ack)))
}

/// Pause: 202 when the run will stop after its current node (whichever server or worker runs
/// it), 200 when it was paused already, 409 when it ended or has not started.
#[utoipa::path(post, path = "/api/v1/executions/{executionId}/pause", tag = "executions",
    params(("executionId" = String, Path)),
    responses((status = 202, description = "pause requested: the execution is saved `paused` at its next node boundary", body = ExecutionAck),
              (status = 200, description = "paused already", body = ExecutionAck),
              (status = 404, description = "unknown", body = ErrorBody),
              (status = 409, description = "already ended, or not started yet", body = ErrorBody)))]
pub async fn pause(
    State(app): State<AppState>,
    tenant: Tenant,
    Path(id): Path<String>,
) -> ApiResult<(StatusCode, Json<ExecutionAck>)> {
    let ack = crate::service::control::pause(&app, &tenant, &id).await?;
    Ok((ack_code(ack.status), Json(ack)))
}

/// Signal (docs/language.md, *Timers and signals*): 202 when the execution was waiting for it
/// and continues, 200 when it is kept for the execution's next wait for that name.
#[utoipa::path(post, path = "/api/v1/executions/{executionId}/signals/{name}", tag = "executions",
    params(("executionId" = String, Path), ("name" = String, Path)),
    request_body(content = Option<crate::service::signals::SendSignal>),
    responses((status = 202, description = "the execution waited for it and continues", body = crate::service::signals::SignalSent),
              (status = 200, description = "kept: delivered when the execution waits for this signal", body = crate::service::signals::SignalSent),
              (status = 400, description = "bad body or name (`code` invalid_body, invalid_signal_name)", body = ErrorBody),
              (status = 404, description = "unknown execution (`code` run_not_found)", body = ErrorBody),
              (status = 409, description = "the execution has ended (`code` run_finished)", body = ErrorBody),
              (status = 422, description = "no awaitSignal of this name, or the payload does not fit the variables it writes (`code` unknown_signal, invalid_signal_payload)", body = ErrorBody)))]
pub async fn signal(
    State(app): State<AppState>,
    tenant: Tenant,
    Path((id, name)): Path<(String, String)>,
    body: axum::body::Bytes,
) -> ApiResult<(StatusCode, Json<crate::service::signals::SignalSent>)> {
    crate::validate::check_id("executionId", &id)?;
    let request = crate::service::signals::SendSignal::from_body(&body)?;
    let sent = crate::service::signals::send(&app, &tenant, &id, &name, request).await?;
    let code = if sent.woke {
        StatusCode::ACCEPTED
    } else {
        StatusCode::OK
    };
    Ok((code, Json(sent)))
}

/// The reviews a paused execution waits for, each with its own correlation id
/// (docs/server.md, *Pending reviews*): decide any of them, in any order, with `POST
/// …/resume` and its `correlationId`.
#[utoipa::path(get, path = "/api/v1/executions/{executionId}/reviews", tag = "executions",
    params(("executionId" = String, Path)),
    responses((status = 200, description = "the pending reviews (empty unless paused for review)", body = crate::service::reviews::PendingReviews),
              (status = 404, description = "unknown", body = ErrorBody)))]
pub async fn reviews(
    State(app): State<AppState>,
    tenant: Tenant,
    Path(id): Path<String>,
) -> ApiResult<Json<crate::service::reviews::PendingReviews>> {
    crate::validate::check_id("executionId", &id)?;
    crate::service::reviews::list(&app, &tenant, &id)
        .await
        .map(Json)
}

/// 202 for what happens later (in the background, or at a running owner's next boundary),
/// 200 for what is done.
fn ack_code(status: Acknowledged) -> StatusCode {
    match status {
        Acknowledged::Resumed | Acknowledged::Cancelling | Acknowledged::Pausing => {
            StatusCode::ACCEPTED
        }
        Acknowledged::Cancelled | Acknowledged::Paused => StatusCode::OK,
    }
}

/// The `Last-Event-ID` header of a reconnecting stream.
pub fn last_event_id(headers: &HeaderMap) -> Option<&str> {
    headers.get("last-event-id").and_then(|v| v.to_str().ok())
}

/// An event stream as an SSE response (with keep-alive comments).
pub fn sse_response(stream: impl Stream<Item = StreamedEvent> + Send + 'static) -> Response {
    let messages = stream.map(|m| Ok::<_, Infallible>(m.to_sse()));
    Sse::new(messages)
        .keep_alive(KeepAlive::new().interval(SSE_KEEP_ALIVE))
        .into_response()
}

/// A comment on every otherwise silent stream this often: the clients treat a longer silence
/// (four of these) as a dead connection and reopen it (docs/clients.md, *Events*).
pub const SSE_KEEP_ALIVE: std::time::Duration = std::time::Duration::from_secs(15);

/// SSE of one execution: replay after `Last-Event-ID`, then live until it pauses or ends.
#[utoipa::path(get, path = "/api/v1/executions/{executionId}/events", tag = "events",
    params(("executionId" = String, Path),
           ("Last-Event-ID" = Option<String>, Header, description = "continue after this event")),
    responses((status = 200, description = "event stream; each `data:` is one event",
               content_type = "text/event-stream", body = ExecutionEvent),
              (status = 400, description = "bad Last-Event-ID", body = ErrorBody),
              (status = 404, description = "unknown", body = ErrorBody)))]
pub async fn execution_events(
    State(app): State<AppState>,
    tenant: Tenant,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> ApiResult<Response> {
    let stream = events::execution_events(&app, &tenant, &id, last_event_id(&headers)).await?;
    Ok(sse_response(stream))
}

/// SSE of every execution of the tenant, wherever it runs, from now on; with `Last-Event-ID`,
/// every event after it first (or a `stream.reset` event when those are no longer held).
#[utoipa::path(get, path = "/api/v1/executions/events", tag = "events",
    params(("Last-Event-ID" = Option<String>, Header,
            description = "the `id` (global event sequence) of the last event received")),
    responses((status = 200, description = "event stream; each `data:` is one event",
               content_type = "text/event-stream", body = ExecutionEvent),
              (status = 400, description = "bad Last-Event-ID", body = ErrorBody)))]
pub async fn tenant_events(
    State(app): State<AppState>,
    tenant: Tenant,
    headers: HeaderMap,
) -> ApiResult<Response> {
    let stream =
        crate::service::tenant_stream::tenant_events(&app, &tenant, last_event_id(&headers))
            .await?;
    Ok(sse_response(stream))
}
