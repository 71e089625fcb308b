//! `/api/v1/workflows`: push, pull, list, delete — adapters of [`crate::service::workflows`].

use axum::Json;
use axum::extract::rejection::JsonRejection;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use serde_json::Value;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::AppState;
use crate::auth::Tenant;
use crate::error::{ApiResult, ErrorBody};
use crate::service::workflows::{self as service, WorkflowEntry, WorkflowSaved};

/// The routes of this file, documented.
pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list, push))
        .routes(routes!(pull, delete))
}

/// Push: the full hensu checks on the JSON artifact; every diagnostic in the 400.
#[utoipa::path(post, path = "/api/v1/workflows", tag = "workflows",
    request_body(content = Object, description = "the compiled workflow (`hensuc build`)"),
    responses((status = 201, description = "created", body = WorkflowSaved),
              (status = 200, description = "replaced", body = WorkflowSaved),
              (status = 400, description = "invalid workflow, with all diagnostics", body = ErrorBody)))]
pub async fn push(
    State(app): State<AppState>,
    tenant: Tenant,
    body: Result<Json<Value>, JsonRejection>,
) -> ApiResult<(StatusCode, Json<WorkflowSaved>)> {
    let saved = service::push(&app, &tenant, body?.0).await?;
    let code = if saved.created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((code, Json(saved)))
}

/// Pull: the stored definition.
#[utoipa::path(get, path = "/api/v1/workflows/{workflowId}", tag = "workflows",
    params(("workflowId" = String, Path)),
    responses((status = 200, description = "the workflow JSON, as pushed", body = Object),
              (status = 404, description = "unknown", body = ErrorBody)))]
pub async fn pull(
    State(app): State<AppState>,
    tenant: Tenant,
    Path(id): Path<String>,
) -> ApiResult<Json<Value>> {
    service::get(&app, &tenant, &id).await.map(Json)
}

/// List: `[{id, version}]` sorted by id.
#[utoipa::path(get, path = "/api/v1/workflows", tag = "workflows", operation_id = "list_workflows",
    responses((status = 200, description = "the tenant's workflows", body = Vec<WorkflowEntry>)))]
pub async fn list(
    State(app): State<AppState>,
    tenant: Tenant,
) -> ApiResult<Json<Vec<WorkflowEntry>>> {
    service::list(&app, &tenant).await.map(Json)
}

/// Delete (soft): 204, or 404 when there is no live row.
#[utoipa::path(delete, path = "/api/v1/workflows/{workflowId}", tag = "workflows",
    params(("workflowId" = String, Path)),
    responses((status = 204, description = "deleted"),
              (status = 404, description = "unknown", body = ErrorBody)))]
pub async fn delete(
    State(app): State<AppState>,
    tenant: Tenant,
    Path(id): Path<String>,
) -> ApiResult<StatusCode> {
    service::delete(&app, &tenant, &id).await?;
    Ok(StatusCode::NO_CONTENT)
}
