//! The tool loop's calls through the run's call journal (hensu-runtime's `journal`;
//! docs/security.md, *Call journal*): each model response and each tool result is recorded
//! before it is used, and replayed when the node runs again. Model requests are idempotent
//! (issued again when no response was recorded); a tool's policy is its declaration.

use std::future::Future;

use hensu_runtime::Usage;
use hensu_runtime::journal::{CallKind, CallSpec, Declared, Journaled, journaled};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::ProviderError;
use crate::wire::{ChatResponse, ToolCall};

/// A model response as the journal keeps it.
#[derive(Serialize, Deserialize)]
struct RecordedResponse {
    text: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    tool_calls: Vec<RecordedCall>,
    usage: Usage,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    finish_reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    raw: Option<Value>,
}

#[derive(Serialize, Deserialize)]
struct RecordedCall {
    id: String,
    name: String,
    arguments: Value,
}

impl From<ChatResponse> for RecordedResponse {
    fn from(r: ChatResponse) -> RecordedResponse {
        RecordedResponse {
            text: r.text,
            tool_calls: r
                .tool_calls
                .into_iter()
                .map(|c| RecordedCall {
                    id: c.id,
                    name: c.name,
                    arguments: c.arguments,
                })
                .collect(),
            usage: r.usage,
            finish_reason: r.finish_reason,
            raw: r.raw,
        }
    }
}

impl From<RecordedResponse> for ChatResponse {
    fn from(r: RecordedResponse) -> ChatResponse {
        ChatResponse {
            text: r.text,
            tool_calls: r
                .tool_calls
                .into_iter()
                .map(|c| ToolCall {
                    id: c.id,
                    name: c.name,
                    arguments: c.arguments,
                })
                .collect(),
            usage: r.usage,
            finish_reason: r.finish_reason,
            raw: r.raw,
        }
    }
}

/// A tool's result as the journal keeps it.
#[derive(Serialize, Deserialize)]
struct RecordedTool {
    ok: bool,
    content: String,
}

/// One model request of the tool loop through the journal.
pub(crate) async fn model_call<Fut>(
    model: &str,
    request: Fut,
) -> Result<ChatResponse, ProviderError>
where
    Fut: Future<Output = Result<ChatResponse, ProviderError>>,
{
    let spec = CallSpec {
        kind: CallKind::Model,
        name: model,
        declared: Declared::IDEMPOTENT,
    };
    let r = journaled(spec, |_slot| async {
        request.await.map(|r| (RecordedResponse::from(r), true))
    })
    .await;
    match r {
        Ok(r) => Ok(r.into()),
        Err(Journaled::Effect(e)) => Err(e),
        Err(Journaled::Call(e)) => Err(e.into()),
    }
}

/// What became of one tool call.
pub(crate) enum ToolRun {
    /// The tool's output (`Ok`) or error message (`Err`), for the model.
    Done(Result<String, String>),
    /// The run was cancelled while the tool ran.
    Cancelled,
}

/// One tool call of the tool loop through the journal; `call` runs the tool (`None`: it was
/// cancelled).
pub(crate) async fn tool_call<Fut>(
    name: &str,
    declared: Declared,
    call: Fut,
) -> Result<ToolRun, ProviderError>
where
    Fut: Future<Output = Option<Result<String, String>>>,
{
    let spec = CallSpec {
        kind: CallKind::Tool,
        name,
        declared,
    };
    let r = journaled(spec, |_slot| async {
        match call.await {
            None => Err(()),
            Some(Ok(content)) => Ok((RecordedTool { ok: true, content }, true)),
            Some(Err(content)) => Ok((RecordedTool { ok: false, content }, false)),
        }
    })
    .await;
    match r {
        Ok(t) if t.ok => Ok(ToolRun::Done(Ok(t.content))),
        Ok(t) => Ok(ToolRun::Done(Err(t.content))),
        Err(Journaled::Effect(())) => Ok(ToolRun::Cancelled),
        Err(Journaled::Call(e)) => Err(e.into()),
    }
}
