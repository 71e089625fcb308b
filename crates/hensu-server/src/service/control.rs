//! Pausing a running execution (`POST /api/v1/executions/{id}/pause`, the console's *Pause*;
//! `cancel` and `resume` are in [`super::executions`]). A foreign tenant's execution is "not
//! found", as everywhere.

use hensu_store::PauseRequest;

use crate::AppState;
use crate::auth::Tenant;
use crate::error::{ApiError, ApiResult};
use crate::service::executions::{Acknowledged, ExecutionAck};

/// Asks a running execution of `tenant` to pause after the node it runs now, whichever server
/// or worker executes it (the request is a flag in the store, seen with the run's next
/// checkpoint); it is then `paused` and a plain resume continues it. An execution paused
/// already is left as it is ([`Acknowledged::Paused`]); one that ended or has not started is
/// refused with 409.
pub async fn pause(app: &AppState, tenant: &Tenant, run_id: &str) -> ApiResult<ExecutionAck> {
    super::executions::owned_record(app, tenant, run_id).await?;
    let status = match app.executor.pause(run_id).await? {
        PauseRequest::Requested => Acknowledged::Pausing,
        PauseRequest::AlreadyPaused => Acknowledged::Paused,
        PauseRequest::NotStarted => {
            return Err(ApiError::conflict(format!(
                "execution {run_id} has not started yet; cancel it instead"
            )));
        }
        PauseRequest::AlreadyFinished(s) => {
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
