//! Tools in server mode (docs/mcp.md, *Server mode: the gateway*): the server never runs a tool
//! or a local command itself. Agent tool calls and `send("mcp", …)` go to the tenant's own MCP
//! client over the gateway ([`hensu_mcp::gateway`]); a `send` to a handler id nobody
//! registered is forwarded there as the tool of that name, as upstream does; `execute(...)`
//! actions are refused.

use std::sync::Arc;

use async_trait::async_trait;
use hensu_host::launch::RunToolSet;
use hensu_ir::{Action, Node, Workflow};
use hensu_mcp::gateway::Gateway;
use hensu_mcp::{McpActionHandler, McpToolExecutor, ToolFailure, ToolInfo, ToolSource};
use hensu_providers::ToolExecutor;
use hensu_runtime::{ActionHandler, ActionHandlerRegistry, ActionResult, Context, MapRepository};
use indexmap::IndexMap;
use serde_json::Value;

/// The refusal of every `execute(...)` action on the server (upstream's wording); a server
/// run's setup allows no local commands ([`hensu_host::launch::RefuseCommands`]).
pub use hensu_host::launch::{NO_LOCAL_COMMANDS, RefuseCommands};

/// The tools of one server run: the tenant's MCP tools (when the run can call one), as the
/// `mcp` action handler, a forward for every `send` to an id no server handler has, and the
/// agents' tool executor.
pub struct TenantTools {
    source: Option<Arc<dyn ToolSource>>,
    /// `send` handler ids forwarded to the tenant's MCP client.
    forwarded: Vec<String>,
    /// The `[mcp]` section of the server's project: its `require_approval` patterns gate the
    /// tenants' tools too (docs/mcp.md, *Tool approval*).
    policies: Arc<hensu_mcp::McpConfig>,
}

impl TenantTools {
    /// The tools under the `[mcp]` section `config` (its approval patterns).
    pub fn with_policies(mut self, config: &hensu_mcp::McpConfig) -> TenantTools {
        self.policies = Arc::new(config.clone());
        self
    }
}

impl RunToolSet for TenantTools {
    fn register_actions(&self, actions: &mut ActionHandlerRegistry) {
        let Some(source) = &self.source else {
            return;
        };
        actions.register(Arc::new(McpActionHandler::new(Some(source.clone()))));
        for id in &self.forwarded {
            actions.register(Arc::new(ForwardToMcp {
                handler_id: id.clone(),
                mcp: McpActionHandler::new(Some(source.clone())),
            }));
        }
    }

    fn tool_executor(&self, fallback: Arc<dyn ToolExecutor>) -> Arc<dyn ToolExecutor> {
        match &self.source {
            Some(source) => McpToolExecutor::new(source.clone(), Some(fallback))
                .with_policies(self.policies.clone())
                .into_arc(),
            None => fallback,
        }
    }

    fn notes(&self) -> Vec<String> {
        Vec::new()
    }
}

/// The `send` handler ids of `workflow` and its sub-workflows, in order of appearance.
fn send_targets<'a>(workflows: impl Iterator<Item = &'a Workflow>) -> Vec<String> {
    let mut ids: Vec<String> = Vec::new();
    for wf in workflows {
        for node in wf.nodes.values() {
            if let Node::Action(action) = node {
                for a in &action.actions {
                    if let Action::Send { handler_id, .. } = a
                        && !ids.contains(handler_id)
                    {
                        ids.push(handler_id.clone());
                    }
                }
            }
        }
    }
    ids
}

/// The tools of a run of `tenant`. The tenant's tools are listed through its gateway client
/// (`tools/list`) only when the run can call one: an agent declares `tools`, or an action
/// sends to `mcp` or to a handler id no server handler has. When the client is not connected,
/// the run still starts; each tool call then fails with the reason.
pub async fn for_run(
    gateway: &Gateway,
    tenant: &str,
    workflow: &Workflow,
    repository: &MapRepository,
) -> TenantTools {
    let handlers = hensu_host::action_handlers(None);
    let forwarded: Vec<String> =
        send_targets(std::iter::once(workflow).chain(repository.workflows()))
            .into_iter()
            .filter(|id| id != "mcp" && handlers.get(id).is_none())
            .collect();
    let needs_tools = !forwarded.is_empty()
        || hensu_mcp::uses_tools(workflow)
        || repository.workflows().any(hensu_mcp::uses_tools);
    let source: Option<Arc<dyn ToolSource>> = if needs_tools {
        Some(match gateway.tools_for(tenant).await {
            Ok(tools) => Arc::new(tools),
            Err(reason) => {
                tracing::warn!(tenant, reason, "the tenant's MCP tools could not be listed");
                Arc::new(Unavailable(reason))
            }
        })
    } else {
        None
    };
    TenantTools {
        source,
        forwarded,
        policies: Arc::default(),
    }
}

/// The tenant's tools when they could not be listed: none offered, every call fails saying why.
struct Unavailable(String);

#[async_trait]
impl ToolSource for Unavailable {
    fn tools(&self) -> Vec<ToolInfo> {
        Vec::new()
    }

    async fn call(&self, _tool: &str, _arguments: Value) -> Result<String, ToolFailure> {
        Err(ToolFailure::Transport(self.0.clone()))
    }
}

/// `send("<id>", payload)` to an id no server handler has: upstream routes it through `mcp`
/// as `{"tool": "<id>", "arguments": payload}` (the payload's templates already resolved).
struct ForwardToMcp {
    handler_id: String,
    mcp: McpActionHandler,
}

#[async_trait]
impl ActionHandler for ForwardToMcp {
    fn handler_id(&self) -> &str {
        &self.handler_id
    }

    async fn execute(&self, payload: &IndexMap<String, Value>, ctx: &Context) -> ActionResult {
        let arguments: serde_json::Map<String, Value> = payload
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let mut wrapped = IndexMap::new();
        wrapped.insert("tool".to_string(), Value::String(self.handler_id.clone()));
        wrapped.insert("arguments".to_string(), Value::Object(arguments));
        self.mcp.execute(&wrapped, ctx).await
    }
}
