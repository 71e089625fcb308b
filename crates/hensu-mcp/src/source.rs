//! [`ToolSource`]: where tool calls go — local MCP servers ([`LocalMcp`]), a tenant's client
//! over the server gateway (`gateway::TenantTools`) or scripted stub files ([`ScriptedTools`]).
//! Adapters make any source an agent [`ToolExecutor`] and the `mcp` action handler.

use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use hensu_providers::{ToolExecutor, ToolSpec};
use hensu_runtime::journal::{CallKind, CallSpec, Declared, Journaled, journaled};
use hensu_runtime::{ActionHandler, ActionResult, Context};
use indexmap::IndexMap;
use serde_json::Value;

use crate::client::{ConnectError, McpClients, ToolInfo};
use crate::config::McpConfig;
use crate::result::{ToolFailure, render_result};

/// Serves tool calls by name.
#[async_trait]
pub trait ToolSource: Send + Sync {
    /// The offered tools.
    fn tools(&self) -> Vec<ToolInfo>;
    /// One `tools/call`.
    async fn call(&self, tool: &str, arguments: Value) -> Result<String, ToolFailure>;
}

#[async_trait]
impl ToolSource for McpClients {
    fn tools(&self) -> Vec<ToolInfo> {
        McpClients::tools(self).values().cloned().collect()
    }

    async fn call(&self, tool: &str, arguments: Value) -> Result<String, ToolFailure> {
        McpClients::call(self, tool, arguments).await
    }
}

/// The servers of `hensu.toml`, connected on a runtime of their own (one worker thread) so
/// they outlive and do not depend on the caller's runtime; calls hop onto it.
pub struct LocalMcp {
    runtime: Option<tokio::runtime::Runtime>,
    clients: Arc<McpClients>,
}

impl std::fmt::Debug for LocalMcp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalMcp")
            .field("clients", &self.clients)
            .finish()
    }
}

impl LocalMcp {
    /// Connects and lists every server. Blocking: call it outside any async context.
    pub fn start(config: &McpConfig, workdir: &std::path::Path) -> Result<LocalMcp, ConnectError> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("hensu-mcp")
            .enable_all()
            .build()
            .map_err(|e| ConnectError::Config(format!("cannot start the MCP runtime: {e}")))?;
        let clients = runtime.block_on(McpClients::connect(config, workdir))?;
        Ok(LocalMcp {
            runtime: Some(runtime),
            clients: Arc::new(clients),
        })
    }
}

impl Drop for LocalMcp {
    fn drop(&mut self) {
        // Never blocks (a drop may happen inside an async context); stdio children are
        // killed when their transports drop.
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_background();
        }
    }
}

#[async_trait]
impl ToolSource for LocalMcp {
    fn tools(&self) -> Vec<ToolInfo> {
        self.clients.tools().values().cloned().collect()
    }

    async fn call(&self, tool: &str, arguments: Value) -> Result<String, ToolFailure> {
        let Some(rt) = &self.runtime else {
            return Err(ToolFailure::Transport(
                "the MCP clients are shut down".into(),
            ));
        };
        let clients = self.clients.clone();
        let tool = tool.to_string();
        rt.handle()
            .spawn(async move { clients.call(&tool, arguments).await })
            .await
            .unwrap_or_else(|e| Err(ToolFailure::Transport(format!("tool task failed: {e}"))))
    }
}

/// Scripted tool results for stub runs: `stubs/<scenario>/tools/<tool>.json` (or `.txt`;
/// `stubs/default/tools/` when the scenario has none) answers every call of `<tool>`; the
/// other tools go to `inner`. Lets workflows with tools run offline in tests.
pub struct ScriptedTools {
    dirs: Vec<PathBuf>,
    inner: Option<Arc<dyn ToolSource>>,
    max_result_bytes: usize,
}

impl ScriptedTools {
    /// Scripts under `<stubs>/<scenario>/tools/` then `<stubs>/default/tools/`.
    pub fn new(
        stubs: &std::path::Path,
        scenario: Option<&str>,
        inner: Option<Arc<dyn ToolSource>>,
        max_result_bytes: usize,
    ) -> Self {
        let mut dirs = Vec::new();
        if let Some(s) = scenario.filter(|s| *s != "default" && is_plain_name(s)) {
            dirs.push(stubs.join(s).join("tools"));
        }
        dirs.push(stubs.join("default").join("tools"));
        ScriptedTools {
            dirs,
            inner,
            max_result_bytes,
        }
    }

    /// The scripted tool names (file stems), sorted.
    pub fn scripted(&self) -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        for dir in &self.dirs {
            let Ok(entries) = std::fs::read_dir(dir) else {
                continue;
            };
            for entry in entries.flatten() {
                let path = entry.path();
                let ext = path.extension().and_then(|e| e.to_str());
                if matches!(ext, Some("json" | "txt"))
                    && let Some(stem) = path.file_stem().and_then(|s| s.to_str())
                    && !names.iter().any(|n| n == stem)
                {
                    names.push(stem.to_string());
                }
            }
        }
        names.sort();
        names
    }

    fn script(&self, tool: &str) -> Option<PathBuf> {
        if !is_plain_name(tool) {
            return None;
        }
        self.dirs.iter().find_map(|dir| {
            ["json", "txt"]
                .iter()
                .map(|ext| dir.join(format!("{tool}.{ext}")))
                .find(|p| p.is_file())
        })
    }
}

/// A name usable as one path segment.
fn is_plain_name(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
        && !s.starts_with('.')
}

#[async_trait]
impl ToolSource for ScriptedTools {
    fn tools(&self) -> Vec<ToolInfo> {
        let mut tools: IndexMap<String, ToolInfo> = IndexMap::new();
        for name in self.scripted() {
            tools.insert(
                name.clone(),
                ToolInfo {
                    description: format!("The '{name}' tool (scripted stub result)."),
                    input_schema: serde_json::json!({"type": "object", "properties": {}}),
                    server: "stub".to_string(),
                    name,
                },
            );
        }
        if let Some(inner) = &self.inner {
            for t in inner.tools() {
                tools.entry(t.name.clone()).or_insert(t);
            }
        }
        tools.into_values().collect()
    }

    async fn call(&self, tool: &str, arguments: Value) -> Result<String, ToolFailure> {
        if let Some(path) = self.script(tool) {
            let text = tokio::fs::read_to_string(&path).await.map_err(|e| {
                ToolFailure::Transport(format!("cannot read `{}`: {e}", path.display()))
            })?;
            // A `.json` script is a full `tools/call` result when it has `content` or
            // `structuredContent` (so errors can be scripted too); otherwise the value itself.
            let result = match serde_json::from_str::<Value>(&text) {
                Ok(v) if v.get("content").is_some() || v.get("structuredContent").is_some() => v,
                Ok(v) if path.extension().is_some_and(|e| e == "json") => {
                    serde_json::json!({"structuredContent": v})
                }
                _ => serde_json::json!({"content": [{"type": "text", "text": text.trim_end()}]}),
            };
            return render_result(result, self.max_result_bytes);
        }
        match &self.inner {
            Some(inner) => inner.call(tool, arguments).await,
            None => Err(ToolFailure::UnknownTool {
                tool: tool.to_string(),
                available: self.scripted(),
            }),
        }
    }
}

/// A [`ToolSource`] as the agents' tool executor: its tools first (MCP wins on a name
/// clash), then `fallback`'s (the runtime's action handlers).
pub struct McpToolExecutor {
    source: Arc<dyn ToolSource>,
    tools: IndexMap<String, ToolInfo>,
    fallback: Option<Arc<dyn ToolExecutor>>,
    /// The servers' declared call policies (`[mcp.servers.X] policy`, `tool_policy`).
    policies: Arc<McpConfig>,
}

impl McpToolExecutor {
    pub fn new(source: Arc<dyn ToolSource>, fallback: Option<Arc<dyn ToolExecutor>>) -> Self {
        let tools = source
            .tools()
            .into_iter()
            .map(|t| (t.name.clone(), t))
            .collect();
        McpToolExecutor {
            source,
            tools,
            fallback,
            policies: Arc::default(),
        }
    }

    /// The call policies declared in `config`'s servers (docs/security.md, *Call journal*).
    pub fn with_policies(mut self, config: Arc<McpConfig>) -> Self {
        self.policies = config;
        self
    }

    /// The declared policy of `name`, by the server offering it.
    fn declaration(&self, name: &str) -> Option<Declared> {
        let info = self.tools.get(name)?;
        self.policies.servers.get(&info.server)?.declared(name)
    }

    pub fn into_arc(self) -> Arc<dyn ToolExecutor> {
        Arc::new(self)
    }
}

#[async_trait]
impl ToolExecutor for McpToolExecutor {
    fn has_tool(&self, name: &str) -> bool {
        self.tools.contains_key(name) || self.fallback.as_ref().is_some_and(|f| f.has_tool(name))
    }

    fn available(&self) -> Vec<String> {
        let mut names: Vec<String> = self.tools.keys().cloned().collect();
        if let Some(f) = &self.fallback {
            names.extend(
                f.available()
                    .into_iter()
                    .filter(|n| !self.tools.contains_key(n)),
            );
        }
        names
    }

    fn spec(&self, name: &str) -> ToolSpec {
        match self.tools.get(name) {
            Some(t) => ToolSpec {
                name: t.name.clone(),
                description: if t.description.is_empty() {
                    format!("The '{name}' tool.")
                } else {
                    t.description.clone()
                },
                parameters: t.input_schema.clone(),
            },
            None => self
                .fallback
                .as_ref()
                .map_or_else(|| ToolSpec::generic(name), |f| f.spec(name)),
        }
    }

    fn declared(&self, name: &str) -> Declared {
        match self.declaration(name) {
            Some(d) => d,
            None if !self.tools.contains_key(name) => self
                .fallback
                .as_ref()
                .map_or_else(Declared::default, |f| f.declared(name)),
            None => Declared::default(),
        }
    }

    fn requires_approval(&self, name: &str) -> bool {
        match self.tools.get(name) {
            Some(info) => {
                let server =
                    Some(info.server.as_str()).filter(|s| self.policies.servers.contains_key(*s));
                self.policies.requires_approval(server, name)
            }
            None => self
                .fallback
                .as_ref()
                .is_some_and(|f| f.requires_approval(name)),
        }
    }

    fn is_declared(&self, name: &str) -> bool {
        self.declaration(name).is_some()
            || (!self.tools.contains_key(name)
                && self.fallback.as_ref().is_some_and(|f| f.is_declared(name)))
    }

    async fn call(&self, name: &str, args: Value) -> Result<String, String> {
        if self.tools.contains_key(name) {
            return self
                .source
                .call(name, args)
                .await
                .map_err(|e| format!("MCP tool '{name}' failed: {e}"));
        }
        match &self.fallback {
            Some(f) => f.call(name, args).await,
            None => Err(ToolFailure::UnknownTool {
                tool: name.to_string(),
                available: self.tools.keys().cloned().collect(),
            }
            .to_string()),
        }
    }
}

/// The `mcp` action handler: `send("mcp", {"tool": "<name>", "arguments": {…}})` calls the
/// tool (without `arguments`, the other payload entries are the arguments); its result text
/// is the action's output. A missing tool name, an unknown tool or a
/// failed call fails the action (and so the node).
pub struct McpActionHandler {
    source: Option<Arc<dyn ToolSource>>,
    policies: Arc<McpConfig>,
}

impl McpActionHandler {
    /// `None`: no MCP server is configured; every call fails saying so.
    pub fn new(source: Option<Arc<dyn ToolSource>>) -> Self {
        McpActionHandler {
            source,
            policies: Arc::default(),
        }
    }

    /// The call policies declared in `config`'s servers (docs/security.md, *Call journal*).
    pub fn with_policies(mut self, config: Arc<McpConfig>) -> Self {
        self.policies = config;
        self
    }

    /// The declared policy of `tool` of `source`.
    fn declared(&self, source: &dyn ToolSource, tool: &str) -> Declared {
        source
            .tools()
            .into_iter()
            .find(|t| t.name == tool)
            .and_then(|t| self.policies.servers.get(&t.server)?.declared(tool))
            .unwrap_or_default()
    }
}

#[async_trait]
impl ActionHandler for McpActionHandler {
    fn handler_id(&self) -> &str {
        "mcp"
    }

    async fn execute(&self, payload: &IndexMap<String, Value>, _ctx: &Context) -> ActionResult {
        let Some(tool) = payload
            .get("tool")
            .and_then(Value::as_str)
            .filter(|t| !t.trim().is_empty())
        else {
            return ActionResult::failure("Missing or empty 'tool' in payload.");
        };
        let Some(source) = &self.source else {
            return ActionResult::failure(
                "MCP tool call failed: no MCP server is configured ([mcp.servers.NAME] in hensu.toml)",
            );
        };
        // `arguments` as a map, or else the payload's other entries (so their `{name}`
        // templates are resolved like any top-level payload value).
        let arguments = match payload.get("arguments") {
            Some(args) => args.clone(),
            None => Value::Object(
                payload
                    .iter()
                    .filter(|(k, _)| k.as_str() != "tool")
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect(),
            ),
        };
        // Journaled (an action, whose span is its action's): a node run again replays the
        // result.
        let spec = CallSpec {
            kind: CallKind::Action,
            name: tool,
            declared: self.declared(source.as_ref(), tool),
        };
        let call = journaled(spec, |_slot| async {
            Ok::<_, std::convert::Infallible>(match source.call(tool, arguments).await {
                Ok(out) => ((true, out), true),
                Err(e) => ((false, format!("MCP tool call failed: {e}")), false),
            })
        })
        .await;
        match call {
            Ok((true, out)) => ActionResult::success(out),
            Ok((false, message)) => ActionResult::failure(message),
            Err(Journaled::Call(e)) => ActionResult::failure(e.to_string()),
            Err(Journaled::Effect(never)) => match never {},
        }
    }
}
