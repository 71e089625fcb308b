//! Anthropic Messages API.

use serde_json::{Map, Value, json};

use super::{Decode, malformed, u64_at};
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

pub(crate) fn decode(body: &Value) -> Result<ChatResponse, Decode> {
    let content = body
        .get("content")
        .and_then(Value::as_array)
        .ok_or_else(|| malformed("no 'content' array"))?;
    let mut text = String::new();
    let mut tool_calls = Vec::new();
    for block in content {
        match block.get("type").and_then(Value::as_str) {
            Some("text") => {
                if let Some(t) = block.get("text").and_then(Value::as_str) {
                    text.push_str(t);
                }
            }
            Some("tool_use") => {
                let name = block
                    .get("name")
                    .and_then(Value::as_str)
                    .ok_or_else(|| malformed("tool_use block without a name"))?;
                let id = block
                    .get("id")
                    .and_then(Value::as_str)
                    .ok_or_else(|| malformed("tool_use block without an id"))?;
                tool_calls.push(ToolCall {
                    id: id.to_string(),
                    name: name.to_string(),
                    arguments: block.get("input").cloned().unwrap_or_else(|| json!({})),
                });
            }
            _ => {}
        }
    }
    let usage = body.get("usage").cloned().unwrap_or(Value::Null);
    let finish_reason = body
        .get("stop_reason")
        .and_then(Value::as_str)
        .map(str::to_string);
    if finish_reason.as_deref() == Some("refusal") && text.is_empty() {
        return Err(Decode::Refused("stop_reason refusal".into()));
    }
    Ok(ChatResponse {
        text,
        tool_calls,
        usage: hensu_runtime::Usage {
            input_tokens: u64_at(&usage, "input_tokens")
                + u64_at(&usage, "cache_read_input_tokens")
                + u64_at(&usage, "cache_creation_input_tokens"),
            output_tokens: u64_at(&usage, "output_tokens"),
        },
        finish_reason,
        raw: Some(json!({"content": content})),
    })
}
