//! Anthropic Messages API.

use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::answer::{Fields, Lenient, fields};
use super::{Decode, malformed};
use crate::wire::{ChatRequest, ChatResponse, ToolCall, Turn};

/// Anthropic requires `max_tokens`.
pub(crate) const DEFAULT_MAX_TOKENS: u32 = 4096;

pub(crate) fn encode(req: &ChatRequest) -> Value {
    let mut messages: Vec<(&'static str, Vec<Value>)> = Vec::new();
    let mut push = |role: &'static str, blocks: Vec<Value>| match messages.last_mut() {
        Some((r, existing)) if *r == role => existing.extend(blocks),
        _ => messages.push((role, blocks)),
    };
    for turn in &req.turns {
        match turn {
            Turn::User(text) => push("user", vec![json!({"type": "text", "text": text})]),
            Turn::Assistant {
                text,
                tool_calls,
                raw,
            } => {
                if let Some(Value::Array(blocks)) = raw.as_ref().and_then(|r| r.get("content")) {
                    push("assistant", blocks.clone());
                    continue;
                }
                let mut blocks = Vec::new();
                if !text.is_empty() {
                    blocks.push(json!({"type": "text", "text": text}));
                }
                for c in tool_calls {
                    let input = match &c.arguments {
                        Value::Object(_) => c.arguments.clone(),
                        _ => json!({}),
                    };
                    blocks.push(
                        json!({"type": "tool_use", "id": c.id, "name": c.name, "input": input}),
                    );
                }
                if blocks.is_empty() {
                    blocks.push(json!({"type": "text", "text": "(no answer)"}));
                }
                push("assistant", blocks);
            }
            Turn::ToolResults(results) => push(
                "user",
                results
                    .iter()
                    .map(|r| {
                        json!({
                            "type": "tool_result",
                            "tool_use_id": r.call_id,
                            "content": r.content,
                            "is_error": r.is_error,
                        })
                    })
                    .collect(),
            ),
        }
    }
    let mut body = Map::new();
    body.insert("model".into(), json!(req.model));
    body.insert(
        "max_tokens".into(),
        json!(req.params.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS)),
    );
    if !req.system.is_empty() {
        body.insert("system".into(), json!(req.system));
    }
    body.insert(
        "messages".into(),
        Value::Array(
            messages
                .into_iter()
                .map(|(role, content)| json!({"role": role, "content": content}))
                .collect(),
        ),
    );
    if let Some(t) = req.params.temperature {
        body.insert("temperature".into(), json!(t));
    }
    if let Some(p) = req.params.top_p {
        body.insert("top_p".into(), json!(p));
    }
    // Anthropic has no frequency/presence penalties; they are not sent.
    if !req.tools.is_empty() {
        body.insert(
            "tools".into(),
            Value::Array(
                req.tools
                    .iter()
                    .map(|t| {
                        json!({"name": t.name, "description": t.description, "input_schema": t.parameters})
                    })
                    .collect(),
            ),
        );
    }
    Value::Object(body)
}

/// A Messages API answer.
#[derive(Default, Deserialize)]
#[serde(default)]
struct MessagesAnswer {
    content: Lenient<Vec<Value>>,
    usage: Fields<MessagesUsage>,
    stop_reason: Lenient<String>,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct MessagesUsage {
    input_tokens: Lenient<u64>,
    cache_read_input_tokens: Lenient<u64>,
    cache_creation_input_tokens: Lenient<u64>,
    output_tokens: Lenient<u64>,
}

/// One `content` block: `text`, `tool_use`, or a kind hensu does not use (thinking, …).
#[derive(Default, Deserialize)]
#[serde(default)]
struct ContentBlock {
    #[serde(rename = "type")]
    kind: Lenient<String>,
    text: Lenient<String>,
    id: Lenient<String>,
    name: Lenient<String>,
    input: Lenient<Value>,
}

pub(crate) fn decode(body: &Value) -> Result<ChatResponse, Decode> {
    let answer: MessagesAnswer = fields(body);
    let content = answer
        .content
        .0
        .ok_or_else(|| malformed("no 'content' array"))?;
    let mut text = String::new();
    let mut tool_calls = Vec::new();
    for block in content.iter().map(fields::<ContentBlock>) {
        match block.kind.as_ref().map(String::as_str) {
            Some("text") => {
                if let Some(t) = block.text.as_ref() {
                    text.push_str(t);
                }
            }
            Some("tool_use") => {
                let name = block
                    .name
                    .0
                    .ok_or_else(|| malformed("tool_use block without a name"))?;
                let id = block
                    .id
                    .0
                    .ok_or_else(|| malformed("tool_use block without an id"))?;
                tool_calls.push(ToolCall {
                    id,
                    name,
                    arguments: block.input.0.unwrap_or_else(|| json!({})),
                });
            }
            _ => {}
        }
    }
    let finish_reason = answer.stop_reason.0;
    if finish_reason.as_deref() == Some("refusal") && text.is_empty() {
        return Err(Decode::Refused("stop_reason refusal".into()));
    }
    let usage = answer.usage.0;
    Ok(ChatResponse {
        text,
        tool_calls,
        usage: hensu_runtime::Usage {
            input_tokens: usage.input_tokens.count()
                + usage.cache_read_input_tokens.count()
                + usage.cache_creation_input_tokens.count(),
            output_tokens: usage.output_tokens.count(),
        },
        finish_reason,
        raw: Some(json!({"content": content})),
    })
}
