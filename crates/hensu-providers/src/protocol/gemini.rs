//! Google Gemini `generateContent`.

use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::answer::{Fields, Lenient, fields};
use super::{Decode, malformed};
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

/// A `generateContent` answer.
#[derive(Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct GenerateAnswer {
    candidates: Lenient<Vec<Value>>,
    prompt_feedback: Fields<PromptFeedback>,
    usage_metadata: Fields<UsageMetadata>,
}

#[derive(Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct PromptFeedback {
    block_reason: Lenient<String>,
}

#[derive(Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct UsageMetadata {
    prompt_token_count: Lenient<u64>,
    candidates_token_count: Lenient<u64>,
    thoughts_token_count: Lenient<u64>,
}

#[derive(Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct Candidate {
    finish_reason: Lenient<String>,
    content: Fields<CandidateContent>,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct CandidateContent {
    parts: Lenient<Vec<Value>>,
}

#[derive(Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct Part {
    thought: Lenient<bool>,
    text: Lenient<String>,
    /// Any value, `null` included (a `null` call has no name: malformed).
    function_call: Lenient<Value>,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct FunctionCall {
    id: Lenient<String>,
    name: Lenient<String>,
    args: Lenient<Value>,
}

pub(crate) fn decode(body: &Value) -> Result<ChatResponse, Decode> {
    let answer: GenerateAnswer = fields(body);
    let Some(candidate) = answer.candidates.as_ref().and_then(|c| c.first()) else {
        if let Some(reason) = answer.prompt_feedback.0.block_reason.0 {
            return Err(Decode::Refused(format!("prompt blocked ({reason})")));
        }
        return Err(malformed("no 'candidates'"));
    };
    let candidate: Candidate = fields(candidate);
    let finish_reason = candidate.finish_reason.0;
    let Some(parts) = candidate.content.0.parts.0 else {
        return match finish_reason.as_deref() {
            Some(r @ ("SAFETY" | "RECITATION" | "BLOCKLIST" | "PROHIBITED_CONTENT")) => {
                Err(Decode::Refused(format!("finishReason {r}")))
            }
            _ => Err(malformed("candidate without content parts")),
        };
    };
    let mut text = String::new();
    let mut tool_calls = Vec::new();
    for (i, part) in parts.iter().map(fields::<Part>).enumerate() {
        if part.thought.0 == Some(true) {
            continue;
        }
        if let Some(t) = part.text.as_ref() {
            text.push_str(t);
        }
        if let Some(fc) = &part.function_call.0 {
            let fc: FunctionCall = fields(fc);
            let name = fc
                .name
                .0
                .ok_or_else(|| malformed("functionCall without a name"))?;
            tool_calls.push(ToolCall {
                id: fc.id.0.unwrap_or_else(|| format!("call_{i}")),
                name,
                arguments: fc.args.0.unwrap_or_else(|| json!({})),
            });
        }
    }
    let usage = answer.usage_metadata.0;
    Ok(ChatResponse {
        text,
        tool_calls,
        usage: hensu_runtime::Usage {
            input_tokens: usage.prompt_token_count.count(),
            output_tokens: usage.candidates_token_count.count()
                + usage.thoughts_token_count.count(),
        },
        finish_reason,
        raw: Some(json!({"parts": parts})),
    })
}
