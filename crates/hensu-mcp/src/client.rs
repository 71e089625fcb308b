//! The client side: one rmcp client per configured server, their tools listed once at connect
//! time, calls routed by tool name (docs/mcp.md, *Local runs*).

use std::time::Duration;

use indexmap::IndexMap;
use rmcp::model::{CallToolRequestParams, CallToolResult, Tool};
use rmcp::service::{Peer, RoleClient, RunningService, ServiceExt};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use serde_json::Value;

use crate::config::{Endpoint, McpConfig};
use crate::http_client::redact_url;
use crate::result::{ToolFailure, render_result};

/// Environment variables a stdio server always gets (everything else is cleared, so provider
/// keys and other secrets of the run never reach a tool process; see docs/security.md).
const BASE_ENV: [&str; 4] = ["PATH", "HOME", "LANG", "TMPDIR"];

/// A tool offered by a server.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolInfo {
    pub name: String,
    pub description: String,
    /// The JSON schema of the arguments (an object schema).
    pub input_schema: Value,
    /// The server offering it.
    pub server: String,
}

impl ToolInfo {
    fn from_rmcp(tool: &Tool, server: &str) -> Self {
        ToolInfo {
            name: tool.name.to_string(),
            description: tool.description.as_deref().unwrap_or_default().to_string(),
            input_schema: Value::Object((*tool.input_schema).clone()),
            server: server.to_string(),
        }
    }
}

/// Why connecting failed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ConnectError {
    #[error("{0}")]
    Config(String),
    #[error("MCP server '{server}': {message}")]
    Server { server: String, message: String },
}

/// The connected servers and the tools they offer.
pub struct McpClients {
    /// Kept so the connections (and stdio children) live as long as the clients.
    services: Vec<RunningService<RoleClient, ()>>,
    peers: IndexMap<String, Peer<RoleClient>>,
    tools: IndexMap<String, ToolInfo>,
    call_timeout: Duration,
    max_result_bytes: usize,
    /// Each HTTP server's URL, whose credentials are cut out of error messages.
    urls: IndexMap<String, String>,
}

impl std::fmt::Debug for McpClients {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpClients")
            .field("servers", &self.peers.keys().collect::<Vec<_>>())
            .field("tools", &self.tools.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

impl McpClients {
    /// Connects every server of `config` (relative stdio commands resolve against `workdir`),
    /// runs `tools/list` on each; a server that cannot be reached or listed in the call
    /// timeout is an error naming it. A tool offered by two servers goes to the first.
    pub async fn connect(
        config: &McpConfig,
        workdir: &std::path::Path,
    ) -> Result<McpClients, ConnectError> {
        let endpoints = config.endpoints().map_err(ConnectError::Config)?;
        let timeout = config.connect_timeout();
        let mut clients = McpClients {
            services: Vec::new(),
            peers: IndexMap::new(),
            tools: IndexMap::new(),
            call_timeout: config.call_timeout(),
            max_result_bytes: config.max_result_bytes(),
            urls: IndexMap::new(),
        };
        for (name, endpoint) in endpoints {
            let fail = |message: String| ConnectError::Server {
                server: name.clone(),
                message,
            };
            let service = tokio::time::timeout(timeout, start(&endpoint, workdir))
                .await
                .map_err(|_| fail(format!("no answer within {} ms", timeout.as_millis())))?
                .map_err(fail)?;
            let listed = tokio::time::timeout(timeout, service.peer().list_all_tools())
                .await
                .map_err(|_| {
                    fail(format!(
                        "tools/list: no answer within {} ms",
                        timeout.as_millis()
                    ))
                })?
                .map_err(|e| fail(redact(&endpoint, format!("tools/list failed: {e}"))))?;
            for tool in &listed {
                clients
                    .tools
                    .entry(tool.name.to_string())
                    .or_insert_with(|| ToolInfo::from_rmcp(tool, &name));
            }
            if let Endpoint::Http { url, .. } = &endpoint {
                clients.urls.insert(name.clone(), url.clone());
            }
            clients.peers.insert(name.clone(), service.peer().clone());
            clients.services.push(service);
        }
        Ok(clients)
    }

    /// The tools, by name (in server order, then each server's order).
    pub fn tools(&self) -> &IndexMap<String, ToolInfo> {
        &self.tools
    }

    /// `tools/call` of `tool` with `arguments` (an object, or `null` for none): the result
    /// text, or why it failed (unknown tool, timeout, transport error, the tool's own error,
    /// a result over the size limit or with forbidden characters).
    pub async fn call(&self, tool: &str, arguments: Value) -> Result<String, ToolFailure> {
        render_result(self.call_raw(tool, arguments).await?, self.max_result_bytes)
    }

    /// `tools/call` of `tool` with `arguments`: the server's result object as it came (a
    /// tool's own error is a result with `isError`), for a caller that passes it on
    /// unrendered (the tenant bridge, [`crate::tenant_bridge`]); the failures of the call
    /// itself as [`McpClients::call`].
    pub async fn call_raw(&self, tool: &str, arguments: Value) -> Result<Value, ToolFailure> {
        let Some(info) = self.tools.get(tool) else {
            return Err(ToolFailure::UnknownTool {
                tool: tool.to_string(),
                available: self.tools.keys().cloned().collect(),
            });
        };
        let peer = &self.peers[&info.server];
        let mut params = CallToolRequestParams::new(tool.to_string());
        match arguments {
            Value::Object(map) => params = params.with_arguments(map),
            Value::Null => {}
            _ => return Err(ToolFailure::BadArguments),
        }
        // The run's trace (SEP-414 `_meta.traceparent`; HTTP servers also get the header).
        if let Some(tp) = hensu_runtime::trace_context::traceparent() {
            let mut meta = rmcp::model::RequestMetaObject::default();
            meta.set_traceparent(tp);
            params.meta = Some(meta);
        }
        let result: CallToolResult =
            match tokio::time::timeout(self.call_timeout, peer.call_tool(params)).await {
                Err(_) => return Err(ToolFailure::Timeout(self.call_timeout)),
                Ok(Err(e)) => {
                    let message = match self.urls.get(&info.server) {
                        Some(url) => redact_url(&e.to_string(), url),
                        None => e.to_string(),
                    };
                    return Err(ToolFailure::Transport(message));
                }
                Ok(Ok(r)) => r,
            };
        Ok(serde_json::to_value(&result).unwrap_or(Value::Null))
    }

    /// Closes every connection (stdio children get their stdin closed and are reaped).
    pub async fn shutdown(self) {
        for service in self.services {
            let _ = service.cancel().await;
        }
    }
}

/// `message` without the credentials of an HTTP endpoint's URL.
fn redact(endpoint: &Endpoint, message: String) -> String {
    match endpoint {
        Endpoint::Http { url, .. } => redact_url(&message, url),
        Endpoint::Stdio { .. } => message,
    }
}

async fn start(
    endpoint: &Endpoint,
    workdir: &std::path::Path,
) -> Result<RunningService<RoleClient, ()>, String> {
    match endpoint {
        Endpoint::Stdio { command, args, env } => {
            let program = if command.contains('/') && !std::path::Path::new(command).is_absolute() {
                workdir.join(command).to_string_lossy().into_owned()
            } else {
                command.clone()
            };
            let mut cmd = tokio::process::Command::new(&program);
            cmd.args(args).current_dir(workdir).env_clear();
            for key in BASE_ENV
                .iter()
                .copied()
                .chain(env.iter().map(String::as_str))
            {
                if let Some(value) = std::env::var_os(key) {
                    cmd.env(key, value);
                }
            }
            let transport = TokioChildProcess::new(cmd)
                .map_err(|e| format!("cannot start `{command}`: {e}"))?;
            ().serve(transport)
                .await
                .map_err(|e| format!("initialize failed: {e}"))
        }
        Endpoint::Http { url, ca_file } => {
            let ca_file = ca_file.as_deref().map(|file| workdir.join(file));
            let client = crate::http_client::http_client(ca_file.as_deref())?;
            let transport = StreamableHttpClientTransport::with_client(
                crate::http_client::TracingClient(client),
                StreamableHttpClientTransportConfig::with_uri(url.as_str()),
            );
            ().serve(transport)
                .await
                .map_err(|e| crate::http_client::describe_initialize_error(&e, url))
        }
    }
}
