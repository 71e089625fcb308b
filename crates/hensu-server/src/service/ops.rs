//! Operations: liveness, readiness (the store answers) and the Prometheus metrics.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::AppState;

/// Liveness or readiness.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "UPPERCASE")]
pub enum Health {
    /// The process answers (`/health`).
    Up,
    /// The store answers (`/ready`).
    Ready,
    /// The store does not answer (`/ready`, 503).
    Down,
}

/// The body of `/health` and `/ready`.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
pub struct HealthStatus {
    pub status: Health,
}

/// Liveness: the process answers.
pub fn health() -> HealthStatus {
    HealthStatus { status: Health::Up }
}

/// Readiness: the registry answers a query (for the empty tenant, which no token can name).
pub async fn ready(app: &AppState) -> HealthStatus {
    let answers = app.registry.list_workflows("").await.is_ok();
    HealthStatus {
        status: if answers { Health::Ready } else { Health::Down },
    }
}

/// The Prometheus text exposition, the gauges read first: running executions, and the
/// store's queue depth (kept at its last value when the store does not answer).
pub async fn metrics(app: &AppState) -> String {
    let running = app.executor.running();
    metrics::gauge!(crate::metrics::RUNNING).set(running as f64);
    if let Ok(depth) = app.store.queue_depth().await {
        crate::metrics::queue_depth(depth);
    }
    app.metrics.render()
}
