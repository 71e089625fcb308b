//! Shared by the runtime benchmarks: an agent that answers a constant at once, so only the
//! engine's own work is measured.

use std::collections::HashMap;
use std::sync::Arc;

use async_trait::async_trait;
use hensu_ir::AgentConfig;
use hensu_runtime::{Agent, AgentError, AgentProvider, AgentRequest, AgentResponse};

pub struct Constant(AgentConfig);

#[async_trait]
impl Agent for Constant {
    fn id(&self) -> &str {
        &self.0.id
    }
    fn config(&self) -> &AgentConfig {
        &self.0
    }
    async fn execute(&self, _r: AgentRequest<'_>) -> Result<AgentResponse, AgentError> {
        Ok(AgentResponse::text("constant answer"))
    }
}

pub struct ConstantProvider;

impl AgentProvider for ConstantProvider {
    fn name(&self) -> &str {
        "constant"
    }
    fn supports_model(&self, _m: &str) -> bool {
        true
    }
    fn priority(&self) -> i32 {
        1
    }
    fn create_agent(
        &self,
        c: &AgentConfig,
        _: &HashMap<String, String>,
    ) -> Result<Arc<dyn Agent>, AgentError> {
        Ok(Arc::new(Constant(c.clone())))
    }
}
