//! Tools an agent may call (docs/language.md, *Agents*): served by whoever implements
//! [`ToolExecutor`] — in hensu, the runtime's action handlers ([`ActionToolExecutor`]).

use std::sync::Arc;

use async_trait::async_trait;
use hensu_runtime::journal::Declared;
use hensu_runtime::{ActionHandlerRegistry, Context};
use indexmap::IndexMap;
use serde_json::Value;

use crate::wire::ToolSpec;

/// Serves tool calls.
#[async_trait]
pub trait ToolExecutor: Send + Sync {
    /// Whether `name` is served.
    fn has_tool(&self, name: &str) -> bool;
    /// The served tool names (for error messages).
    fn available(&self) -> Vec<String> {
        Vec::new()
    }
    /// The description and argument schema offered to the model.
    fn spec(&self, name: &str) -> ToolSpec {
        ToolSpec::generic(name)
    }
    /// Runs one call: `Ok(output)` or `Err(message)` (both go back to the model).
    async fn call(&self, name: &str, args: Value) -> Result<String, String>;
    /// The declared policy of `name` when a call of it was started and has no recorded
    /// result (docs/security.md, *Call journal*); undeclared: `unsafe`, failing the node.
    fn declared(&self, _name: &str) -> Declared {
        Declared::default()
    }
    /// Whether `name`'s policy was declared (`hensuc check` warns about tool loops whose
    /// tools have none, W0332).
    fn is_declared(&self, _name: &str) -> bool {
        false
    }
    /// Whether a call of `name` waits for a reviewer's approval before it runs
    /// (`require_approval` in hensu.toml; docs/mcp.md, *Tool approval*).
    fn requires_approval(&self, _name: &str) -> bool {
        false
    }
}

/// Tools served by the runtime's `send` action handlers: the arguments object becomes the
/// payload (a non-object argument is passed as `{"input": …}`), the handler's output the
/// result. Handlers run with the context given at construction (normally empty: tools do not
/// see the workflow state).
pub struct ActionToolExecutor {
    handlers: ActionHandlerRegistry,
    context: Context,
}

impl std::fmt::Debug for ActionToolExecutor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ActionToolExecutor")
            .field("handlers", &self.handlers.ids())
            .finish_non_exhaustive()
    }
}

impl ActionToolExecutor {
    pub fn new(handlers: ActionHandlerRegistry) -> Self {
        ActionToolExecutor {
            handlers,
            context: Context::default(),
        }
    }

    /// The context handed to handlers.
    pub fn with_context(mut self, context: Context) -> Self {
        self.context = context;
        self
    }

    pub fn into_arc(self) -> Arc<dyn ToolExecutor> {
        Arc::new(self)
    }
}

#[async_trait]
impl ToolExecutor for ActionToolExecutor {
    fn has_tool(&self, name: &str) -> bool {
        self.handlers.get(name).is_some()
    }

    fn available(&self) -> Vec<String> {
        self.handlers
            .ids()
            .into_iter()
            .map(str::to_string)
            .collect()
    }

    async fn call(&self, name: &str, args: Value) -> Result<String, String> {
        let Some(handler) = self.handlers.get(name) else {
            return Err(format!("unknown tool '{name}'"));
        };
        let payload: IndexMap<String, Value> = match args {
            Value::Object(map) => map.into_iter().collect(),
            Value::Null => IndexMap::new(),
            other => IndexMap::from([("input".to_string(), other)]),
        };
        let result = handler.execute(&payload, &self.context).await;
        if result.success {
            Ok(result.output)
        } else {
            Err(result.output)
        }
    }
}
