//! The OpenAPI document of the routes (`GET /openapi.json`); a test checks that it lists
//! exactly the routes [`crate::router`] serves.

use utoipa::OpenApi;

use crate::routes::{executions, mcp, ops, workflows};

#[derive(OpenApi)]
#[openapi(
    info(
        title = "hensu server",
        description = "Workflows and executions over REST + SSE (docs/server.md)"
    ),
    paths(
        workflows::push,
        workflows::list,
        workflows::pull,
        workflows::delete,
        executions::start,
        executions::list,
        executions::paused,
        executions::tenant_events,
        executions::status,
        executions::result,
        executions::resume,
        executions::cancel,
        executions::events,
        ops::health,
        ops::ready,
        ops::metrics,
        ops::openapi,
        mcp::connect,
        mcp::message,
        mcp::status,
        mcp::client_status,
    )
)]
struct ApiDoc;

pub fn document() -> utoipa::openapi::OpenApi {
    ApiDoc::openapi()
}
