//! The MCP gateway of `hensu-mcp` (docs/mcp.md, *Server mode: the gateway*) behind the
//! server's authentication: `/mcp/connect` and `/mcp/message` need a token, and the gateway
//! receives the token's tenant as an [`AuthenticatedTenant`] (a tenant connects as itself
//! only, and answers only the requests sent to it); the two status routes stay open, as
//! upstream's.

use axum::Router;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use hensu_mcp::gateway::AuthenticatedTenant;

use crate::AppState;

/// The gateway's routes, authenticated.
pub fn routes(app: &AppState) -> Router<AppState> {
    hensu_mcp::gateway::router(app.gateway.clone()).route_layer(
        axum::middleware::from_fn_with_state(app.clone(), authenticate),
    )
}

async fn authenticate(State(app): State<AppState>, mut req: Request, next: Next) -> Response {
    let path = req.uri().path();
    if path == "/mcp/connect" || path == "/mcp/message" {
        let header = req
            .headers()
            .get(axum::http::header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok());
        match app.auth.resolve(header) {
            Ok(tenant) => {
                req.extensions_mut()
                    .insert(AuthenticatedTenant(tenant.tenant_id));
            }
            Err(e) => return e.into_response(),
        }
    }
    next.run(req).await
}

// The OpenAPI entries of the gateway's routes (served by `hensu_mcp::gateway::router`).

/// The tenant's MCP client connects: SSE stream of JSON-RPC requests (`tools/list`,
/// `tools/call`); `clientId` must be the token's tenant.
#[utoipa::path(get, path = "/mcp/connect", tag = "mcp",
    params(("clientId" = String, Query, description = "the tenant id")),
    responses((status = 200, description = "SSE stream", content_type = "text/event-stream"),
              (status = 400, description = "bad clientId"), (status = 401, description = "no token"),
              (status = 403, description = "clientId is not the token's tenant")))]
#[allow(dead_code)]
pub(crate) async fn connect() {}

/// One JSON-RPC response of the tenant's client, matched to its request by `id`.
#[utoipa::path(post, path = "/mcp/message", tag = "mcp",
    request_body(content = String, content_type = "application/json"),
    responses((status = 204, description = "accepted (unknown ids are ignored)"),
              (status = 400, description = "blank, too large or control characters"),
              (status = 401, description = "no token")))]
#[allow(dead_code)]
pub(crate) async fn message() {}

/// Connected clients and pending requests.
#[utoipa::path(get, path = "/mcp/status", tag = "mcp",
    responses((status = 200, description = "{connectedClients, pendingRequests}")))]
#[allow(dead_code)]
pub(crate) async fn status() {}

/// Whether one client is connected, and for how long.
#[utoipa::path(get, path = "/mcp/clients/{clientId}/status", tag = "mcp",
    params(("clientId" = String, Path)),
    responses((status = 200, description = "{clientId, connected, connectedDurationMs?}"),
              (status = 400, description = "bad clientId")))]
#[allow(dead_code)]
pub(crate) async fn client_status() {}
