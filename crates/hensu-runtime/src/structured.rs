//! The seam for structured (JSON) answers: the providers crate implements it with a
//! correcting re-prompt; without one the engine calls the agent directly.

use async_trait::async_trait;

use crate::agent::{Agent, AgentError, AgentRequest, AgentResponse};
use crate::events::ExecutionListener;

/// Calls an agent for a node that expects a JSON answer with `required_keys`, correcting the
/// answer with a re-prompt when keys are missing (implemented by the providers crate; without
/// one the engine calls the agent directly).
#[async_trait]
pub trait StructuredCaller: Send + Sync {
    async fn call(
        &self,
        agent: &dyn Agent,
        request: AgentRequest<'_>,
        required_keys: &[&str],
        listener: &dyn ExecutionListener,
    ) -> Result<AgentResponse, AgentError>;
}
