//! The service layer: every operation of the API as a typed async function of the caller's
//! [`Tenant`](crate::Tenant), returning `Result<T, ApiError>`. The HTTP handlers
//! ([`crate::routes`]) and the web console (`hensu-console`) both call these, so the API's
//! rules (tenant scoping, the id rule, the start and resume checks) hold for both.
//!
//! Requests and responses are serde types with an OpenAPI schema ([`utoipa::ToSchema`]); their
//! JSON is the upstream Hensu shape (docs/server.md).
//!
//! Store calls are async (`hensu_store::StateStore`); only CPU-bound work (a push's checks)
//! goes to the blocking pool.

pub mod batch;
pub mod control;
pub mod diff;
pub mod events;
pub mod executions;
pub mod firing;
pub mod listing;
pub mod ops;
pub mod outcome;
pub mod replay;
pub mod reviews;
pub mod schedules;
mod signal_rules;
pub mod signals;
pub mod tenant_stream;
pub mod time_travel;
pub mod workflows;

use crate::error::{ApiError, ApiResult};

/// Runs CPU-bound work (a push's checks) on the blocking pool, off the async workers.
pub(crate) async fn blocking<T, F>(calls: F) -> ApiResult<T>
where
    T: Send + 'static,
    F: FnOnce() -> ApiResult<T> + Send + 'static,
{
    tokio::task::spawn_blocking(calls)
        .await
        .map_err(ApiError::internal)?
}
