//! Signals to executions (docs/language.md, *Timers and signals*; docs/server.md): the
//! tenant check, then `hensu_host::launch::send_signal` — the operation `hensuc signal` runs —
//! which checks the payload against the variables the execution's `awaitSignal` nodes of that
//! name write and stores the signal. A paused execution waiting for it is woken: the server's
//! takeover (or any server on the same store) claims and continues it.

use axum::http::StatusCode;
use hensu_host::launch::{SignalError, send_signal};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

use crate::AppState;
use crate::auth::Tenant;
use crate::error::{ApiError, ApiResult};

/// `POST /api/v1/executions/{id}/signals/{name}`'s body.
#[derive(Clone, Debug, Default, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SendSignal {
    /// The signal's payload (any JSON; `null` when absent).
    #[serde(default)]
    #[schema(value_type = Object)]
    pub payload: Value,
}

/// What a send did.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SignalSent {
    pub execution_id: String,
    pub signal: String,
    /// Its number among the execution's signals (0, 1, … in the order they were sent).
    pub seq: u64,
    /// The execution was waiting for it and continues now; otherwise the signal is kept and
    /// delivered when the execution waits for its name.
    pub woke: bool,
}

impl SendSignal {
    /// The body: empty (a `null` payload) or a JSON object with `payload`.
    pub fn from_body(body: &[u8]) -> ApiResult<SendSignal> {
        if body.iter().all(u8::is_ascii_whitespace) {
            return Ok(SendSignal::default());
        }
        serde_json::from_slice(body).map_err(|e| {
            ApiError::bad_request(format!("invalid signal body: {e}")).with_code("invalid_body")
        })
    }
}

/// One signal of a start (`signals` of `POST /api/v1/executions`).
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StartSignal {
    pub name: String,
    #[serde(default)]
    #[schema(value_type = Object)]
    pub payload: Value,
}

/// Signal-with-start: every signal of a start is checked against the workflow before the
/// execution is stored (the rules of `POST …/signals/{name}`).
pub fn check_start_signals(
    workflow: &hensu_ir::Workflow,
    signals: &[StartSignal],
) -> ApiResult<()> {
    for s in signals {
        check_name(&s.name)?;
        hensu_host::launch::check_payload(workflow, &s.name, &s.payload).map_err(api_error)?;
    }
    Ok(())
}

/// Sends the checked signals of a start to its new execution, in order. The execution runs
/// already: one that waits for a signal by then is woken; one that ended before reaching its
/// wait takes none (logged).
pub async fn send_start_signals(app: &AppState, run_id: &str, signals: Vec<StartSignal>) {
    for s in signals {
        if let Err(e) = app.store.send_signal(run_id, &s.name, &s.payload).await {
            tracing::warn!(run_id, signal = s.name, error = %e, "a start's signal was not stored");
        }
    }
}

fn check_name(name: &str) -> ApiResult<()> {
    if name.is_empty() || name.len() > 200 || name.chars().any(char::is_control) {
        return Err(ApiError::bad_request(
            "a signal name is 1 to 200 characters, none a control character",
        )
        .with_code("invalid_signal_name"));
    }
    Ok(())
}

fn api_error(e: SignalError) -> ApiError {
    let status = match &e {
        SignalError::NotFound(_) => return ApiError::not_found().with_code(e.code()),
        SignalError::Finished { .. } => StatusCode::CONFLICT,
        SignalError::UnknownSignal { .. } | SignalError::Payload { .. } => {
            StatusCode::UNPROCESSABLE_ENTITY
        }
        SignalError::Store(_) => return ApiError::internal(&e),
    };
    ApiError::new(status, e.to_string()).with_code(e.code())
}

/// Sends signal `name` to the tenant's execution `run_id`.
pub async fn send(
    app: &AppState,
    tenant: &Tenant,
    run_id: &str,
    name: &str,
    request: SendSignal,
) -> ApiResult<SignalSent> {
    super::executions::owned_record(app, tenant, run_id).await?;
    check_name(name)?;
    let receipt = send_signal(&app.store, run_id, name, &request.payload)
        .await
        .map_err(api_error)?;
    Ok(SignalSent {
        execution_id: run_id.to_string(),
        signal: name.to_string(),
        seq: receipt.seq,
        woke: receipt.woke,
    })
}
