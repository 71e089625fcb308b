//! The provider-neutral conversation model the protocol codecs translate.

use hensu_runtime::Usage;
use serde_json::Value;

/// A tool call the model asked for.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    /// The arguments (an object normally; a string when the model sent unparsable JSON).
    pub arguments: Value,
}

/// The result of one tool call, fed back to the model.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolOutcome {
    pub call_id: String,
    pub name: String,
    pub content: String,
    pub is_error: bool,
}

/// One turn of a conversation.
#[derive(Clone, Debug, PartialEq)]
pub enum Turn {
    User(String),
    Assistant {
        text: String,
        tool_calls: Vec<ToolCall>,
        /// The provider's own message, re-sent verbatim by protocols that need opaque parts
        /// back (Anthropic thinking blocks, Gemini thought signatures).
        raw: Option<Value>,
    },
    ToolResults(Vec<ToolOutcome>),
}

/// Sampling parameters.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct GenParams {
    pub temperature: Option<f64>,
    pub max_tokens: Option<u32>,
    pub top_p: Option<f64>,
    pub frequency_penalty: Option<f64>,
    pub presence_penalty: Option<f64>,
}

impl GenParams {
    /// The parameters of a workflow agent.
    pub fn from_agent(config: &hensu_ir::AgentConfig) -> Self {
        GenParams {
            temperature: Some(config.temperature),
            max_tokens: config
                .max_tokens
                .filter(|t| *t > 0)
                .map(|t| u32::try_from(t).unwrap_or(u32::MAX)),
            top_p: config.top_p,
            frequency_penalty: config.frequency_penalty,
            presence_penalty: config.presence_penalty,
        }
    }
}

/// A tool offered to the model.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    /// JSON schema of the arguments (an object schema).
    pub parameters: Value,
}

impl ToolSpec {
    /// A tool taking any JSON object.
    pub fn generic(name: &str) -> Self {
        ToolSpec {
            name: name.to_string(),
            description: format!(
                "The '{name}' tool of this workflow. Pass its arguments as a JSON object."
            ),
            parameters: serde_json::json!({"type": "object", "properties": {}}),
        }
    }

    /// Whether the schema declares at least one property.
    pub(crate) fn has_properties(&self) -> bool {
        self.parameters
            .get("properties")
            .and_then(Value::as_object)
            .is_some_and(|p| !p.is_empty())
    }
}

/// One model request.
#[derive(Clone, Debug, PartialEq)]
pub struct ChatRequest {
    pub model: String,
    pub system: String,
    pub turns: Vec<Turn>,
    pub params: GenParams,
    pub tools: Vec<ToolSpec>,
}

/// One model answer.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ChatResponse {
    pub text: String,
    pub tool_calls: Vec<ToolCall>,
    pub usage: Usage,
    pub finish_reason: Option<String>,
    /// The provider's message (see [`Turn::Assistant::raw`]).
    pub raw: Option<Value>,
}
