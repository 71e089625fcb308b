//! `/api/v1/schedules`: create, list, get, update, delete, pause, resume and run now —
//! adapters of [`crate::service::schedules`] (docs/schedules.md).

use axum::Json;
use axum::extract::rejection::JsonRejection;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::AppState;
use crate::auth::Tenant;
use crate::error::{ApiResult, ErrorBody};
use crate::service::schedules::{
    self as service, Schedule, ScheduleDetail, ScheduleFiring, ScheduleRequest,
};

/// The routes of this file, documented.
pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list, create))
        .routes(routes!(get, update, delete))
        .routes(routes!(pause))
        .routes(routes!(resume))
        .routes(routes!(run_now))
}

/// Create: 201 with the schedule; the budget check refuses one that could overspend
/// `[budget] per_day` (422 with the diagnostic).
#[utoipa::path(post, path = "/api/v1/schedules", tag = "schedules", operation_id = "create_schedule",
    request_body = ScheduleRequest,
    responses((status = 201, description = "created", body = Schedule),
              (status = 400, description = "bad input (`code` invalid_cron, invalid_time_zone)", body = ErrorBody),
              (status = 404, description = "the tenant has no such workflow (`code` unknown_workflow)", body = ErrorBody),
              (status = 409, description = "the tenant has a schedule of that id (`code` schedule_exists)", body = ErrorBody),
              (status = 422, description = "refused by the budget check (`code` over_budget, unbounded_cost; `diagnostics` E0515, E0516)", body = ErrorBody)))]
pub async fn create(
    State(app): State<AppState>,
    tenant: Tenant,
    body: Result<Json<ScheduleRequest>, JsonRejection>,
) -> ApiResult<(StatusCode, Json<Schedule>)> {
    let Json(request) = body?;
    let created = service::create(&app, &tenant, request).await?;
    Ok((StatusCode::CREATED, Json(created)))
}

/// The tenant's schedules, by id.
#[utoipa::path(get, path = "/api/v1/schedules", tag = "schedules", operation_id = "list_schedules",
    responses((status = 200, description = "the tenant's schedules", body = Vec<Schedule>)))]
pub async fn list(State(app): State<AppState>, tenant: Tenant) -> ApiResult<Json<Vec<Schedule>>> {
    service::list(&app, &tenant).await.map(Json)
}

/// One schedule with its latest firings, newest first.
#[utoipa::path(get, path = "/api/v1/schedules/{scheduleId}", tag = "schedules", operation_id = "get_schedule",
    params(("scheduleId" = String, Path)),
    responses((status = 200, description = "the schedule", body = ScheduleDetail),
              (status = 404, description = "unknown (`code` unknown_schedule)", body = ErrorBody)))]
pub async fn get(
    State(app): State<AppState>,
    tenant: Tenant,
    Path(id): Path<String>,
) -> ApiResult<Json<ScheduleDetail>> {
    service::get(&app, &tenant, &id).await.map(Json)
}

/// Update: the whole definition, checked as a creation.
#[utoipa::path(put, path = "/api/v1/schedules/{scheduleId}", tag = "schedules", operation_id = "update_schedule",
    params(("scheduleId" = String, Path)),
    request_body = ScheduleRequest,
    responses((status = 200, description = "updated", body = Schedule),
              (status = 400, description = "bad input (`code` invalid_cron, invalid_time_zone)", body = ErrorBody),
              (status = 404, description = "unknown schedule or workflow (`code` unknown_schedule, unknown_workflow)", body = ErrorBody),
              (status = 409, description = "declared in hensu.toml (`code` schedule_from_config)", body = ErrorBody),
              (status = 422, description = "refused by the budget check (`code` over_budget, unbounded_cost)", body = ErrorBody)))]
pub async fn update(
    State(app): State<AppState>,
    tenant: Tenant,
    Path(id): Path<String>,
    body: Result<Json<ScheduleRequest>, JsonRejection>,
) -> ApiResult<Json<Schedule>> {
    let Json(request) = body?;
    service::update(&app, &tenant, &id, request).await.map(Json)
}

/// Delete a schedule and its firings (204); its runs stay.
#[utoipa::path(delete, path = "/api/v1/schedules/{scheduleId}", tag = "schedules", operation_id = "delete_schedule",
    params(("scheduleId" = String, Path)),
    responses((status = 204, description = "deleted"),
              (status = 404, description = "unknown (`code` unknown_schedule)", body = ErrorBody),
              (status = 409, description = "declared in hensu.toml (`code` schedule_from_config)", body = ErrorBody)))]
pub async fn delete(
    State(app): State<AppState>,
    tenant: Tenant,
    Path(id): Path<String>,
) -> ApiResult<StatusCode> {
    service::delete(&app, &tenant, &id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Pause: no tick fires until it is resumed.
#[utoipa::path(post, path = "/api/v1/schedules/{scheduleId}/pause", tag = "schedules", operation_id = "pause_schedule",
    params(("scheduleId" = String, Path)),
    responses((status = 200, description = "paused", body = Schedule),
              (status = 404, description = "unknown (`code` unknown_schedule)", body = ErrorBody)))]
pub async fn pause(
    State(app): State<AppState>,
    tenant: Tenant,
    Path(id): Path<String>,
) -> ApiResult<Json<Schedule>> {
    service::set_paused(&app, &tenant, &id, true)
        .await
        .map(Json)
}

/// Resume: it fires from its next occurrence after now (ticks of the pause are not fired).
#[utoipa::path(post, path = "/api/v1/schedules/{scheduleId}/resume", tag = "schedules", operation_id = "resume_schedule",
    params(("scheduleId" = String, Path)),
    responses((status = 200, description = "resumed", body = Schedule),
              (status = 404, description = "unknown (`code` unknown_schedule)", body = ErrorBody)))]
pub async fn resume(
    State(app): State<AppState>,
    tenant: Tenant,
    Path(id): Path<String>,
) -> ApiResult<Json<Schedule>> {
    service::set_paused(&app, &tenant, &id, false)
        .await
        .map(Json)
}

/// Run now: one firing at this instant under the overlap policy (202 with the firing: its
/// execution when one started, or why it was skipped or queued).
#[utoipa::path(post, path = "/api/v1/schedules/{scheduleId}/run", tag = "schedules", operation_id = "run_schedule_now",
    params(("scheduleId" = String, Path)),
    responses((status = 202, description = "fired", body = ScheduleFiring),
              (status = 404, description = "unknown (`code` unknown_schedule)", body = ErrorBody),
              (status = 409, description = "a firing at this instant exists (`code` firing_exists)", body = ErrorBody)))]
pub async fn run_now(
    State(app): State<AppState>,
    tenant: Tenant,
    Path(id): Path<String>,
) -> ApiResult<(StatusCode, Json<ScheduleFiring>)> {
    let fired = service::run_now(&app, &tenant, &id).await?;
    Ok((StatusCode::ACCEPTED, Json(fired)))
}
