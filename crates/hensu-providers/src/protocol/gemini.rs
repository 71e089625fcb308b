//! Google Gemini `generateContent`.

use serde_json::{Map, Value, json};

use super::{Decode, malformed, u64_at};
use crate::wire::{ChatRequest, ChatResponse, ToolCall, Turn};

pub(crate) fn encode(req: &ChatRequest) -> Value {
    let mut contents: Vec<(&'static str, Vec<Value>)> = Vec::new();
    let mut push = |role: &'static str, parts: Vec<Value>| match contents.last_mut() {
        Some((r, existing)) if *r == role => existing.extend(parts),
        _ => contents.push((role, parts)),
    };
    for turn in &req.turns {
        match turn {
            Turn::User(text) => push("user", vec![json!({"text": text})]),
            Turn::Assistant {
                text,
                tool_calls,
                raw,
            } => {
                if let Some(Value::Array(parts)) = raw.as_ref().and_then(|r| r.get("parts")) {
                    push("model", parts.clone());
                    continue;
                }
                let mut parts = Vec::new();
                if !text.is_empty() {
                    parts.push(json!({"text": text}));
                }
                for c in tool_calls {
                    parts.push(json!({"functionCall": {"name": c.name, "args": c.arguments}}));
                }
                if parts.is_empty() {
                    parts.push(json!({"text": "(no answer)"}));
                }
                push("model", parts);
            }
            Turn::ToolResults(results) => push(
                "user",
                results
                    .iter()
                    .map(|r| {
                        let key = if r.is_error { "error" } else { "result" };
                        json!({"functionResponse": {"name": r.name, "response": {key: r.content}}})
                    })
                    .collect(),
            ),
        }
    }
    let mut body = Map::new();
    body.insert(
        "contents".into(),
        Value::Array(
            contents
                .into_iter()
                .map(|(role, parts)| json!({"role": role, "parts": parts}))
                .collect(),
        ),
    );
    if !req.system.is_empty() {
        body.insert(
            "systemInstruction".into(),
            json!({"parts": [{"text": req.system}]}),
        );
    }
    let p = &req.params;
    let mut generation = Map::new();
    if let Some(v) = p.temperature {
        generation.insert("temperature".into(), json!(v));
    }
    if let Some(v) = p.max_tokens {
        generation.insert("maxOutputTokens".into(), json!(v));
    }
    if let Some(v) = p.top_p {
        generation.insert("topP".into(), json!(v));
    }
    if let Some(v) = p.frequency_penalty {
        generation.insert("frequencyPenalty".into(), json!(v));
    }
    if let Some(v) = p.presence_penalty {
        generation.insert("presencePenalty".into(), json!(v));
    }
    if !generation.is_empty() {
        body.insert("generationConfig".into(), Value::Object(generation));
    }
    if !req.tools.is_empty() {
        let decls: Vec<Value> = req
            .tools
            .iter()
            .map(|t| {
                let mut d = Map::new();
                d.insert("name".into(), json!(t.name));
                d.insert("description".into(), json!(t.description));
                // Gemini rejects an object schema without properties.
                if t.has_properties() {
                    d.insert("parameters".into(), t.parameters.clone());
                }
                Value::Object(d)
            })
            .collect();
        body.insert("tools".into(), json!([{"functionDeclarations": decls}]));
    }
    Value::Object(body)
}

pub(crate) fn decode(body: &Value) -> Result<ChatResponse, Decode> {
    let candidates = body.get("candidates").and_then(Value::as_array);
    let Some(candidate) = candidates.and_then(|c| c.first()) else {
        if let Some(reason) = body
            .get("promptFeedback")
            .and_then(|f| f.get("blockReason"))
            .and_then(Value::as_str)
        {
            return Err(Decode::Refused(format!("prompt blocked ({reason})")));
        }
        return Err(malformed("no 'candidates'"));
    };
    let finish_reason = candidate
        .get("finishReason")
        .and_then(Value::as_str)
        .map(str::to_string);
    let parts = candidate
        .get("content")
        .and_then(|c| c.get("parts"))
        .and_then(Value::as_array);
    let Some(parts) = parts else {
        return match finish_reason.as_deref() {
            Some(r @ ("SAFETY" | "RECITATION" | "BLOCKLIST" | "PROHIBITED_CONTENT")) => {
                Err(Decode::Refused(format!("finishReason {r}")))
            }
            _ => Err(malformed("candidate without content parts")),
        };
    };
    let mut text = String::new();
    let mut tool_calls = Vec::new();
    for (i, part) in parts.iter().enumerate() {
        if part.get("thought").and_then(Value::as_bool) == Some(true) {
            continue;
        }
        if let Some(t) = part.get("text").and_then(Value::as_str) {
            text.push_str(t);
        }
        if let Some(fc) = part.get("functionCall") {
            let name = fc
                .get("name")
                .and_then(Value::as_str)
                .ok_or_else(|| malformed("functionCall without a name"))?;
            tool_calls.push(ToolCall {
                id: fc
                    .get("id")
                    .and_then(Value::as_str)
                    .map(str::to_string)
                    .unwrap_or_else(|| format!("call_{i}")),
                name: name.to_string(),
                arguments: fc.get("args").cloned().unwrap_or_else(|| json!({})),
            });
        }
    }
    let usage = body.get("usageMetadata").cloned().unwrap_or(Value::Null);
    Ok(ChatResponse {
        text,
        tool_calls,
        usage: hensu_runtime::Usage {
            input_tokens: u64_at(&usage, "promptTokenCount"),
            output_tokens: u64_at(&usage, "candidatesTokenCount")
                + u64_at(&usage, "thoughtsTokenCount"),
        },
        finish_reason,
        raw: Some(json!({"parts": parts})),
    })
}
