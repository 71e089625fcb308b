//! OpenAI-compatible chat completions (OpenAI, DeepSeek, Ollama, vLLM, …).

use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::{Map, Value, json};

use super::answer::{Fields, Lenient, fields};
use super::{Decode, malformed};
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

/// A chat completions answer.
#[derive(Default, Deserialize)]
#[serde(default)]
struct CompletionAnswer {
    choices: Lenient<Vec<Value>>,
    usage: Fields<CompletionUsage>,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct CompletionUsage {
    prompt_tokens: Lenient<u64>,
    completion_tokens: Lenient<u64>,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct Choice {
    /// Any value, `null` included: only its absence is an error.
    message: Lenient<Value>,
    finish_reason: Lenient<String>,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct Message {
    content: Lenient<Content>,
    tool_calls: Lenient<Vec<Value>>,
    refusal: Lenient<String>,
}

/// `content`: text, or content parts (some compatible servers), or neither.
#[derive(Deserialize)]
#[serde(untagged)]
enum Content {
    Text(String),
    Parts(Vec<Value>),
    Other(Value),
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct ContentPart {
    text: Lenient<String>,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct WireToolCall {
    id: Lenient<String>,
    /// Any value, `null` included: only its absence is an error.
    function: Lenient<Value>,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct WireFunction {
    name: Lenient<String>,
    arguments: Lenient<Arguments>,
}

/// Function arguments: a JSON text (as the protocol says) or, from some servers, an object.
#[derive(Deserialize)]
#[serde(untagged)]
enum Arguments {
    Text(String),
    Object(Map<String, Value>),
    Other(IgnoredAny),
}

pub(crate) fn decode(body: &Value) -> Result<ChatResponse, Decode> {
    let answer: CompletionAnswer = fields(body);
    let choice = answer
        .choices
        .as_ref()
        .and_then(|c| c.first())
        .ok_or_else(|| malformed("no 'choices'"))?;
    let choice: Choice = fields(choice);
    let message = choice
        .message
        .0
        .ok_or_else(|| malformed("choice without a 'message'"))?;
    let message: Message = fields(&message);
    let text = match message.content.0 {
        Some(Content::Text(s)) => s,
        Some(Content::Parts(parts)) => parts
            .iter()
            .filter_map(|p| fields::<ContentPart>(p).text.0)
            .collect(),
        Some(Content::Other(Value::Null)) | None => String::new(),
        Some(Content::Other(_)) => return Err(malformed("'content' is neither text nor parts")),
    };
    let mut tool_calls = Vec::new();
    for (i, c) in message.tool_calls.0.unwrap_or_default().iter().enumerate() {
        let call: WireToolCall = fields(c);
        let function = call
            .function
            .0
            .ok_or_else(|| malformed("tool call without 'function'"))?;
        let function: WireFunction = fields(&function);
        let name = function
            .name
            .0
            .ok_or_else(|| malformed("tool call without a name"))?;
        let arguments = match function.arguments.0 {
            Some(Arguments::Text(s)) if s.trim().is_empty() => json!({}),
            Some(Arguments::Text(s)) => {
                serde_json::from_str(&s).unwrap_or_else(|_| Value::String(s.clone()))
            }
            Some(Arguments::Object(o)) => Value::Object(o),
            Some(Arguments::Other(_)) | None => json!({}),
        };
        tool_calls.push(ToolCall {
            id: call.id.0.unwrap_or_else(|| format!("call_{i}")),
            name,
            arguments,
        });
    }
    if let Some(refusal) = message.refusal.0
        && text.is_empty()
        && tool_calls.is_empty()
    {
        return Err(Decode::Refused(refusal));
    }
    let usage = answer.usage.0;
    Ok(ChatResponse {
        text,
        tool_calls,
        usage: hensu_runtime::Usage {
            input_tokens: usage.prompt_tokens.count(),
            output_tokens: usage.completion_tokens.count(),
        },
        finish_reason: choice.finish_reason.0,
        raw: None,
    })
}
