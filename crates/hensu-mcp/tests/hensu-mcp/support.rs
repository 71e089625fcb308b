//! An MCP server for the tests, the example server's binary, and small helpers.

use std::path::PathBuf;
use std::sync::Arc;

use rmcp::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorData,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::transport::streamable_http_server::{
    StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager,
};
use serde_json::{Value, json};

/// A fake key a tool leaks in its output (the redaction tests look for it).
pub const LEAKED_KEY: &str = "sk-openai-test-FAKE-9876543210";

/// Tools: `echo {text}`, `boom` (a tool error), `big` (10 000 bytes), `leak` (returns
/// [`LEAKED_KEY`]), `hang` (never answers until cancelled).
#[derive(Clone, Debug, Default)]
pub struct TestServer;

fn schema(v: Value) -> Arc<serde_json::Map<String, Value>> {
    match v {
        Value::Object(m) => Arc::new(m),
        _ => Arc::default(),
    }
}

impl ServerHandler for TestServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let any = || schema(json!({"type": "object", "properties": {}}));
        Ok(ListToolsResult::with_all_items(vec![
            Tool::new(
                "echo",
                "Echoes its text.",
                schema(
                    json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
                ),
            ),
            Tool::new("boom", "Always fails.", any()),
            Tool::new("big", "A large result.", any()),
            Tool::new("leak", "Returns a secret.", any()),
            Tool::new("hang", "Never answers.", any()),
        ]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let text = |s: String| Ok(CallToolResult::success(vec![ContentBlock::text(s)]).into());
        match request.name.as_ref() {
            "echo" => text(
                request
                    .arguments
                    .as_ref()
                    .and_then(|a| a.get("text"))
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
            ),
            "boom" => Ok(CallToolResult::error(vec![ContentBlock::text("boom")]).into()),
            "big" => text("x".repeat(10_000)),
            "leak" => text(format!("the key is {LEAKED_KEY}")),
            "hang" => {
                context.ct.cancelled().await;
                Err(ErrorData::internal_error("cancelled", None))
            }
            other => Err(ErrorData::invalid_params(format!("no tool {other}"), None)),
        }
    }
}

/// Serves [`TestServer`] over streamable HTTP on a loopback port; returns its URL.
pub async fn http_server() -> String {
    let service: StreamableHttpService<TestServer, LocalSessionManager> =
        StreamableHttpService::new(
            || Ok(TestServer),
            Default::default(),
            StreamableHttpServerConfig::default(),
        );
    let router = axum::Router::new().nest_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    format!("http://{addr}/mcp")
}

/// The example stdio server (`examples/glossary_server.rs`), built by `cargo test` with the
/// other targets; built here when a filtered run skipped it.
pub fn example_server() -> PathBuf {
    let exe = std::env::current_exe().expect("test exe");
    let debug_dir = exe
        .parent()
        .and_then(|deps| deps.parent())
        .expect("target dir")
        .to_path_buf();
    let path = debug_dir.join("examples").join("glossary-server");
    if !path.is_file() {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let status = std::process::Command::new(cargo)
            .args([
                "build",
                "-q",
                "-p",
                "hensu-mcp",
                "--example",
                "glossary-server",
            ])
            .status()
            .expect("cargo build");
        assert!(status.success(), "building the example server failed");
    }
    path
}

/// A `[mcp]` config from TOML text, read as every command reads it (hensu-project).
pub fn config(toml: &str) -> hensu_mcp::McpConfig {
    parse(toml).expect("config")
}

/// The `[mcp]` section of a `hensu.toml` text with its endpoints checked: the first error of
/// the file (`hensu.toml:LINE:COL: …`) or of an endpoint (`mcp.servers.NAME: …`).
pub fn parse(toml: &str) -> Result<hensu_mcp::McpConfig, String> {
    let file = hensu_project::ProjectFile::parse(toml);
    let mcp = file.config.mcp.clone();
    mcp.endpoints()?;
    match file.refusal() {
        Some(problem) => Err(problem),
        None => Ok(mcp),
    }
}

/// `[mcp.servers.glossary]` running the example server.
pub fn glossary_config(extra: &str) -> hensu_mcp::McpConfig {
    config(&format!(
        "[mcp]\n{extra}\n[mcp.servers.glossary]\ncommand = {:?}\n",
        example_server().display().to_string()
    ))
}

/// What a request to [`traced_http_server`] carried: its `traceparent` header and, for a
/// `tools/call`, the `_meta.traceparent` of its parameters.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Seen {
    pub method: Option<String>,
    pub header: Option<String>,
    pub meta: Option<String>,
}

/// [`http_server`] behind a layer that records every POST's [`Seen`].
pub async fn traced_http_server() -> (String, Arc<std::sync::Mutex<Vec<Seen>>>) {
    let seen: Arc<std::sync::Mutex<Vec<Seen>>> = Arc::default();
    let sink = seen.clone();
    let service: StreamableHttpService<TestServer, LocalSessionManager> =
        StreamableHttpService::new(
            || Ok(TestServer),
            Default::default(),
            StreamableHttpServerConfig::default(),
        );
    let record = move |req: axum::extract::Request, next: axum::middleware::Next| {
        let sink = sink.clone();
        async move {
            let (parts, body) = req.into_parts();
            let bytes = axum::body::to_bytes(body, 1 << 20)
                .await
                .unwrap_or_default();
            if parts.method == axum::http::Method::POST {
                let v: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
                let text = |v: &Value| v.as_str().map(str::to_string);
                sink.lock().expect("seen").push(Seen {
                    method: text(&v["method"]),
                    header: parts
                        .headers
                        .get("traceparent")
                        .and_then(|h| h.to_str().ok())
                        .map(str::to_string),
                    meta: text(&v["params"]["_meta"]["traceparent"]),
                });
            }
            let req = axum::extract::Request::from_parts(parts, axum::body::Body::from(bytes));
            next.run(req).await
        }
    };
    let router = axum::Router::new()
        .nest_service("/mcp", service)
        .layer(axum::middleware::from_fn(record));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    (format!("http://{addr}/mcp"), seen)
}
