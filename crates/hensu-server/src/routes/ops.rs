//! Operations: liveness, readiness, Prometheus metrics — adapters of [`crate::service::ops`].

use axum::Json;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::AppState;
use crate::service::ops::{self as service, Health, HealthStatus};

/// The routes of this file, documented.
pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(health))
        .routes(routes!(ready))
        .routes(routes!(metrics))
}

/// Liveness: the process answers.
#[utoipa::path(get, path = "/health", tag = "operations",
    responses((status = 200, description = "up", body = HealthStatus)))]
pub async fn health() -> Json<HealthStatus> {
    Json(service::health())
}

/// Readiness: the store answers.
#[utoipa::path(get, path = "/ready", tag = "operations",
    responses((status = 200, description = "ready", body = HealthStatus),
              (status = 503, description = "store unreachable", body = HealthStatus)))]
pub async fn ready(State(app): State<AppState>) -> (StatusCode, Json<HealthStatus>) {
    let ready = service::ready(&app).await;
    let code = match ready.status {
        Health::Down => StatusCode::SERVICE_UNAVAILABLE,
        Health::Up | Health::Ready => StatusCode::OK,
    };
    (code, Json(ready))
}

/// Prometheus text exposition.
#[utoipa::path(get, path = "/metrics", tag = "operations",
    responses((status = 200, description = "metrics", content_type = "text/plain", body = String)))]
pub async fn metrics(State(app): State<AppState>) -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        service::metrics(&app).await,
    )
}
