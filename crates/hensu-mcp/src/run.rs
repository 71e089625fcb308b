//! What a local run (`hensuc run`, `hensuc resume`, `hensuc worker`) needs from this crate,
//! in one call: connect the servers of the project's `[mcp]` section, add the stub scripts.

use std::path::Path;
use std::sync::Arc;

use hensu_providers::ToolExecutor;
use hensu_runtime::ActionHandlerRegistry;

use crate::config::McpConfig;
use crate::source::{LocalMcp, McpActionHandler, McpToolExecutor, ScriptedTools, ToolSource};

/// The tools of one local run.
pub struct RunTools {
    source: Option<Arc<dyn ToolSource>>,
    /// The `[mcp]` section: the servers' declared call policies.
    policies: Arc<McpConfig>,
    /// Lines for the user (`note: …`): connected servers and their tool counts, skipped
    /// servers under stubs.
    pub notes: Vec<String>,
}

impl std::fmt::Debug for RunTools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunTools")
            .field("tools", &self.tool_names())
            .field("notes", &self.notes)
            .finish()
    }
}

impl RunTools {
    /// Connects the servers of `config` (the project's `[mcp]` section, read with the rest of
    /// `hensu.toml` by `hensu_host::launch`; blocking, call outside async code). With
    /// `stubbed` (stub agents forced), `stubs/<scenario>/tools/` scripts answer first and a
    /// server that cannot be reached is a note instead of an error, so the run works offline.
    /// Without `needed` (see [`uses_tools`]) nothing is started.
    pub fn start(
        config: &McpConfig,
        workdir: &Path,
        scenario: Option<&str>,
        stubbed: bool,
        needed: bool,
    ) -> Result<Self, String> {
        if !needed {
            return Ok(RunTools {
                source: None,
                policies: Arc::new(config.clone()),
                notes: Vec::new(),
            });
        }
        let mut notes = Vec::new();
        let mut local: Option<Arc<dyn ToolSource>> = None;
        if !config.servers.is_empty() {
            match LocalMcp::start(config, workdir) {
                Ok(mcp) => {
                    let tools = mcp.tools();
                    for server in config.servers.keys() {
                        let n = tools.iter().filter(|t| &t.server == server).count();
                        notes.push(format!(
                            "MCP server `{server}`: {n} tool{}",
                            if n == 1 { "" } else { "s" }
                        ));
                    }
                    local = Some(Arc::new(mcp));
                }
                Err(e) if stubbed => {
                    notes.push(format!("{e}; stub run continues with scripted tools only"))
                }
                Err(e) => return Err(e.to_string()),
            }
        }
        let source = if stubbed {
            Some(Arc::new(ScriptedTools::new(
                &workdir.join("stubs"),
                scenario,
                local,
                config.max_result_bytes(),
            )) as Arc<dyn ToolSource>)
        } else {
            local
        };
        Ok(RunTools {
            source,
            policies: Arc::new(config.clone()),
            notes,
        })
    }

    /// The offered tool names.
    pub fn tool_names(&self) -> Vec<String> {
        self.source
            .as_ref()
            .map(|s| s.tools().into_iter().map(|t| t.name).collect())
            .unwrap_or_default()
    }

    /// Adds the `mcp` action handler to `actions`.
    pub fn register_action(&self, actions: &mut ActionHandlerRegistry) {
        actions.register(Arc::new(
            McpActionHandler::new(self.source.clone()).with_policies(self.policies.clone()),
        ));
    }

    /// The agents' tool executor: the MCP tools, then `fallback` (the action handlers).
    pub fn tool_executor(&self, fallback: Arc<dyn ToolExecutor>) -> Arc<dyn ToolExecutor> {
        match &self.source {
            Some(source) => McpToolExecutor::new(source.clone(), Some(fallback))
                .with_policies(self.policies.clone())
                .into_arc(),
            None => fallback,
        }
    }
}

/// Whether `workflow` can call a tool: an agent declares `tools`, or an action node sends to
/// `mcp`. Runs of other workflows do not start the MCP servers.
pub fn uses_tools(workflow: &hensu_ir::Workflow) -> bool {
    workflow.agents.values().any(|a| !a.tools.is_empty())
        || workflow.nodes.values().any(|node| match node {
            hensu_ir::Node::Action(action) => action.actions.iter().any(
                |a| matches!(a, hensu_ir::Action::Send { handler_id, .. } if handler_id == "mcp"),
            ),
            _ => false,
        })
}
