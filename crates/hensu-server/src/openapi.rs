//! The OpenAPI document, `GET /openapi.json`. Each handler carries its own entry
//! (`#[utoipa::path]`) and is registered once, on a utoipa-axum `OpenApiRouter` (see
//! [`crate::routes`]); [`crate::router`] splits that into the axum router and this document,
//! so the document lists exactly the routes served. This module gives the document its title
//! and serves it.

use axum::Extension;
use axum::http::header;
use axum::response::IntoResponse;
use utoipa::OpenApi;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::AppState;

#[derive(OpenApi)]
#[openapi(
    info(
        title = "hensu server",
        description = "Workflows and executions over REST + SSE (docs/server.md)"
    ),
    tags(
        (name = "workflows", description = "push, pull, list and delete workflow definitions"),
        (name = "executions", description = "start, follow, resume and cancel runs"),
        (name = "events", description = "server-sent events of the runs"),
        (name = "mcp", description = "the gateway of the tenants' MCP clients"),
        (name = "operations", description = "health, readiness, metrics, this document"),
    )
)]
struct ApiDoc;

/// The empty document with this API's title: the routers add their paths to it.
pub fn base() -> utoipa::openapi::OpenApi {
    ApiDoc::openapi()
}

/// The finished document, encoded once, as the route serves it.
#[derive(Clone)]
pub struct Document(axum::body::Bytes);

impl Document {
    pub fn new(doc: &utoipa::openapi::OpenApi) -> Document {
        // An OpenApi value always encodes (its maps have string keys).
        Document(serde_json::to_vec(doc).unwrap_or_default().into())
    }
}

/// The route of the document (it needs the [`Document`] as an extension).
pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(document))
}

/// This API's OpenAPI document.
#[utoipa::path(get, path = "/openapi.json", tag = "operations",
    responses((status = 200, description = "OpenAPI 3.1", body = Object)))]
pub async fn document(Extension(doc): Extension<Document>) -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "application/json")], doc.0)
}
