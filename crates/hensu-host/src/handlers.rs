//! The action handlers a project declares in `hensu.toml` (`[handlers.NAME]`, docs/mcp.md,
//! *Declared action handlers*): a webhook whose headers come from environment variables, or a
//! forward to an MCP tool through the run's `mcp` handler. Registered after the run's own
//! handlers, so on a server a declared handler wins over the forward to the tenant's tools.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use hensu_project::{HandlerEntry, HandlerKind};
use hensu_runtime::{ActionHandler, ActionHandlerRegistry, ActionResult, Context};
use indexmap::IndexMap;
use serde_json::Value;

use crate::network::NetworkAccess;

/// Registers every declared handler of `handlers` in `registry` (whose `mcp` handler, when it
/// has one, serves the MCP forwards). An entry the project checks reject is skipped (a run
/// refuses such a file before it gets here).
pub fn register_declared(
    registry: &mut ActionHandlerRegistry,
    handlers: &IndexMap<String, HandlerEntry>,
    network: &NetworkAccess,
) {
    let mcp = registry.get("mcp").cloned();
    for (name, entry) in handlers {
        if hensu_project::BUILT_IN_HANDLERS.contains(&name.as_str()) {
            continue;
        }
        let handler: Arc<dyn ActionHandler> = match entry.kind() {
            Some(HandlerKind::Webhook {
                url,
                headers,
                timeout_ms,
            }) => Arc::new(DeclaredWebhook {
                name: name.clone(),
                url: url.to_string(),
                headers: headers
                    .iter()
                    .map(|(h, e)| (h.clone(), e.clone()))
                    .collect(),
                timeout: Duration::from_millis(timeout_ms),
                network: network.clone(),
                client: std::sync::OnceLock::new(),
            }),
            Some(HandlerKind::Mcp { tool }) => Arc::new(ForwardToTool {
                name: name.clone(),
                tool: tool.to_string(),
                mcp: mcp.clone(),
            }),
            None => continue,
        };
        registry.register(handler);
    }
}

/// `[handlers.NAME] url = …`: POSTs the payload as JSON; the response body is the result.
struct DeclaredWebhook {
    name: String,
    url: String,
    /// Header name → the environment variable holding its value, read at each call.
    headers: Vec<(String, String)>,
    timeout: Duration,
    network: NetworkAccess,
    client: std::sync::OnceLock<reqwest::Client>,
}

#[async_trait]
impl ActionHandler for DeclaredWebhook {
    fn handler_id(&self) -> &str {
        &self.name
    }

    async fn execute(&self, payload: &IndexMap<String, Value>, _ctx: &Context) -> ActionResult {
        // Messages name the handler, not its URL (a webhook URL often holds a token).
        let what = format!("Handler '{}'", self.name);
        if !self.network.allows(&self.url) {
            return ActionResult::success(format!(
                "simulated (offline run): POST of handler '{}' was not sent",
                self.name
            ));
        }
        let mut headers = Vec::with_capacity(self.headers.len());
        for (header, env) in &self.headers {
            match std::env::var(env) {
                Ok(value) => headers.push((header.clone(), value)),
                Err(_) => {
                    return ActionResult::failure(format!(
                        "{what}: header `{header}` needs the environment variable `{env}`, which is not set"
                    ));
                }
            }
        }
        let body = Value::Object(
            payload
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        );
        let client = self.client.get_or_init(reqwest::Client::new);
        crate::http::post_json(client, &self.url, &headers, &body, self.timeout, &what).await
    }
}

/// `[handlers.NAME] mcp = { tool = … }`: `send("NAME", payload)` calls the tool with the
/// payload as its arguments, through the run's `mcp` handler; the tool's result is the result.
struct ForwardToTool {
    name: String,
    tool: String,
    mcp: Option<Arc<dyn ActionHandler>>,
}

#[async_trait]
impl ActionHandler for ForwardToTool {
    fn handler_id(&self) -> &str {
        &self.name
    }

    async fn execute(&self, payload: &IndexMap<String, Value>, ctx: &Context) -> ActionResult {
        let Some(mcp) = &self.mcp else {
            return ActionResult::failure(format!(
                "Handler '{}': the run has no MCP tools ([mcp.servers.NAME] in hensu.toml)",
                self.name
            ));
        };
        let arguments: serde_json::Map<String, Value> = payload
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let mut wrapped = IndexMap::new();
        wrapped.insert("tool".to_string(), Value::String(self.tool.clone()));
        wrapped.insert("arguments".to_string(), Value::Object(arguments));
        mcp.execute(&wrapped, ctx).await
    }
}

/// Whether `workflow` sends to a declared handler that forwards to an MCP tool (the run's MCP
/// servers must then be started, as for `send("mcp")`).
pub(crate) fn forwards_to_mcp(
    workflow: &hensu_ir::Workflow,
    handlers: &IndexMap<String, HandlerEntry>,
) -> bool {
    workflow.nodes.values().any(|node| match node {
        hensu_ir::Node::Action(a) => a.actions.iter().any(|action| {
            matches!(action, hensu_ir::Action::Send { handler_id, .. }
                if handlers.get(handler_id).is_some_and(|h| h.mcp.is_some()))
        }),
        _ => false,
    })
}
