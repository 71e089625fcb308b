//! The rules a signal obeys before it is sent (docs/language.md, *Timers and signals*): its
//! name, its payload against the workflow's `awaitSignal` nodes, the API's errors — shared by
//! `POST …/signals/{name}` ([`super::signals`]) and signal-with-start ([`super::executions`]),
//! so neither module depends on the other.

use axum::http::StatusCode;
use hensu_host::launch::SignalError;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

use crate::AppState;
use crate::error::{ApiError, ApiResult};

/// One signal of a start (`signals` of `POST /api/v1/executions`).
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StartSignal {
    pub name: String,
    #[serde(default)]
    #[schema(value_type = Object)]
    pub payload: Value,
}

/// Signal-with-start: every signal of a start is checked against the workflow and the
/// workflows it calls before the execution is stored (the rules of `POST …/signals/{name}`).
pub fn check_start_signals(
    workflow: &hensu_ir::Workflow,
    callable: &hensu_runtime::MapRepository,
    signals: &[StartSignal],
) -> ApiResult<()> {
    for s in signals {
        check_name(&s.name)?;
        hensu_host::launch::check_payload_in(workflow, callable, &s.name, &s.payload)
            .map_err(api_error)?;
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

pub(crate) fn check_name(name: &str) -> ApiResult<()> {
    if name.is_empty() || name.len() > 200 || name.chars().any(char::is_control) {
        return Err(ApiError::bad_request(
            "a signal name is 1 to 200 characters, none a control character",
        )
        .with_code("invalid_signal_name"));
    }
    Ok(())
}

pub(crate) fn api_error(e: SignalError) -> ApiError {
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
