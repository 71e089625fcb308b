//! The agent abstraction: an [`AgentProvider`] creates [`Agent`]s for the models it supports;
//! the [`AgentRegistry`] picks, per workflow agent, the supporting provider with the highest
//! priority (upstream `AgentFactory` / `DefaultAgentRegistry`).

use std::collections::HashMap;
use std::sync::Arc;

use async_trait::async_trait;
use hensu_ir::AgentConfig;
use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::value::Context;

/// One call of an agent.
#[derive(Debug)]
pub struct AgentRequest<'a> {
    /// The node being executed (parallel node id for branches).
    pub node_id: &'a str,
    /// The resolved and enriched user prompt.
    pub prompt: &'a str,
    /// The system prompt built from the agent's role and instructions ([`system_prompt`]).
    pub system_prompt: &'a str,
    /// The workflow context at the time of the call (read-only).
    pub context: &'a Context,
}

/// Token usage reported by a provider.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
}

/// A successful agent answer.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AgentResponse {
    pub text: String,
    pub metadata: IndexMap<String, Value>,
    pub usage: Option<Usage>,
}

impl AgentResponse {
    /// A response with only text.
    pub fn text(text: impl Into<String>) -> Self {
        AgentResponse {
            text: text.into(),
            ..AgentResponse::default()
        }
    }
}

/// A failed agent call; becomes a FAILURE node result (`errorType` = `kind`).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct AgentError {
    /// Short machine-readable kind (`timeout`, `http`, `provider`, …).
    pub kind: String,
    pub message: String,
}

impl AgentError {
    pub fn new(kind: impl Into<String>, message: impl Into<String>) -> Self {
        AgentError {
            kind: kind.into(),
            message: message.into(),
        }
    }
}

/// A configured agent (one per workflow agent id).
#[async_trait]
pub trait Agent: Send + Sync {
    /// The agent id.
    fn id(&self) -> &str;
    /// The agent's configuration.
    fn config(&self) -> &AgentConfig;
    /// Runs one prompt.
    async fn execute(&self, request: AgentRequest<'_>) -> Result<AgentResponse, AgentError>;
    /// True when the agent enforces its own per-request timeout (and retries within it); the
    /// engine then applies only [`crate::RunOptions::default_agent_timeout`] as an overall cap.
    fn manages_timeouts(&self) -> bool {
        false
    }
}

/// A backend able to serve some models.
pub trait AgentProvider: Send + Sync {
    /// Provider name (`stub`, `anthropic`, …).
    fn name(&self) -> &str;
    /// Whether this provider can serve `model`.
    fn supports_model(&self, model: &str) -> bool;
    /// Higher wins when several providers support a model (stub: 1000 when enabled).
    fn priority(&self) -> i32;
    /// Creates the agent for `config`.
    fn create_agent(
        &self,
        config: &AgentConfig,
        credentials: &HashMap<String, String>,
    ) -> Result<Arc<dyn Agent>, AgentError>;
}

/// The system prompt of an agent: its role, then its instructions after a blank line.
pub fn system_prompt(config: &AgentConfig) -> String {
    match config
        .instructions
        .as_deref()
        .filter(|s| !s.trim().is_empty())
    {
        Some(instr) => format!("{}\n\n{}", config.role, instr),
        None => config.role.clone(),
    }
}

/// Agents by id, created from a workflow's agent configurations.
#[derive(Clone, Default)]
pub struct AgentRegistry {
    /// Agent and its precomputed system prompt. Fx-hashed: every standard node step looks
    /// its agent up by id.
    agents: HashMap<String, (Arc<dyn Agent>, String), crate::value::FxBuildHasher>,
}

impl std::fmt::Debug for AgentRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentRegistry")
            .field("agents", &self.agents.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl AgentRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Creates every agent of `agents` with the best provider for its model.
    pub fn from_configs<'a>(
        agents: impl IntoIterator<Item = &'a AgentConfig>,
        providers: &[Arc<dyn AgentProvider>],
        credentials: &HashMap<String, String>,
    ) -> Result<Self, AgentError> {
        let mut registry = AgentRegistry::new();
        for config in agents {
            let provider = select_provider(providers, &config.model).ok_or_else(|| {
                AgentError::new(
                    "provider",
                    format!(
                        "no agent provider supports model '{}' (agent '{}')",
                        config.model, config.id
                    ),
                )
            })?;
            let agent = provider.create_agent(config, credentials)?;
            registry.register(agent);
        }
        Ok(registry)
    }

    /// Registers (or replaces) an agent under its id.
    pub fn register(&mut self, agent: Arc<dyn Agent>) {
        let prompt = system_prompt(agent.config());
        self.agents.insert(agent.id().to_string(), (agent, prompt));
    }

    /// Looks an agent up.
    pub fn get(&self, id: &str) -> Option<&Arc<dyn Agent>> {
        self.agents.get(id).map(|(a, _)| a)
    }

    /// Looks an agent and its system prompt up.
    pub fn get_with_system_prompt(&self, id: &str) -> Option<(&Arc<dyn Agent>, &str)> {
        self.agents.get(id).map(|(a, p)| (a, p.as_str()))
    }

    /// Number of agents.
    pub fn len(&self) -> usize {
        self.agents.len()
    }

    /// Whether no agent is registered.
    pub fn is_empty(&self) -> bool {
        self.agents.is_empty()
    }
}

/// The supporting provider with the highest priority (first registered wins ties); providers
/// with a negative priority are disabled.
pub fn select_provider<'p>(
    providers: &'p [Arc<dyn AgentProvider>],
    model: &str,
) -> Option<&'p Arc<dyn AgentProvider>> {
    let mut best: Option<&Arc<dyn AgentProvider>> = None;
    for p in providers {
        if p.priority() < 0 || !p.supports_model(model) {
            continue;
        }
        if best.is_none_or(|b| p.priority() > b.priority()) {
            best = Some(p);
        }
    }
    best
}
