//! The HTTP face of [`crate::service`]: thin handlers, each documented with
//! `#[utoipa::path]` and registered once in its file's `routes()` (a utoipa-axum
//! `OpenApiRouter`), which gives both the route and its OpenAPI entry.

pub mod executions;
pub mod mcp;
pub mod ops;
pub mod workflows;
