//! The server-mode MCP gateway (docs/mcp.md, *Server mode*): a tenant's own MCP client opens
//! `GET /mcp/connect?clientId=<tenant>` (an SSE stream, outbound from the tenant), receives
//! JSON-RPC `tools/list` / `tools/call` requests on it and posts each response to
//! `POST /mcp/message`. The server never runs tools itself; [`Gateway::tools_for`] gives the
//! runtime a [`ToolSource`] that reaches the tenant's client.
//!
//! Differences from a naive gateway, on purpose:
//! * a disconnect fails the session's pending requests at once (no waiting for the timeout);
//! * a session replaced by a reconnect is not removed by the old stream's cleanup (each
//!   session has a generation; cleanup only removes its own);
//! * the stream sends SSE keep-alive comments, so proxies do not cut an idle connection;
//! * when the server's auth layer puts an [`AuthenticatedTenant`] into the request
//!   extensions, `clientId` must be that tenant and responses are only matched to requests
//!   sent to that tenant.

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use axum::extract::{FromRef, Path, Query, State};
use axum::http::StatusCode;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json, Router};
use futures::Stream;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::client::ToolInfo;
use crate::result::{ToolFailure, render_result};
use crate::source::ToolSource;

/// Largest accepted `/mcp/message` body.
pub const MAX_MESSAGE_BYTES: usize = 1024 * 1024;

/// The identity the server's auth layer established, as a request extension.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuthenticatedTenant(pub String);

/// When the credentials of a `GET /mcp/connect` stop being accepted, as a request extension the
/// server's auth layer adds: the session's stream ends then (its pending requests fail), and
/// the client connects again with fresh credentials.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SessionDeadline(pub std::time::SystemTime);

/// Gateway settings.
#[derive(Clone, Debug)]
pub struct GatewayConfig {
    /// How long a request waits for the client's response.
    pub request_timeout: Duration,
    /// Interval of the SSE keep-alive comments.
    pub keep_alive: Duration,
    /// Largest accepted tool result in bytes.
    pub max_result_bytes: usize,
}

impl Default for GatewayConfig {
    fn default() -> Self {
        GatewayConfig {
            request_timeout: Duration::from_secs(60),
            keep_alive: Duration::from_secs(15),
            max_result_bytes: crate::config::DEFAULT_MAX_RESULT_BYTES,
        }
    }
}

struct Session {
    generation: u64,
    sender: mpsc::UnboundedSender<String>,
    connected_at: Instant,
}

struct Pending {
    client_id: String,
    generation: u64,
    reply: oneshot::Sender<Result<Value, String>>,
}

#[derive(Default)]
struct Tables {
    sessions: HashMap<String, Session>,
    pending: HashMap<String, Pending>,
}

struct Inner {
    config: GatewayConfig,
    tables: Mutex<Tables>,
    generations: AtomicU64,
}

/// The gateway's shared state (cheap to clone).
#[derive(Clone)]
pub struct Gateway {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Gateway {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (clients, pending) = self.counts();
        f.debug_struct("Gateway")
            .field("connected_clients", &clients)
            .field("pending_requests", &pending)
            .finish()
    }
}

impl Default for Gateway {
    fn default() -> Self {
        Gateway::new(GatewayConfig::default())
    }
}

impl Gateway {
    pub fn new(config: GatewayConfig) -> Self {
        Gateway {
            inner: Arc::new(Inner {
                config,
                tables: Mutex::new(Tables::default()),
                generations: AtomicU64::new(0),
            }),
        }
    }

    fn tables(&self) -> std::sync::MutexGuard<'_, Tables> {
        // A poisoned lock only means another request panicked mid-update; the maps stay usable.
        self.inner
            .tables
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// (connected clients, pending requests).
    pub fn counts(&self) -> (usize, usize) {
        let t = self.tables();
        (t.sessions.len(), t.pending.len())
    }

    /// Whether `client_id` has a live session.
    pub fn is_connected(&self, client_id: &str) -> bool {
        self.tables().sessions.contains_key(client_id)
    }

    /// Registers a new session for `client_id`, replacing (and closing) an earlier one; the
    /// earlier session's pending requests fail at once.
    fn register(&self, client_id: &str) -> (u64, mpsc::UnboundedReceiver<String>) {
        let generation = self.inner.generations.fetch_add(1, Ordering::Relaxed) + 1;
        let (tx, rx) = mpsc::unbounded_channel();
        let mut t = self.tables();
        let old = t.sessions.insert(
            client_id.to_string(),
            Session {
                generation,
                sender: tx,
                connected_at: Instant::now(),
            },
        );
        if let Some(old) = old {
            fail_pending(&mut t, client_id, old.generation, "Client reconnected");
        }
        (generation, rx)
    }

    /// The stream of `(client_id, generation)` ended: removes that session only if it is
    /// still the registered one, and fails its pending requests.
    fn disconnected(&self, client_id: &str, generation: u64) {
        let mut t = self.tables();
        if t.sessions
            .get(client_id)
            .is_some_and(|s| s.generation == generation)
        {
            t.sessions.remove(client_id);
        }
        fail_pending(&mut t, client_id, generation, "Client disconnected");
    }

    /// Sends one JSON-RPC request to `client_id`'s client and waits for the response's
    /// `result` (`null` becomes `{}`); a JSON-RPC error, no session, a disconnect or the
    /// timeout is an `Err` with the reason.
    pub async fn request(
        &self,
        client_id: &str,
        method: &str,
        params: Value,
    ) -> Result<Value, String> {
        let id = uuid::Uuid::new_v4().to_string();
        let (reply_tx, reply_rx) = oneshot::channel();
        {
            let mut t = self.tables();
            let Some(session) = t.sessions.get(client_id) else {
                return Err(format!("Client not connected: {client_id}"));
            };
            let message =
                json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string();
            if session.sender.send(message).is_err() {
                return Err(format!("Client not connected: {client_id}"));
            }
            let generation = session.generation;
            t.pending.insert(
                id.clone(),
                Pending {
                    client_id: client_id.to_string(),
                    generation,
                    reply: reply_tx,
                },
            );
        }
        let timeout = self.inner.config.request_timeout;
        match tokio::time::timeout(timeout, reply_rx).await {
            Ok(Ok(result)) => result,
            Ok(Err(_)) => Err(format!("Client disconnected: {client_id}")),
            Err(_) => {
                self.tables().pending.remove(&id);
                Err(format!(
                    "Request timed out after {}: {method}",
                    seconds_or_ms(timeout)
                ))
            }
        }
    }

    /// Lists the tenant's tools (`tools/list`) and returns a source serving them through the
    /// tenant's client. Discovery runs per call of this function (nothing is cached, so a
    /// client that reconnects with other tools is seen by the next run).
    pub async fn tools_for(&self, tenant: &str) -> Result<TenantTools, String> {
        let listed = self.request(tenant, "tools/list", json!({})).await?;
        let tools = listed
            .get("tools")
            .and_then(Value::as_array)
            .map(|tools| {
                tools
                    .iter()
                    .filter_map(|t| {
                        Some(ToolInfo {
                            name: t.get("name")?.as_str()?.to_string(),
                            description: t
                                .get("description")
                                .and_then(Value::as_str)
                                .unwrap_or_default()
                                .to_string(),
                            input_schema: t
                                .get("inputSchema")
                                .filter(|s| s.is_object())
                                .cloned()
                                .unwrap_or_else(|| json!({"type": "object", "properties": {}})),
                            server: format!("tenant:{tenant}"),
                        })
                    })
                    .collect()
            })
            .unwrap_or_default();
        Ok(TenantTools {
            gateway: self.clone(),
            tenant: tenant.to_string(),
            tools,
        })
    }

    /// Matches one JSON-RPC response to its pending request. Unknown ids, or a response from
    /// another tenant than the request went to, are ignored.
    fn deliver(&self, response: &Value, sender_tenant: Option<&str>) {
        let Some(id) = response.get("id").and_then(id_text) else {
            return;
        };
        let mut t = self.tables();
        let Some(pending) = t.pending.get(&id) else {
            return;
        };
        if sender_tenant.is_some_and(|s| s != pending.client_id) {
            return;
        }
        let Some(pending) = t.pending.remove(&id) else {
            return;
        };
        let outcome = match response.get("error") {
            Some(err) if !err.is_null() => Err(format!(
                "JSON-RPC error {}: {}",
                err.get("code").and_then(Value::as_i64).unwrap_or(0),
                err.get("message").and_then(Value::as_str).unwrap_or("")
            )),
            _ => Ok(match response.get("result") {
                None | Some(Value::Null) => json!({}),
                Some(v) => v.clone(),
            }),
        };
        let _ = pending.reply.send(outcome);
    }
}

fn fail_pending(t: &mut Tables, client_id: &str, generation: u64, why: &str) {
    let ids: Vec<String> = t
        .pending
        .iter()
        .filter(|(_, p)| p.client_id == client_id && p.generation == generation)
        .map(|(id, _)| id.clone())
        .collect();
    for id in ids {
        if let Some(p) = t.pending.remove(&id) {
            let _ = p.reply.send(Err(format!("{why}: {client_id}")));
        }
    }
}

/// `60s`, or `50ms` below a whole second.
fn seconds_or_ms(d: Duration) -> String {
    if d.subsec_millis() == 0 && d.as_secs() > 0 {
        format!("{}s", d.as_secs())
    } else {
        format!("{}ms", d.as_millis())
    }
}

/// The text of a JSON-RPC id: a string's content, a number's digits.
fn id_text(id: &Value) -> Option<String> {
    match id {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// The one id rule, [`hensu_ir::is_valid_id`].
pub use hensu_ir::is_valid_id;

/// A tenant's tools, reached through its gateway client.
#[derive(Clone, Debug)]
pub struct TenantTools {
    gateway: Gateway,
    tenant: String,
    tools: Vec<ToolInfo>,
}

#[async_trait]
impl ToolSource for TenantTools {
    fn tools(&self) -> Vec<ToolInfo> {
        self.tools.clone()
    }

    async fn call(&self, tool: &str, arguments: Value) -> Result<String, ToolFailure> {
        if !self.tools.iter().any(|t| t.name == tool) {
            return Err(ToolFailure::UnknownTool {
                tool: tool.to_string(),
                available: self.tools.iter().map(|t| t.name.clone()).collect(),
            });
        }
        let arguments = match arguments {
            Value::Null => json!({}),
            Value::Object(m) => Value::Object(m),
            _ => return Err(ToolFailure::BadArguments),
        };
        let result = self
            .gateway
            .request(
                &self.tenant,
                "tools/call",
                json!({"name": tool, "arguments": arguments}),
            )
            .await
            .map_err(|e| {
                if e.starts_with("JSON-RPC error") {
                    ToolFailure::Tool(e)
                } else {
                    ToolFailure::Transport(e)
                }
            })?;
        render_result(result, self.gateway.inner.config.max_result_bytes)
    }
}

/// The routes a tenant's MCP client uses, documented: `GET /mcp/connect` and
/// `POST /mcp/message`. Mount them behind the server's authentication, which puts the
/// caller's [`AuthenticatedTenant`] into the request (`route_layer`). Generic over the state
/// of the router they are merged into (it must give the [`Gateway`]).
pub fn client_routes<S>() -> OpenApiRouter<S>
where
    S: Clone + Send + Sync + 'static,
    Gateway: FromRef<S>,
{
    OpenApiRouter::new()
        .routes(routes!(connect))
        .routes(routes!(message))
}

/// The open status routes, documented: `GET /mcp/status` and
/// `GET /mcp/clients/{clientId}/status` (no authentication, as upstream).
pub fn status_routes<S>() -> OpenApiRouter<S>
where
    S: Clone + Send + Sync + 'static,
    Gateway: FromRef<S>,
{
    OpenApiRouter::new()
        .routes(routes!(status))
        .routes(routes!(client_status))
}

/// All four gateway routes over `gateway`, without authentication (tests, embedding).
pub fn router<S: Clone + Send + Sync + 'static>(gateway: Gateway) -> Router<S> {
    let routes: Router<Gateway> = client_routes().merge(status_routes()).into();
    routes.with_state(gateway)
}

/// The body of a refused gateway request (the server's error shape).
#[derive(Serialize, Deserialize, ToSchema)]
pub struct GatewayError {
    pub error: String,
    pub status: u16,
}

fn error(status: StatusCode, text: &str) -> Response {
    let body = GatewayError {
        error: text.to_string(),
        status: status.as_u16(),
    };
    (status, Json(body)).into_response()
}

/// Connected clients and pending requests.
#[derive(Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct GatewayStatus {
    pub connected_clients: usize,
    pub pending_requests: usize,
}

/// Whether one client is connected, and for how long.
#[derive(Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClientStatus {
    pub client_id: String,
    pub connected: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connected_duration_ms: Option<u64>,
}

const INVALID_ID: &str =
    "must be a valid identifier (alphanumeric, dots, hyphens, underscores; 1-255 chars)";

#[derive(serde::Deserialize)]
struct ConnectQuery {
    #[serde(rename = "clientId")]
    client_id: Option<String>,
}

/// Removes the session when the SSE stream is dropped (the client went away).
struct SessionGuard {
    gateway: Gateway,
    client_id: String,
    generation: u64,
}

impl Drop for SessionGuard {
    fn drop(&mut self) {
        self.gateway.disconnected(&self.client_id, self.generation);
    }
}

/// The tenant's MCP client connects: an SSE stream of JSON-RPC requests (`tools/list`,
/// `tools/call`); `clientId` must be the token's tenant.
#[utoipa::path(get, path = "/mcp/connect", tag = "mcp",
    params(("clientId" = String, Query, description = "the tenant id")),
    responses((status = 200, description = "SSE stream; each `data:` is one JSON-RPC request",
               content_type = "text/event-stream", body = String),
              (status = 400, description = "bad clientId", body = GatewayError),
              (status = 401, description = "no token"),
              (status = 403, description = "clientId is not the token's tenant", body = GatewayError)))]
async fn connect(
    State(gateway): State<Gateway>,
    tenant: Option<Extension<AuthenticatedTenant>>,
    deadline: Option<Extension<SessionDeadline>>,
    Query(query): Query<ConnectQuery>,
) -> Response {
    let client_id = query.client_id.unwrap_or_default();
    if client_id.trim().is_empty() {
        return error(StatusCode::BAD_REQUEST, "clientId: must not be blank");
    }
    if !is_valid_id(&client_id) {
        return error(StatusCode::BAD_REQUEST, &format!("clientId: {INVALID_ID}"));
    }
    if let Some(Extension(AuthenticatedTenant(t))) = &tenant
        && *t != client_id
    {
        return error(
            StatusCode::FORBIDDEN,
            "clientId: must be the authenticated tenant",
        );
    }
    let (generation, rx) = gateway.register(&client_id);
    let guard = SessionGuard {
        gateway: gateway.clone(),
        client_id,
        generation,
    };
    let keep_alive = gateway.inner.config.keep_alive;
    let ends = deadline.map(|Extension(SessionDeadline(at))| {
        at.duration_since(std::time::SystemTime::now())
            .unwrap_or_default()
    });
    let until = async move {
        match ends {
            Some(after) => tokio::time::sleep(after).await,
            None => std::future::pending::<()>().await,
        }
    };
    let stream = futures::StreamExt::take_until(session_stream(rx, guard), Box::pin(until));
    Sse::new(stream)
        .keep_alive(KeepAlive::new().interval(keep_alive))
        .into_response()
}

fn session_stream(
    rx: mpsc::UnboundedReceiver<String>,
    guard: SessionGuard,
) -> impl Stream<Item = Result<Event, Infallible>> {
    let hello = json!({"jsonrpc": "2.0", "method": "ping", "params": {"server": "hensu"}});
    let first = futures::stream::once(async move { Ok(Event::default().data(hello.to_string())) });
    let rest = futures::stream::unfold((rx, guard), |(mut rx, guard)| async move {
        let message = rx.recv().await?;
        Some((Ok(Event::default().data(message)), (rx, guard)))
    });
    futures::StreamExt::chain(first, rest)
}

/// Why a `/mcp/message` body is refused, if it is.
fn check_message(body: &str) -> Result<(), &'static str> {
    if body.trim().is_empty() {
        return Err("jsonMessage: must not be blank");
    }
    if body.len() > MAX_MESSAGE_BYTES {
        return Err("jsonMessage: must be at most 1 MiB");
    }
    if body
        .chars()
        .any(|c| c.is_control() && !matches!(c, '\n' | '\r' | '\t'))
    {
        return Err("jsonMessage: must not contain control characters");
    }
    Ok(())
}

/// One JSON-RPC response of the tenant's client, matched to its request by `id`.
#[utoipa::path(post, path = "/mcp/message", tag = "mcp",
    request_body(content = String, content_type = "application/json",
                 description = "a JSON-RPC response"),
    responses((status = 204, description = "accepted (unknown ids are ignored)"),
              (status = 400, description = "blank, too large or control characters", body = GatewayError),
              (status = 401, description = "no token")))]
async fn message(
    State(gateway): State<Gateway>,
    tenant: Option<Extension<AuthenticatedTenant>>,
    body: axum::body::Bytes,
) -> Response {
    let Ok(text) = std::str::from_utf8(&body) else {
        return error(StatusCode::BAD_REQUEST, "jsonMessage: must be UTF-8");
    };
    if let Err(why) = check_message(text) {
        return error(StatusCode::BAD_REQUEST, why);
    }
    // Unparsable or unmatched responses are dropped without echoing them (they may carry
    // tool output); the client still gets 204.
    if let Ok(response) = serde_json::from_str::<Value>(text) {
        gateway.deliver(&response, tenant.as_ref().map(|Extension(t)| t.0.as_str()));
    }
    StatusCode::NO_CONTENT.into_response()
}

/// Connected clients and pending requests.
#[utoipa::path(get, path = "/mcp/status", tag = "mcp", operation_id = "mcp_status",
    responses((status = 200, description = "the gateway's counts", body = GatewayStatus)))]
async fn status(State(gateway): State<Gateway>) -> Json<GatewayStatus> {
    let (clients, pending) = gateway.counts();
    Json(GatewayStatus {
        connected_clients: clients,
        pending_requests: pending,
    })
}

/// Whether one client is connected, and for how long.
#[utoipa::path(get, path = "/mcp/clients/{clientId}/status", tag = "mcp",
    params(("clientId" = String, Path)),
    responses((status = 200, description = "the client's connection", body = ClientStatus),
              (status = 400, description = "bad clientId", body = GatewayError)))]
async fn client_status(State(gateway): State<Gateway>, Path(client_id): Path<String>) -> Response {
    if !is_valid_id(&client_id) {
        return error(StatusCode::BAD_REQUEST, &format!("clientId: {INVALID_ID}"));
    }
    let connected_for = gateway
        .tables()
        .sessions
        .get(&client_id)
        .map(|s| s.connected_at.elapsed());
    Json(ClientStatus {
        client_id,
        connected: connected_for.is_some(),
        connected_duration_ms: connected_for
            .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
    })
    .into_response()
}
