//! The MCP gateway of `hensu-mcp` (docs/mcp.md, *Server mode: the gateway*) behind the
//! server's authentication: the client routes (`/mcp/connect`, `/mcp/message`) need a token,
//! and the gateway receives the token's tenant as an [`AuthenticatedTenant`] (a tenant
//! connects as itself only, and answers only the requests sent to it); the two status routes
//! stay open, as upstream's. The handlers and their OpenAPI entries live in
//! `hensu_mcp::gateway`.

use axum::extract::{FromRef, Request};
use axum::middleware::Next;
use axum::response::Response;
use hensu_mcp::gateway::{self, AuthenticatedTenant, Gateway, SessionDeadline};
use utoipa_axum::router::OpenApiRouter;

use crate::AppState;
use crate::auth::Tenant;

impl FromRef<AppState> for Gateway {
    fn from_ref(app: &AppState) -> Gateway {
        app.gateway.clone()
    }
}

/// The gateway's routes, the client routes authenticated.
pub fn routes(app: &AppState) -> OpenApiRouter<AppState> {
    gateway::client_routes()
        .route_layer(axum::middleware::from_fn_with_state(
            app.clone(),
            authenticate,
        ))
        .merge(gateway::status_routes())
}

/// The request's tenant (a 401/403 without a valid token) for the gateway, and when its token
/// stops being accepted (a session ends then).
async fn authenticate(tenant: Tenant, mut req: Request, next: Next) -> Response {
    if let Some(at) = tenant.valid_until {
        req.extensions_mut().insert(SessionDeadline(
            std::time::UNIX_EPOCH + std::time::Duration::from_secs(at),
        ));
    }
    req.extensions_mut()
        .insert(AuthenticatedTenant(tenant.tenant_id));
    next.run(req).await
}
