//! Wire codecs of the three protocols: request body, endpoint, auth headers, answer parsing.

pub(crate) mod anthropic;
pub(crate) mod gemini;
pub(crate) mod openai;

use serde_json::Value;

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

/// The provider's error message in an error body (`{"error": {"message": …}}` for all three,
/// `{"error": "…"}` for some OpenAI-compatible servers).
pub(crate) fn error_message(body: &str) -> Option<String> {
    let v: Value = serde_json::from_str(body).ok()?;
    let err = v.get("error")?;
    match err {
        Value::String(s) => Some(s.clone()),
        Value::Object(o) => {
            let msg = o.get("message").and_then(Value::as_str)?;
            let kind = o
                .get("type")
                .or_else(|| o.get("status"))
                .and_then(Value::as_str);
            Some(match kind {
                Some(k) => format!("{k}: {msg}"),
                None => msg.to_string(),
            })
        }
        _ => None,
    }
}

/// `usage` numbers: missing → 0.
pub(crate) fn u64_at(v: &Value, key: &str) -> u64 {
    v.get(key).and_then(Value::as_u64).unwrap_or(0)
}
