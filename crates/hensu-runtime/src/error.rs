//! Run-time errors. Messages follow upstream Hensu's wording where it has one.

use serde::{Deserialize, Serialize};

use crate::validate::OutputViolation;

/// A failure that ends a run (the run's state is returned alongside it).
#[derive(Clone, Debug, PartialEq, thiserror::Error, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum RuntimeError {
    #[error("Node not found: {node}")]
    NodeNotFound { node: String },
    /// `tried`: what each rule saw (docs/language.md, *Runtime semantics*).
    #[error("No valid transition from {node}{}", tried_suffix(.tried))]
    NoValidTransition {
        node: String,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        tried: Vec<String>,
    },
    #[error("Agent not found: {agent}")]
    AgentNotFound { agent: String },
    #[error("Node '{node}' has no agent")]
    NoAgent { node: String },
    #[error(
        "No handler registered for generic executor type: {executor_type}. Register a handler using registry.registerGenericHandler(\"{executor_type}\", handler)"
    )]
    NoGenericHandler { executor_type: String },
    #[error("Node [{node}] output {violation}")]
    OutputValidation {
        node: String,
        violation: OutputViolation,
    },
    #[error("missing required input{}: {}", if .names.len() == 1 { "" } else { "s" }, .names.join(", "))]
    MissingInputs { names: Vec<String> },
    /// Inputs that do not fit the schema: every problem at once.
    #[error("invalid inputs: {}", .problems.join("; "))]
    InvalidInputs { problems: Vec<String> },
    #[error("run exceeded maxSteps = {limit}; last nodes: {}", .last_nodes.join(" → "))]
    MaxStepsExceeded { limit: u64, last_nodes: Vec<String> },
    #[error("run exceeded maxExecutionTime = {limit_ms} ms; last nodes: {}", .last_nodes.join(" → "))]
    TimeLimitExceeded {
        limit_ms: u64,
        last_nodes: Vec<String>,
    },
    #[error("run cancelled; last nodes: {}", .last_nodes.join(" → "))]
    Cancelled { last_nodes: Vec<String> },
    #[error("Judge agent not found: {agent}")]
    JudgeNotFound { agent: String },
    #[error("Judge agent failed: {message}")]
    JudgeFailed { message: String },
    #[error("Judge agent output {violation}")]
    JudgeOutput { violation: OutputViolation },
    #[error("invalid workflow: {message}")]
    InvalidWorkflow { message: String },
    #[error("agent setup failed: {message}")]
    AgentSetup { message: String },
    #[error("the run is already terminal")]
    AlreadyTerminal,
    /// The durable state store refused a checkpoint (lease lost, stale write, I/O…).
    #[error("state store: {message}")]
    Store { message: String },
    #[error("fork '{node}': {message}")]
    Fork { node: String, message: String },
    #[error("sub-workflow node '{node}': {message}")]
    SubWorkflow { node: String, message: String },
}

fn tried_suffix(tried: &[String]) -> String {
    if tried.is_empty() {
        String::new()
    } else {
        format!("; rules tried: {}", tried.join("; "))
    }
}
