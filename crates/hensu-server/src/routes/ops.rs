//! Operations: liveness, readiness (the store answers), Prometheus metrics, OpenAPI.

use axum::Json;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use crate::AppState;

/// Liveness: the process answers.
#[utoipa::path(get, path = "/health", tag = "operations", responses((status = 200, description = "up")))]
pub async fn health() -> Json<Value> {
    Json(json!({"status": "UP"}))
}

/// Readiness: the registry answers a query (the empty tenant, which no token can name).
#[utoipa::path(get, path = "/ready", tag = "operations",
    responses((status = 200, description = "ready"), (status = 503, description = "store unreachable")))]
pub async fn ready(State(app): State<AppState>) -> Response {
    let reg = app.registry.clone();
    let ok = tokio::task::spawn_blocking(move || reg.list_workflows("").is_ok())
        .await
        .unwrap_or(false);
    if ok {
        (StatusCode::OK, Json(json!({"status": "READY"}))).into_response()
    } else {
        (
            StatusCode::SERVICE_UNAVAILABLE,
            Json(json!({"status": "DOWN"})),
        )
            .into_response()
    }
}

/// Prometheus text exposition.
#[utoipa::path(get, path = "/metrics", tag = "operations", responses((status = 200, description = "metrics")))]
pub async fn metrics(State(app): State<AppState>) -> Response {
    let running = app.executor.running();
    metrics::gauge!(crate::metrics::RUNNING).set(running as f64);
    (
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        app.metrics.render(),
    )
        .into_response()
}

/// This API's OpenAPI document.
#[utoipa::path(get, path = "/openapi.json", tag = "operations", responses((status = 200, description = "OpenAPI 3.1")))]
pub async fn openapi() -> Json<utoipa::openapi::OpenApi> {
    Json(crate::openapi::document())
}
