//! The HTTP face of [`crate::service`]: thin handlers, each documented with
//! `#[utoipa::path]` and registered once in its file's `routes()` (a utoipa-axum
//! `OpenApiRouter`), which gives both the route and its OpenAPI entry.

pub mod executions;
pub mod mcp;
pub mod ops;
pub mod schedules;
pub mod workflows;

use axum::http::{HeaderMap, StatusCode, header};

use crate::error::ApiError;

/// A body a handler reads as bytes must still be JSON, as `axum::Json` requires:
/// `application/json` or `application/<x>+json` (415 otherwise).
pub(crate) fn require_json(headers: &HeaderMap) -> Result<(), ApiError> {
    let essence = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .map(|v| v.trim().to_ascii_lowercase())
        .unwrap_or_default();
    let is_json = essence
        .split_once('/')
        .is_some_and(|(ty, sub)| ty == "application" && (sub == "json" || sub.ends_with("+json")));
    if is_json {
        Ok(())
    } else {
        Err(ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "Unsupported media type: send Content-Type: application/json",
        ))
    }
}
