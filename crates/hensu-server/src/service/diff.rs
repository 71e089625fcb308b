//! Two of the tenant's executions compared step by step (docs/server.md, *Time travel*):
//! `hensu_host::runs_diff`, the comparison `hensuc runs diff` prints, as its JSON document
//! (docs/schemas/runs-diff.schema.json). The console's diff page calls this too.

use crate::AppState;
use crate::auth::Tenant;
use crate::error::{ApiError, ApiResult};
use crate::service::executions::owned_record;
use crate::validate::check_id;
pub use hensu_host::runs_diff::{
    ContextDifference, DiffRun, DiffStep, DiffStepSide, Difference, FirstDifference, RunsDiff,
};
use hensu_host::runs_diff::{DiffError, diff_runs};

/// Compares execution `run_id` (A) with `other` (B). Both must be the tenant's: either one
/// unknown or another tenant's is 404.
pub async fn diff(
    app: &AppState,
    tenant: &Tenant,
    run_id: &str,
    other: &str,
) -> ApiResult<RunsDiff> {
    check_id("otherExecutionId", other)?;
    owned_record(app, tenant, run_id).await?;
    owned_record(app, tenant, other).await?;
    diff_runs(app.store.as_ref(), run_id, other)
        .await
        .map_err(|e| match e {
            DiffError::Store(hensu_store::StoreError::NotFound { .. }) => ApiError::not_found(),
            DiffError::Store(e) => e.into(),
            DiffError::State(m) => ApiError::internal(m),
        })
}
