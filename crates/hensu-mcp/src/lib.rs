//! hensu-mcp — tools over the Model Context Protocol (docs/mcp.md), on the official Rust SDK
//! (`rmcp`).
//!
//! * **Local runs**: [`McpConfig`] is the `[mcp]` section of `hensu.toml`; [`LocalMcp`]
//!   connects its servers (stdio children or streamable HTTP), lists their tools and serves
//!   `tools/call`. [`McpToolExecutor`] offers them to agents (the provider tool loop) and
//!   [`McpActionHandler`] to action nodes (`send("mcp", {"tool": …, "arguments": {…}})`).
//! * **Stub runs**: [`ScriptedTools`] answers tool calls from `stubs/<scenario>/tools/`.
//! * **Server mode**: [`gateway`] — a tenant's own MCP client connects over SSE and runs the
//!   tools; [`gateway::Gateway::tools_for`] is the [`ToolSource`] for that tenant's runs.
//!   The server never starts local commands. [`tenant_bridge`] is the tenant's side: the
//!   servers of a project's `hensu.toml` offered to a hensu server's runs (`hensuc mcp
//!   connect`).
//!
//! Every source returns results checked like agent output ([`render_result`]).

mod client;
mod config;
#[cfg(feature = "gateway")]
pub mod gateway;
mod http_client;
mod result;
mod run;
mod source;
pub mod tenant_bridge;

pub use client::{ConnectError, McpClients, ToolInfo};
pub use config::{
    DEFAULT_CALL_TIMEOUT_MS, DEFAULT_MAX_RESULT_BYTES, Endpoint, McpConfig, ServerConfig,
    glob_matches,
};
pub use result::{ToolFailure, render_result};
pub use run::{RunTools, uses_tools};
pub use source::{LocalMcp, McpActionHandler, McpToolExecutor, ScriptedTools, ToolSource};
