//! The engine's seams over [`RecordedAnswers`]: one agent provider for every model, a `send`
//! handler per handler id, the command runner, the `api-caller` generic handler and the review
//! handler. None of them does I/O.

use std::collections::HashMap;
use std::sync::Arc;

use async_trait::async_trait;
use hensu_ir::{AgentConfig, GenericNode};
use hensu_runtime::{
    ActionHandler, ActionResult, Agent, AgentError, AgentProvider, AgentRequest, AgentResponse,
    CommandRunner, Context, GenericNodeHandler, NodeResult, NodeStatus, ReviewHandler,
    ReviewOutcome, ReviewRequest,
};
use indexmap::IndexMap;
use serde_json::Value;

use super::{RecordedAnswers, ReviewAnswer};

/// The error kind of an agent call the recording has no answer for.
pub const NOT_RECORDED: &str = "not_recorded";

/// Serves every model from the recording (priority above every other provider).
pub struct ReplayProvider {
    answers: Arc<RecordedAnswers>,
}

impl ReplayProvider {
    pub fn new(answers: Arc<RecordedAnswers>) -> ReplayProvider {
        ReplayProvider { answers }
    }
}

impl AgentProvider for ReplayProvider {
    fn name(&self) -> &str {
        "replay"
    }

    fn supports_model(&self, _model: &str) -> bool {
        true
    }

    fn priority(&self) -> i32 {
        i32::MAX
    }

    fn create_agent(
        &self,
        config: &AgentConfig,
        _credentials: &HashMap<String, String>,
    ) -> Result<Arc<dyn Agent>, AgentError> {
        Ok(Arc::new(ReplayAgent {
            config: config.clone(),
            answers: self.answers.clone(),
        }))
    }
}

/// One workflow agent answering from the recording.
pub struct ReplayAgent {
    config: AgentConfig,
    answers: Arc<RecordedAnswers>,
}

#[async_trait]
impl Agent for ReplayAgent {
    fn id(&self) -> &str {
        &self.config.id
    }

    fn config(&self) -> &AgentConfig {
        &self.config
    }

    async fn execute(&self, request: AgentRequest<'_>) -> Result<AgentResponse, AgentError> {
        let answer = self.answers.agent_call(
            request.node_id,
            &self.config.id,
            request.prompt,
            request.context,
        );
        match answer {
            Ok(answer) => match answer.result {
                Ok(text) => Ok(AgentResponse {
                    text,
                    metadata: IndexMap::new(),
                    usage: answer.usage,
                }),
                Err(message) => Err(AgentError::new("recorded", message)),
            },
            Err(miss) => Err(AgentError::new(
                NOT_RECORDED,
                format!("the recording has no answer for this call: {miss}"),
            )),
        }
    }

    /// No request is made: no per-request timeout to manage, and none applies.
    fn manages_timeouts(&self) -> bool {
        true
    }
}

/// A `send` handler answering from the recording.
pub struct RecordedActions {
    id: String,
    answers: Arc<RecordedAnswers>,
}

impl RecordedActions {
    pub fn new(id: &str, answers: Arc<RecordedAnswers>) -> RecordedActions {
        RecordedActions {
            id: id.to_string(),
            answers,
        }
    }
}

#[async_trait]
impl ActionHandler for RecordedActions {
    fn handler_id(&self) -> &str {
        &self.id
    }

    async fn execute(&self, _payload: &IndexMap<String, Value>, _ctx: &Context) -> ActionResult {
        self.answers.action_call(&format!("send:{}", self.id))
    }
}

/// The command runner answering from the recording: no process is spawned.
pub struct RecordedCommands {
    answers: Arc<RecordedAnswers>,
}

impl RecordedCommands {
    pub fn new(answers: Arc<RecordedAnswers>) -> RecordedCommands {
        RecordedCommands { answers }
    }
}

#[async_trait]
impl CommandRunner for RecordedCommands {
    async fn execute(&self, id: &str, _ctx: &Context) -> ActionResult {
        self.answers.action_call(&format!("execute:{id}"))
    }
}

/// `api-caller` answering from the recording: no request is sent; a success stores the
/// recorded body under the node's `outputField`, as the live handler does.
pub struct RecordedApiCaller {
    answers: Arc<RecordedAnswers>,
}

impl RecordedApiCaller {
    pub fn new(answers: Arc<RecordedAnswers>) -> RecordedApiCaller {
        RecordedApiCaller { answers }
    }
}

#[async_trait]
impl GenericNodeHandler for RecordedApiCaller {
    fn executor_type(&self) -> &str {
        "api-caller"
    }

    async fn handle(&self, node: &GenericNode, ctx: &mut Context) -> NodeResult {
        let Some(answer) = self.answers.generic_call("api-caller", &node.id) else {
            return NodeResult::failure(format!(
                "the recording has no result of api-caller node `{}`",
                node.id
            ));
        };
        if answer.status == NodeStatus::Success
            && let Some(out) = &answer.output
        {
            let field = match node.config.get("outputField") {
                Some(Value::String(f)) => f.clone(),
                _ => "response".to_string(),
            };
            ctx.insert(field, out.clone());
        }
        NodeResult {
            status: answer.status,
            output: answer.output,
            error: answer.error,
            metadata: IndexMap::new(),
        }
    }
}

/// Reviews decided as recorded.
pub struct RecordedReview {
    answers: Arc<RecordedAnswers>,
}

impl RecordedReview {
    pub fn new(answers: Arc<RecordedAnswers>) -> RecordedReview {
        RecordedReview { answers }
    }
}

#[async_trait]
impl ReviewHandler for RecordedReview {
    async fn request_review(&self, request: ReviewRequest<'_>) -> ReviewOutcome {
        match self.answers.review_call(request.node_id) {
            ReviewAnswer::Decided(d) => ReviewOutcome::Decided(d),
            ReviewAnswer::Pending { correlation_id } => ReviewOutcome::Pending { correlation_id },
        }
    }
}
