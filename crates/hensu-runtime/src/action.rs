//! Action nodes (docs/language.md, *Action node* and *Actions and commands*): `send` dispatches a payload to a
//! registered [`ActionHandler`] (built in: `log`; the host adds `webhook`); `execute` asks the
//! [`CommandRunner`] to run a named command. The engine does no I/O itself: handlers and the
//! command runner are supplied by the host (`hensu-host`).

use std::sync::Arc;

use async_trait::async_trait;
use indexmap::IndexMap;
use serde_json::Value;

use crate::value::{Context, java_to_string};

/// The result of one action.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ActionResult {
    pub success: bool,
    /// Output on success, the error message on failure.
    pub output: String,
}

impl ActionResult {
    pub fn success(output: impl Into<String>) -> Self {
        ActionResult {
            success: true,
            output: output.into(),
        }
    }

    pub fn failure(message: impl Into<String>) -> Self {
        ActionResult {
            success: false,
            output: message.into(),
        }
    }
}

/// Receives the payload of a `send` action.
#[async_trait]
pub trait ActionHandler: Send + Sync {
    /// The id used in `send("<id>", …)`.
    fn handler_id(&self) -> &str;
    /// Handles one payload (already template-resolved unless the action is raw).
    async fn execute(&self, payload: &IndexMap<String, Value>, ctx: &Context) -> ActionResult;
    /// Whether the output of a success is a result the node stores (under its id and into its
    /// `writes`; docs/language.md, *Action node*) rather than a report: `false` for `log`.
    fn produces_result(&self) -> bool {
        true
    }
}

/// Action handlers by id (in registration order).
#[derive(Clone, Default)]
pub struct ActionHandlerRegistry {
    handlers: IndexMap<String, Arc<dyn ActionHandler>>,
}

impl std::fmt::Debug for ActionHandlerRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ActionHandlerRegistry")
            .field("handlers", &self.handlers.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl ActionHandlerRegistry {
    pub fn new() -> Self {
        Self::default()
    }

    /// The handlers that need no I/O: `log`.
    pub fn with_defaults() -> Self {
        let mut r = Self::new();
        r.register(Arc::new(LogHandler));
        r
    }

    pub fn register(&mut self, handler: Arc<dyn ActionHandler>) {
        self.handlers
            .insert(handler.handler_id().to_string(), handler);
    }

    pub fn get(&self, id: &str) -> Option<&Arc<dyn ActionHandler>> {
        self.handlers.get(id)
    }

    /// The registered ids, in registration order.
    pub fn ids(&self) -> Vec<&str> {
        self.handlers.keys().map(String::as_str).collect()
    }
}

/// `log`: returns `[LEVEL] message` (payload `message`, `level` default `info`); the executor
/// reports it as an `action_executed` event.
#[derive(Clone, Copy, Debug, Default)]
pub struct LogHandler;

#[async_trait]
impl ActionHandler for LogHandler {
    fn handler_id(&self) -> &str {
        "log"
    }

    fn produces_result(&self) -> bool {
        false
    }

    async fn execute(&self, payload: &IndexMap<String, Value>, _ctx: &Context) -> ActionResult {
        let level = payload
            .get("level")
            .map(java_to_string)
            .unwrap_or_else(|| "info".to_string())
            .to_ascii_uppercase();
        let message = match payload.get("message") {
            Some(v) => java_to_string(v),
            None => crate::value::compact_json(&Value::Object(
                payload
                    .iter()
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect(),
            )),
        };
        ActionResult::success(format!("[{level}] {message}"))
    }
}

/// Runs the named commands of `execute` actions (the host implements it; `hensu-host` runs
/// the commands of `commands.yaml` through `/bin/sh`).
#[async_trait]
pub trait CommandRunner: Send + Sync {
    /// Runs command `id` against `ctx`. An unknown id is a failure naming the known ones.
    async fn execute(&self, id: &str, ctx: &Context) -> ActionResult;
}

/// The command runner of an engine without commands: every id is unknown.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoCommands;

#[async_trait]
impl CommandRunner for NoCommands {
    async fn execute(&self, id: &str, _ctx: &Context) -> ActionResult {
        ActionResult::failure(format!(
            "Command not found in registry: '{id}'. Available commands: []"
        ))
    }
}
