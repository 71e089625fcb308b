//! OpenAI-compatible chat completions (OpenAI, DeepSeek, Ollama, vLLM, …).

use serde_json::{Map, Value, json};

use super::{Decode, malformed, u64_at};
use crate::wire::{ChatRequest, ChatResponse, ToolCall, Turn};

/// OpenAI reasoning models take `max_completion_tokens` and no sampling parameters.
fn is_reasoning_model(model: &str) -> bool {
    ["o1", "o3", "o4", "gpt-5"]
        .iter()
        .any(|p| model.starts_with(p))
}

pub(crate) fn encode(req: &ChatRequest) -> Value {
    let mut messages = Vec::new();
    if !req.system.is_empty() {
        messages.push(json!({"role": "system", "content": req.system}));
    }
    for turn in &req.turns {
        match turn {
            Turn::User(text) => messages.push(json!({"role": "user", "content": text})),
            Turn::Assistant {
                text, tool_calls, ..
            } => {
                let mut m = Map::new();
                m.insert("role".into(), json!("assistant"));
                m.insert(
                    "content".into(),
                    if text.is_empty() && !tool_calls.is_empty() {
                        Value::Null
                    } else {
                        json!(text)
                    },
                );
                if !tool_calls.is_empty() {
                    m.insert(
                        "tool_calls".into(),
                        Value::Array(
                            tool_calls
                                .iter()
                                .map(|c| {
                                    let args = match &c.arguments {
                                        Value::String(s) => s.clone(),
                                        v => v.to_string(),
                                    };
                                    json!({
                                        "id": c.id,
                                        "type": "function",
                                        "function": {"name": c.name, "arguments": args},
                                    })
                                })
                                .collect(),
                        ),
                    );
                }
                messages.push(Value::Object(m));
            }
            Turn::ToolResults(results) => {
                for r in results {
                    messages.push(json!({
                        "role": "tool",
                        "tool_call_id": r.call_id,
                        "content": r.content,
                    }));
                }
            }
        }
    }
    let mut body = Map::new();
    body.insert("model".into(), json!(req.model));
    body.insert("messages".into(), Value::Array(messages));
    let p = &req.params;
    if is_reasoning_model(&req.model) {
        if let Some(m) = p.max_tokens {
            body.insert("max_completion_tokens".into(), json!(m));
        }
    } else {
        if let Some(t) = p.temperature {
            body.insert("temperature".into(), json!(t));
        }
        if let Some(m) = p.max_tokens {
            body.insert("max_tokens".into(), json!(m));
        }
        if let Some(v) = p.top_p {
            body.insert("top_p".into(), json!(v));
        }
        if let Some(v) = p.frequency_penalty {
            body.insert("frequency_penalty".into(), json!(v));
        }
        if let Some(v) = p.presence_penalty {
            body.insert("presence_penalty".into(), json!(v));
        }
    }
    if !req.tools.is_empty() {
        body.insert(
            "tools".into(),
            Value::Array(
                req.tools
                    .iter()
                    .map(|t| {
                        json!({
                            "type": "function",
                            "function": {
                                "name": t.name,
                                "description": t.description,
                                "parameters": t.parameters,
                            },
                        })
                    })
                    .collect(),
            ),
        );
    }
    Value::Object(body)
}

pub(crate) fn decode(body: &Value) -> Result<ChatResponse, Decode> {
    let choice = body
        .get("choices")
        .and_then(Value::as_array)
        .and_then(|c| c.first())
        .ok_or_else(|| malformed("no 'choices'"))?;
    let message = choice
        .get("message")
        .ok_or_else(|| malformed("choice without a 'message'"))?;
    let text = match message.get("content") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect(),
        Some(Value::Null) | None => String::new(),
        Some(_) => return Err(malformed("'content' is neither text nor parts")),
    };
    let mut tool_calls = Vec::new();
    if let Some(calls) = message.get("tool_calls").and_then(Value::as_array) {
        for (i, c) in calls.iter().enumerate() {
            let f = c
                .get("function")
                .ok_or_else(|| malformed("tool call without 'function'"))?;
            let name = f
                .get("name")
                .and_then(Value::as_str)
                .ok_or_else(|| malformed("tool call without a name"))?;
            let arguments = match f.get("arguments") {
                Some(Value::String(s)) if s.trim().is_empty() => json!({}),
                Some(Value::String(s)) => {
                    serde_json::from_str(s).unwrap_or_else(|_| Value::String(s.clone()))
                }
                Some(v @ Value::Object(_)) => v.clone(),
                _ => json!({}),
            };
            let id = c
                .get("id")
                .and_then(Value::as_str)
                .map(str::to_string)
                .unwrap_or_else(|| format!("call_{i}"));
            tool_calls.push(ToolCall {
                id,
                name: name.to_string(),
                arguments,
            });
        }
    }
    if let Some(refusal) = message.get("refusal").and_then(Value::as_str)
        && text.is_empty()
        && tool_calls.is_empty()
    {
        return Err(Decode::Refused(refusal.to_string()));
    }
    let usage = body.get("usage").cloned().unwrap_or(Value::Null);
    Ok(ChatResponse {
        text,
        tool_calls,
        usage: hensu_runtime::Usage {
            input_tokens: u64_at(&usage, "prompt_tokens"),
            output_tokens: u64_at(&usage, "completion_tokens"),
        },
        finish_reason: choice
            .get("finish_reason")
            .and_then(Value::as_str)
            .map(str::to_string),
        raw: None,
    })
}
