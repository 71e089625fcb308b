//! Signals to executions (docs/language.md, *Timers and signals*; docs/server.md): the
//! tenant check, then `hensu_host::launch::deliver_signal` — the operation `hensuc signal` runs —
//! which checks the payload against the variables the execution's `awaitSignal` nodes of that
//! name write (its workflow's and those of the workflows it calls) and stores the signal. A paused execution waiting for it is woken: the server's
//! takeover (or any server on the same store) claims and continues it.

use hensu_host::launch::{deliver_signal, signal_workflow};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

use crate::AppState;
use crate::auth::Tenant;
use crate::error::{ApiError, ApiResult};

pub use super::signal_rules::{StartSignal, check_start_signals, send_start_signals};
use super::signal_rules::{api_error, check_name};

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
    // A wait inside a sub-workflow child takes the run's signals too: its workflow's nodes
    // are checked as well (docs/language.md, *Timers and signals*).
    let workflow = signal_workflow(&app.store, run_id)
        .await
        .map_err(api_error)?;
    let callable =
        crate::subflows::repository(app.registry.as_ref(), &tenant.tenant_id, &workflow).await?;
    let receipt = deliver_signal(
        &app.store,
        run_id,
        (&workflow, &callable),
        name,
        &request.payload,
    )
    .await
    .map_err(api_error)?;
    Ok(SignalSent {
        execution_id: run_id.to_string(),
        signal: name.to_string(),
        seq: receipt.seq,
        woke: receipt.woke,
    })
}
