//! The tenant's side of the server-mode gateway (docs/mcp.md, *Server mode: `hensuc mcp
//! connect`*): the MCP servers of a project's `hensu.toml`, connected as in a local run
//! ([`McpClients`]), offered to a hensu server's runs of one tenant. The bridge holds the
//! gateway's `GET /mcp/connect` stream, answers each JSON-RPC request on it (`tools/list`,
//! `tools/call`, `ping`) from the local servers, and posts the response to `POST
//! /mcp/message`; a lost stream is reconnected with a growing delay. So a team that moves from
//! `hensuc run` to `hensuc serve` keeps its tool configuration.

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt as _;
use reqwest_rmcp as reqwest;
use serde_json::{Value, json};

use crate::client::McpClients;
use crate::result::ToolFailure;

/// The largest response the gateway accepts on `POST /mcp/message` (docs/mcp.md); a larger
/// result is answered with a JSON-RPC error instead of a post the gateway would refuse.
pub const MAX_RESPONSE_BYTES: usize = 1024 * 1024;
/// The first delay before a reconnection; it doubles up to [`MAX_RETRY`], and starts over once
/// a connection was accepted.
const FIRST_RETRY: Duration = Duration::from_millis(500);
const MAX_RETRY: Duration = Duration::from_secs(30);
/// How long posting one response may take.
const POST_TIMEOUT: Duration = Duration::from_secs(30);
/// How long an accepted stream may stay silent before it is taken as lost (a connection that
/// died without closing): the gateway sends a keep-alive comment every 15 s.
pub const DEFAULT_IDLE_LIMIT: Duration = Duration::from_secs(60);

/// Where the bridge connects: a hensu server's base URL, the tenant's bearer token (none for a
/// server without authentication) and the tenant's id (the gateway's `clientId`).
#[derive(Clone)]
pub struct BridgeTarget {
    pub server: String,
    pub token: Option<String>,
    pub tenant: String,
    /// A PEM file of the authorities to trust for an `https://` server instead of the public
    /// roots (a server whose certificate a private authority signed), as `ca_file` of an MCP
    /// server (docs/mcp.md, *Configuration*).
    pub ca_file: Option<std::path::PathBuf>,
    /// [`DEFAULT_IDLE_LIMIT`] unless a test needs it shorter.
    pub idle_limit: Duration,
}

impl std::fmt::Debug for BridgeTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BridgeTarget")
            .field("server", &shown_url(&self.server))
            .field("tenant", &self.tenant)
            .finish_non_exhaustive()
    }
}

/// What the bridge reports as it goes (the CLI prints them).
#[derive(Clone, Debug, PartialEq)]
pub enum BridgeEvent {
    /// The gateway accepted the stream; the tenant's runs now see the tools.
    Connected,
    /// The stream could not be opened or ended; the next attempt is in `retry_in`.
    Disconnected { reason: String, retry_in: Duration },
    /// A `tools/call` was answered: `error` is the failure sent back (`None`: the tool's
    /// result, which may itself report a tool error with `isError`).
    Called {
        tool: String,
        error: Option<String>,
        elapsed: Duration,
    },
    /// A response could not be posted (the gateway fails the request at its timeout).
    ResponseLost { reason: String },
}

/// Why the bridge stopped: the server refused the connection for a reason a retry does not
/// change (a bad token, another tenant's id, no gateway at that URL).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BridgeError {
    #[error("{server} refused the connection ({status}): {message}")]
    Refused {
        server: String,
        status: u16,
        message: String,
    },
    #[error("{0}")]
    Setup(String),
}

/// `server` without the credentials (user info, query) of its URL, for messages and logs.
pub fn shown_url(server: &str) -> String {
    crate::http_client::shown_url(server)
}

/// Serves `clients`' tools to `target`'s tenant until the server refuses the connection for
/// good (an `Err`) or `stop` completes (`Ok`). `events` hears each connection, disconnection
/// and answered call.
pub async fn serve_tenant_tools(
    clients: Arc<McpClients>,
    target: &BridgeTarget,
    events: Arc<dyn Fn(BridgeEvent) + Send + Sync>,
    stop: impl std::future::Future<Output = ()>,
) -> Result<(), BridgeError> {
    if !hensu_ir::is_valid_id(&target.tenant) {
        return Err(BridgeError::Setup(format!(
            "`{}` is not a tenant id the gateway accepts ([a-zA-Z0-9][a-zA-Z0-9._-]{{0,254}})",
            target.tenant
        )));
    }
    let http =
        crate::http_client::http_client(target.ca_file.as_deref()).map_err(BridgeError::Setup)?;
    let base = target.server.trim_end_matches('/').to_string();
    let connection = async {
        let mut retry = FIRST_RETRY;
        loop {
            let reason = match connect(&http, &base, target).await {
                Ok(stream) => {
                    retry = FIRST_RETRY;
                    events(BridgeEvent::Connected);
                    serve_stream(stream, &http, &base, target, &clients, &events).await
                }
                Err(Attempt::Refused(e)) => return Err(e),
                Err(Attempt::Failed(reason)) => reason,
            };
            events(BridgeEvent::Disconnected {
                reason,
                retry_in: retry,
            });
            tokio::time::sleep(retry).await;
            retry = (retry * 2).min(MAX_RETRY);
        }
    };
    tokio::select! {
        done = connection => done,
        () = stop => Ok(()),
    }
}

enum Attempt {
    Refused(BridgeError),
    Failed(String),
}

async fn connect(
    http: &reqwest::Client,
    base: &str,
    target: &BridgeTarget,
) -> Result<reqwest::Response, Attempt> {
    // The id is checked by `serve_tenant_tools`: URL-safe characters only.
    let mut request = http
        .get(format!("{base}/mcp/connect?clientId={}", target.tenant))
        .header("accept", "text/event-stream");
    if let Some(token) = &target.token {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.map_err(|e| {
        Attempt::Failed(format!(
            "cannot reach {}: {}",
            shown_url(base),
            without_url(&e)
        ))
    })?;
    let status = response.status();
    if status.is_success() {
        return Ok(response);
    }
    let body = response.text().await.unwrap_or_default();
    let message = serde_json::from_str::<Value>(&body)
        .ok()
        .and_then(|v| v.get("error").and_then(Value::as_str).map(str::to_string))
        .unwrap_or_else(|| body.chars().take(200).collect());
    // Authentication, the tenant's id and a missing route do not change by retrying; a
    // server that is starting, overloaded or behind a proxy in trouble may.
    if matches!(status.as_u16(), 400 | 401 | 403 | 404 | 405) {
        Err(Attempt::Refused(BridgeError::Refused {
            server: shown_url(base),
            status: status.as_u16(),
            message,
        }))
    } else {
        Err(Attempt::Failed(format!("{status}: {message}")))
    }
}

/// A reqwest error's text with its causes (a refused connection, a certificate problem), without
/// the URL it carries (which may hold credentials).
fn without_url(e: &reqwest::Error) -> String {
    let mut text = e.to_string();
    if let Some(at) = text.find(" for url (") {
        text.truncate(at);
    }
    let mut cause = std::error::Error::source(e);
    while let Some(c) = cause {
        let more = c.to_string();
        if !text.contains(&more) {
            text = format!("{text}: {more}");
        }
        cause = c.source();
    }
    text
}

/// Answers the requests of one accepted stream until it ends; the reason it ended.
async fn serve_stream(
    response: reqwest::Response,
    http: &reqwest::Client,
    base: &str,
    target: &BridgeTarget,
    clients: &Arc<McpClients>,
    events: &Arc<dyn Fn(BridgeEvent) + Send + Sync>,
) -> String {
    // Every chunk counts as a sign of life, the keep-alive comments (which the SSE parser
    // does not hand on) too.
    let opened = Instant::now();
    let heard = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let bytes = response.bytes_stream().inspect({
        let heard = heard.clone();
        move |_| {
            heard.store(
                millis(opened.elapsed()),
                std::sync::atomic::Ordering::Relaxed,
            )
        }
    });
    let mut stream = sse_stream::SseStream::from_bytes_stream(bytes);
    let limit = target.idle_limit;
    let mut check = tokio::time::interval((limit / 4).max(Duration::from_millis(10)));
    // Calls in flight are answered side by side; they end with the stream (the gateway fails
    // a disconnected session's pending requests itself).
    let mut calls = tokio::task::JoinSet::new();
    loop {
        let message = tokio::select! {
            next = stream.next() => next,
            Some(_) = calls.join_next() => continue,
            _ = check.tick() => {
                let last = heard.load(std::sync::atomic::Ordering::Relaxed);
                if millis(opened.elapsed()).saturating_sub(last) > millis(limit) {
                    return format!(
                        "nothing heard from the server for {} s",
                        limit.as_secs_f64()
                    );
                }
                continue;
            }
        };
        let event = match message {
            None => return "the server closed the stream".to_string(),
            Some(Err(e)) => return format!("the stream broke: {e}"),
            Some(Ok(event)) => event,
        };
        let Some(data) = event.data else { continue };
        let Ok(request) = serde_json::from_str::<Value>(&data) else {
            continue;
        };
        let (http, clients, events) = (http.clone(), clients.clone(), events.clone());
        let url = format!("{base}/mcp/message");
        let token = target.token.clone();
        calls.spawn(async move {
            let Some(response) = answer(&clients, &request, &events).await else {
                return;
            };
            let mut post = http
                .post(&url)
                .timeout(POST_TIMEOUT)
                .header("content-type", "application/json")
                .body(response.to_string());
            if let Some(token) = &token {
                post = post.bearer_auth(token);
            }
            let lost = match post.send().await {
                Ok(r) if r.status().is_success() => None,
                Ok(r) => Some(format!("the server answered {}", r.status())),
                Err(e) => Some(without_url(&e)),
            };
            if let Some(reason) = lost {
                events(BridgeEvent::ResponseLost { reason });
            }
        });
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// The JSON-RPC response to one message of the stream; `None` for a notification (no `id`,
/// such as the gateway's greeting `ping`).
async fn answer(
    clients: &McpClients,
    request: &Value,
    events: &Arc<dyn Fn(BridgeEvent) + Send + Sync>,
) -> Option<Value> {
    let id = request.get("id").filter(|id| !id.is_null())?.clone();
    let params = request.get("params").cloned().unwrap_or(Value::Null);
    let outcome = match request.get("method").and_then(Value::as_str) {
        Some("tools/list") => Ok(tool_list(clients)),
        Some("tools/call") => call(clients, &params, events).await,
        Some("ping") => Ok(json!({})),
        Some(other) => Err((-32601, format!("method not found: {other}"))),
        None => Err((-32600, "a request without a method".to_string())),
    };
    let response = match outcome {
        Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
        Err((code, message)) => error(&id, code, &message),
    };
    let size = response.to_string().len();
    Some(if size > MAX_RESPONSE_BYTES {
        error(
            &id,
            -32603,
            &format!(
                "the result is {size} bytes, over the gateway's limit of {MAX_RESPONSE_BYTES} bytes"
            ),
        )
    } else {
        response
    })
}

fn error(id: &Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

fn tool_list(clients: &McpClients) -> Value {
    let tools: Vec<Value> = clients
        .tools()
        .values()
        .map(|t| json!({"name": t.name, "description": t.description, "inputSchema": t.input_schema}))
        .collect();
    json!({ "tools": tools })
}

async fn call(
    clients: &McpClients,
    params: &Value,
    events: &Arc<dyn Fn(BridgeEvent) + Send + Sync>,
) -> Result<Value, (i64, String)> {
    let Some(tool) = params.get("name").and_then(Value::as_str) else {
        return Err((-32602, "tools/call: `name` is missing".to_string()));
    };
    let arguments = params.get("arguments").cloned().unwrap_or(Value::Null);
    let started = Instant::now();
    let outcome = clients.call_raw(tool, arguments).await.map_err(|e| {
        let code = match e {
            ToolFailure::UnknownTool { .. } | ToolFailure::BadArguments => -32602,
            _ => -32603,
        };
        (code, e.to_string())
    });
    events(BridgeEvent::Called {
        tool: tool.to_string(),
        error: outcome.as_ref().err().map(|(_, m)| m.clone()),
        elapsed: started.elapsed(),
    });
    outcome
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_is_shown_without_its_credentials() {
        assert_eq!(
            shown_url("https://user:secret@hensu.example/base"),
            "https://hensu.example/base"
        );
        assert_eq!(shown_url("http://127.0.0.1:8080"), "http://127.0.0.1:8080");
        assert_eq!(
            shown_url("http://127.0.0.1:8080/a@b"),
            "http://127.0.0.1:8080/a@b"
        );
        assert_eq!(
            shown_url("https://hensu.example/?key=secret"),
            "https://hensu.example"
        );
    }
}
