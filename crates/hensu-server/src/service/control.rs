//! Pausing a running execution (the console's *Pause*; `cancel` and `resume` are in
//! [`super::executions`]). A foreign tenant's execution is "not found", as everywhere.

use crate::AppState;
use crate::auth::Tenant;
use crate::error::ApiResult;
use crate::exec::PauseRequest;

/// Asks a running execution of `tenant` to pause after the node it runs now; it is then
/// `paused` and a plain resume continues it. An execution paused already is left as it is
/// ([`PauseRequest::AlreadyPaused`]); one that ended, has not started, or runs on another
/// server is refused with 409.
pub async fn pause(app: &AppState, tenant: &Tenant, run_id: &str) -> ApiResult<PauseRequest> {
    super::executions::owned_record(app, tenant, run_id).await?;
    app.executor.pause(run_id).await
}
