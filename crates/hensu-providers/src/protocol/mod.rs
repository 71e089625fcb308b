//! Wire codecs of the three protocols: request body, endpoint, auth headers, answer parsing.

mod answer;
pub(crate) mod anthropic;
pub(crate) mod gemini;
pub(crate) mod openai;
pub(crate) mod stream;

use serde::Deserialize;
use serde_json::{Map, Value};

use self::answer::Lenient;

use crate::config::ProviderKind;
use crate::error::{ErrorKind, ProviderError};
use crate::redact::ApiKey;
use crate::wire::{ChatRequest, ChatResponse};

/// The request URL for `model` under `base`.
pub(crate) fn endpoint(kind: ProviderKind, base: &str, model: &str) -> String {
    let base = base.trim_end_matches('/');
    match kind {
        ProviderKind::Anthropic => {
            if base.ends_with("/v1") {
                format!("{base}/messages")
            } else {
                format!("{base}/v1/messages")
            }
        }
        ProviderKind::OpenAi => format!("{base}/chat/completions"),
        ProviderKind::Gemini => {
            let model: String = model
                .chars()
                .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_'))
                .collect();
            if base.ends_with("/v1beta") || base.ends_with("/v1") {
                format!("{base}/models/{model}:generateContent")
            } else {
                format!("{base}/v1beta/models/{model}:generateContent")
            }
        }
    }
}

/// The request URL of a streamed answer (docs/providers.md, *Streaming*): the same for
/// Anthropic and OpenAI-compatible servers (the body asks to stream), Gemini's
/// `streamGenerateContent` with server-sent events.
pub(crate) fn stream_endpoint(kind: ProviderKind, base: &str, model: &str) -> String {
    let url = endpoint(kind, base, model);
    match kind {
        ProviderKind::Gemini => match url.strip_suffix(":generateContent") {
            Some(stem) => format!("{stem}:streamGenerateContent?alt=sse"),
            None => url,
        },
        _ => url,
    }
}

/// The request body of a streamed answer.
pub(crate) fn encode_streamed(kind: ProviderKind, request: &ChatRequest) -> Value {
    let mut body = encode(kind, request);
    if let Value::Object(m) = &mut body {
        match kind {
            ProviderKind::Anthropic => {
                m.insert("stream".into(), Value::Bool(true));
            }
            ProviderKind::OpenAi => {
                m.insert("stream".into(), Value::Bool(true));
                // The usage comes in a last chunk only when asked for.
                m.insert(
                    "stream_options".into(),
                    serde_json::json!({"include_usage": true}),
                );
            }
            ProviderKind::Gemini => {}
        }
    }
    body
}

/// The authentication and protocol headers (the key never goes into the URL).
pub(crate) fn headers(kind: ProviderKind, key: Option<&ApiKey>) -> Vec<(&'static str, String)> {
    let mut h = Vec::new();
    match kind {
        ProviderKind::Anthropic => {
            h.push(("anthropic-version", "2023-06-01".to_string()));
            if let Some(k) = key {
                h.push(("x-api-key", k.expose().to_string()));
            }
        }
        ProviderKind::OpenAi => {
            if let Some(k) = key {
                h.push(("authorization", format!("Bearer {}", k.expose())));
            }
        }
        ProviderKind::Gemini => {
            if let Some(k) = key {
                h.push(("x-goog-api-key", k.expose().to_string()));
            }
        }
    }
    h
}

pub(crate) fn encode(kind: ProviderKind, request: &ChatRequest) -> Value {
    match kind {
        ProviderKind::Anthropic => anthropic::encode(request),
        ProviderKind::OpenAi => openai::encode(request),
        ProviderKind::Gemini => gemini::encode(request),
    }
}

pub(crate) fn decode(kind: ProviderKind, body: &Value) -> Result<ChatResponse, ProviderError> {
    let r = match kind {
        ProviderKind::Anthropic => anthropic::decode(body),
        ProviderKind::OpenAi => openai::decode(body),
        ProviderKind::Gemini => gemini::decode(body),
    };
    r.map_err(|e| match e {
        Decode::Malformed(m) => ProviderError::new(
            ErrorKind::MalformedResponse,
            format!("{} answer does not follow the protocol: {m}", kind.as_str()),
        ),
        Decode::Refused(m) => ProviderError::new(
            ErrorKind::Refused,
            format!("{} refused to answer: {m}", kind.as_str()),
        ),
    })
}

/// Why an answer could not be decoded.
pub(crate) enum Decode {
    Malformed(String),
    Refused(String),
}

pub(crate) fn malformed(m: impl Into<String>) -> Decode {
    Decode::Malformed(m.into())
}

/// An error answer: `{"error": {"message": …, "type"/"status": …}}` for all three protocols,
/// `{"error": "…"}` for some OpenAI-compatible servers.
#[derive(Default, Deserialize)]
#[serde(default)]
struct ErrorAnswer {
    error: Lenient<ErrorField>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum ErrorField {
    Text(String),
    Detail(Map<String, Value>),
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct ErrorDetail {
    message: Lenient<String>,
    /// Any value: when present, `status` is not consulted.
    #[serde(rename = "type")]
    kind: Lenient<Value>,
    status: Lenient<String>,
}

/// The provider's error message in an error body, prefixed with its type or status when given.
pub(crate) fn error_message(body: &str) -> Option<String> {
    let v: Value = serde_json::from_str(body).ok()?;
    let answer: ErrorAnswer = answer::fields(&v);
    match answer.error.0? {
        ErrorField::Text(s) => Some(s),
        ErrorField::Detail(o) => {
            let detail: ErrorDetail = answer::fields(&Value::Object(o));
            let msg = detail.message.0?;
            let kind = match &detail.kind.0 {
                Some(k) => k.as_str().map(str::to_string),
                None => detail.status.0,
            };
            Some(match kind {
                Some(k) => format!("{k}: {msg}"),
                None => msg,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn decoded(kind: ProviderKind, body: Value) -> Result<ChatResponse, String> {
        decode(kind, &body).map_err(|e| e.message)
    }

    #[test]
    fn answers_of_unexpected_shape() {
        use ProviderKind::*;
        // A top-level array is not read positionally.
        assert!(decoded(Anthropic, json!([["x"]])).is_err());
        // Wrong-typed fields read as absent; unknown blocks are skipped.
        let r = decoded(
            Anthropic,
            json!({"content": [{"type": "text", "text": 5}, 7, {"type": "thinking"},
                {"type": "text", "text": "ok"}], "usage": {"input_tokens": -1, "output_tokens": 2}}),
        )
        .expect("decodes");
        assert_eq!(
            (r.text.as_str(), r.usage.input_tokens, r.usage.output_tokens),
            ("ok", 0, 2)
        );
        let r = decoded(
            Anthropic,
            json!({"content": [{"type": "tool_use", "id": "t", "name": "f", "input": null}]}),
        )
        .expect("decodes");
        assert_eq!(r.tool_calls[0].arguments, Value::Null);
        // OpenAI: any present `message` counts; a non-text `content` does not.
        assert_eq!(
            decoded(OpenAi, json!({"choices": [{"message": 5}]}))
                .expect("ok")
                .text,
            ""
        );
        assert!(
            decoded(OpenAi, json!({"choices": [{}]}))
                .expect_err("no message")
                .contains("without a 'message'")
        );
        assert!(
            decoded(OpenAi, json!({"choices": [{"message": {"content": 5}}]}))
                .expect_err("bad")
                .contains("neither text nor parts")
        );
        let r = decoded(
            OpenAi,
            json!({"choices": [{"message": {"content": [{"text": "a"}, {"x": 1}, {"text": "b"}],
                "tool_calls": [{"function": {"name": "f", "arguments": " "}},
                               {"id": "c", "function": {"name": "g", "arguments": "not json"}},
                               {"function": {"name": "h", "arguments": {"k": 1}}},
                               {"function": {"name": "i", "arguments": 3}}]}}]}),
        )
        .expect("decodes");
        assert_eq!(r.text, "ab");
        let args: Vec<_> = r
            .tool_calls
            .iter()
            .map(|c| (c.id.as_str(), c.arguments.clone()))
            .collect();
        assert_eq!(
            args,
            [
                ("call_0", json!({})),
                ("c", json!("not json")),
                ("call_2", json!({"k": 1})),
                ("call_3", json!({}))
            ]
        );
        assert!(
            decoded(
                OpenAi,
                json!({"choices": [{"message": {"tool_calls": [{"function": null}]}}]})
            )
            .expect_err("no name")
            .contains("tool call without a name")
        );
        // Gemini: a null functionCall has no name; thoughts are skipped.
        assert!(
            decoded(
                Gemini,
                json!({"candidates": [{"content": {"parts": [{"functionCall": null}]}}]})
            )
            .expect_err("bad")
            .contains("functionCall without a name")
        );
        let r = decoded(
            Gemini,
            json!({"candidates": [{"content": {"parts": [{"text": "hm", "thought": true}, {"text": "yes"}]}}]}),
        )
        .expect("decodes");
        assert_eq!(r.text, "yes");
        assert!(
            decoded(Gemini, json!({"promptFeedback": {"blockReason": "SAFETY"}}))
                .expect_err("blocked")
                .contains("prompt blocked (SAFETY)")
        );
        assert!(
            decoded(
                Gemini,
                json!({"candidates": [{"content": [], "finishReason": "SAFETY"}]})
            )
            .expect_err("refused")
            .contains("finishReason SAFETY")
        );
    }

    #[test]
    fn error_messages() {
        assert_eq!(
            error_message(r#"{"error": "quota"}"#).as_deref(),
            Some("quota")
        );
        assert_eq!(
            error_message(r#"{"error": {"message": "m", "type": "t", "status": "s"}}"#).as_deref(),
            Some("t: m")
        );
        assert_eq!(
            error_message(r#"{"error": {"message": "m", "status": "s"}}"#).as_deref(),
            Some("s: m")
        );
        // A non-text `type` hides `status`, as it always has.
        assert_eq!(
            error_message(r#"{"error": {"message": "m", "type": 1, "status": "s"}}"#).as_deref(),
            Some("m")
        );
        assert_eq!(error_message(r#"{"error": {"type": "t"}}"#), None);
        assert_eq!(error_message(r#"[{"error": "x"}]"#), None);
        assert_eq!(error_message("not json"), None);
    }
}
