//! The streaming answers of the three protocols (docs/providers.md, *Streaming*): Anthropic
//! Messages with `"stream": true`, OpenAI-compatible chat completions with `"stream": true`
//! and Gemini `streamGenerateContent?alt=sse`, all server-sent events. Each event's text
//! delta goes to the call's token listener ([`hensu_runtime::tokens::emit`]) as it arrives;
//! the events are folded into the answer the non-streaming API would have given, which the
//! protocol's one decoder then reads — so text, usage, finish reason and tool calls are the
//! same whichever way the answer came.

use serde_json::{Map, Value, json};

use crate::config::ProviderKind;

/// Splits a byte stream into server-sent events' `data` (one string per event; `event:`
/// names are not needed: every protocol's data names its own type).
#[derive(Default)]
pub(crate) struct SseReader {
    line: Vec<u8>,
    data: String,
    has_data: bool,
}

impl SseReader {
    /// Feeds bytes; returns the data of every event they completed.
    pub(crate) fn feed(&mut self, bytes: &[u8]) -> Vec<String> {
        let mut done = Vec::new();
        for &b in bytes {
            if b == b'\n' {
                let mut line = std::mem::take(&mut self.line);
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                self.line_done(&line, &mut done);
            } else {
                self.line.push(b);
            }
        }
        done
    }

    /// The end of the body: an event not closed by a blank line still counts.
    pub(crate) fn finish(&mut self) -> Vec<String> {
        let mut done = Vec::new();
        let line = std::mem::take(&mut self.line);
        if !line.is_empty() {
            self.line_done(&line, &mut done);
        }
        self.line_done(b"", &mut done);
        done
    }

    fn line_done(&mut self, line: &[u8], done: &mut Vec<String>) {
        if line.is_empty() {
            if self.has_data {
                done.push(std::mem::take(&mut self.data));
                self.has_data = false;
            }
            return;
        }
        let line = String::from_utf8_lossy(line);
        if let Some(rest) = line.strip_prefix("data:") {
            let rest = rest.strip_prefix(' ').unwrap_or(rest);
            if self.has_data {
                self.data.push('\n');
            }
            self.data.push_str(rest);
            self.has_data = true;
        }
    }
}

/// Why a stream could not be folded into an answer.
pub(crate) enum StreamError {
    /// An `error` event (the provider's error object, as an error body would carry it).
    Provider(Value),
    /// An event that is not JSON.
    NotJson(String),
}

/// Folds a protocol's stream events into its non-streaming answer body.
pub(crate) struct Assembler {
    kind: ProviderKind,
    answer: Map<String, Value>,
    /// OpenAI: the text, the refusal and the tool calls by index; Anthropic: the blocks by
    /// index with their JSON input text; Gemini: the parts so far.
    text: String,
    refusal: Option<String>,
    items: Vec<(Value, String)>,
    /// Gemini: a candidate came (a blocked prompt has none).
    candidate: bool,
}

impl Assembler {
    pub(crate) fn new(kind: ProviderKind) -> Assembler {
        Assembler {
            kind,
            answer: Map::new(),
            text: String::new(),
            refusal: None,
            items: Vec::new(),
            candidate: false,
        }
    }

    /// One event's data; its text delta, if any, is returned for the token listener.
    pub(crate) fn event(&mut self, data: &str) -> Result<Option<String>, StreamError> {
        let data = data.trim();
        if data.is_empty() || data == "[DONE]" {
            return Ok(None);
        }
        let v: Value =
            serde_json::from_str(data).map_err(|_| StreamError::NotJson(data.to_string()))?;
        if v.get("error").is_some_and(|e| !e.is_null()) {
            return Err(StreamError::Provider(v));
        }
        Ok(match self.kind {
            ProviderKind::OpenAi => self.openai(&v),
            ProviderKind::Anthropic => self.anthropic(&v),
            ProviderKind::Gemini => self.gemini(&v),
        })
    }

    fn openai(&mut self, v: &Value) -> Option<String> {
        if let Some(u) = v.get("usage").filter(|u| u.is_object()) {
            self.answer.insert("usage".into(), u.clone());
        }
        let choice = v.get("choices")?.as_array()?.first()?;
        if let Some(r) = choice.get("finish_reason").filter(|r| !r.is_null()) {
            self.answer.insert("finish_reason".into(), r.clone());
        }
        let delta = choice.get("delta")?;
        if let Some(r) = delta.get("refusal").and_then(Value::as_str) {
            self.refusal.get_or_insert_default().push_str(r);
        }
        for call in delta
            .get("tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let i = call
                .get("index")
                .and_then(Value::as_u64)
                .map_or(self.items.len().saturating_sub(1), |i| i as usize);
            while self.items.len() <= i {
                self.items.push((json!({"function": {}}), String::new()));
            }
            let (item, args) = &mut self.items[i];
            if let Some(id) = call.get("id").filter(|id| id.is_string()) {
                item["id"] = id.clone();
            }
            if let Some(f) = call.get("function") {
                if let Some(n) = f.get("name").and_then(Value::as_str) {
                    let name = item["function"]["name"].as_str().unwrap_or("").to_string() + n;
                    item["function"]["name"] = Value::from(name);
                }
                if let Some(a) = f.get("arguments").and_then(Value::as_str) {
                    args.push_str(a);
                }
            }
        }
        let piece = delta.get("content").and_then(Value::as_str)?;
        self.text.push_str(piece);
        Some(piece.to_string())
    }

    fn anthropic(&mut self, v: &Value) -> Option<String> {
        let index = v.get("index").and_then(Value::as_u64).unwrap_or(0) as usize;
        match v.get("type").and_then(Value::as_str)? {
            "message_start" => {
                if let Some(Value::Object(m)) = v.get("message") {
                    for (k, val) in m {
                        if k != "content" {
                            self.answer.insert(k.clone(), val.clone());
                        }
                    }
                }
                None
            }
            "content_block_start" => {
                while self.items.len() <= index {
                    self.items.push((Value::Null, String::new()));
                }
                self.items[index].0 = v.get("content_block").cloned().unwrap_or(Value::Null);
                None
            }
            "content_block_delta" => {
                let delta = v.get("delta")?;
                let (block, json_text) = self.items.get_mut(index)?;
                match delta.get("type").and_then(Value::as_str)? {
                    "text_delta" => {
                        let piece = delta.get("text").and_then(Value::as_str)?;
                        let text = block.get("text").and_then(Value::as_str).unwrap_or("");
                        block["text"] = Value::from(format!("{text}{piece}"));
                        Some(piece.to_string())
                    }
                    "input_json_delta" => {
                        json_text.push_str(delta.get("partial_json").and_then(Value::as_str)?);
                        None
                    }
                    _ => None,
                }
            }
            "message_delta" => {
                if let Some(Value::Object(d)) = v.get("delta") {
                    for (k, val) in d {
                        self.answer.insert(k.clone(), val.clone());
                    }
                }
                if let Some(Value::Object(u)) = v.get("usage") {
                    let usage = self.answer.entry("usage").or_insert_with(|| json!({}));
                    if let Value::Object(into) = usage {
                        for (k, val) in u {
                            into.insert(k.clone(), val.clone());
                        }
                    }
                }
                None
            }
            _ => None,
        }
    }

    fn gemini(&mut self, v: &Value) -> Option<String> {
        for key in ["usageMetadata", "promptFeedback", "modelVersion"] {
            if let Some(val) = v.get(key) {
                self.answer.insert(key.into(), val.clone());
            }
        }
        let candidate = v.get("candidates")?.as_array()?.first()?;
        self.candidate = true;
        if let Some(r) = candidate.get("finishReason") {
            self.answer.insert("finishReason".into(), r.clone());
        }
        let mut pieces = String::new();
        for part in candidate
            .get("content")
            .and_then(|c| c.get("parts"))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let plain = part.as_object().is_some_and(|o| o.len() == 1)
                && part.get("text").is_some_and(Value::is_string);
            let thought = part.get("thought").and_then(Value::as_bool) == Some(true);
            if let (Some(t), false) = (part.get("text").and_then(Value::as_str), thought) {
                pieces.push_str(t);
            }
            // Adjacent plain text parts are one part, as the non-streaming answer has it.
            if plain
                && let Some((last, _)) = self.items.last_mut()
                && last.as_object().is_some_and(|o| o.len() == 1)
                && let Some(prev) = last.get("text").and_then(Value::as_str)
            {
                let joined = format!("{prev}{}", part["text"].as_str().unwrap_or(""));
                last["text"] = Value::from(joined);
                continue;
            }
            self.items.push((part.clone(), String::new()));
        }
        (!pieces.is_empty()).then_some(pieces)
    }

    /// The answer body the non-streaming API would have given.
    pub(crate) fn finish(self) -> Value {
        let Assembler {
            kind,
            mut answer,
            text,
            refusal,
            items,
            candidate,
        } = self;
        match kind {
            ProviderKind::OpenAi => {
                let mut message = Map::new();
                message.insert("role".into(), json!("assistant"));
                let calls: Vec<Value> = items
                    .into_iter()
                    .map(|(mut call, args)| {
                        call["type"] = json!("function");
                        call["function"]["arguments"] = Value::from(args);
                        call
                    })
                    .collect();
                message.insert(
                    "content".into(),
                    if text.is_empty() && (!calls.is_empty() || refusal.is_some()) {
                        Value::Null
                    } else {
                        Value::from(text)
                    },
                );
                if !calls.is_empty() {
                    message.insert("tool_calls".into(), Value::Array(calls));
                }
                if let Some(r) = refusal {
                    message.insert("refusal".into(), Value::from(r));
                }
                let finish = answer.remove("finish_reason").unwrap_or(Value::Null);
                answer.insert(
                    "choices".into(),
                    json!([{"index": 0, "message": message, "finish_reason": finish}]),
                );
            }
            ProviderKind::Anthropic => {
                let content: Vec<Value> = items
                    .into_iter()
                    .filter(|(b, _)| !b.is_null())
                    .map(|(mut block, input)| {
                        if block.get("type").and_then(Value::as_str) == Some("tool_use") {
                            block["input"] = if input.trim().is_empty() {
                                json!({})
                            } else {
                                serde_json::from_str(&input).unwrap_or(Value::String(input))
                            };
                        }
                        block
                    })
                    .collect();
                answer.insert("content".into(), Value::Array(content));
            }
            ProviderKind::Gemini if candidate => {
                let parts: Vec<Value> = items.into_iter().map(|(p, _)| p).collect();
                let finish = answer.remove("finishReason");
                // A candidate without parts (a refusal) has none in the plain answer either.
                let mut candidate = if parts.is_empty() {
                    json!({"content": {}})
                } else {
                    json!({"content": {"role": "model", "parts": parts}})
                };
                if let Some(f) = finish {
                    candidate["finishReason"] = f;
                }
                answer.insert("candidates".into(), json!([candidate]));
            }
            ProviderKind::Gemini => {}
        }
        Value::Object(answer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_split_anywhere_and_crlf_lines() {
        let body = b"event: a\r\ndata: {\"x\":\r\ndata: 1}\r\n\r\n: comment\n\ndata: [DONE]";
        for cut in 0..body.len() {
            let mut r = SseReader::default();
            let mut got = r.feed(&body[..cut]);
            got.extend(r.feed(&body[cut..]));
            got.extend(r.finish());
            assert_eq!(got, ["{\"x\":\n1}", "[DONE]"], "cut at {cut}");
        }
    }

    #[test]
    fn gemini_parts_join_as_the_plain_answer_has_them() {
        let mut a = Assembler::new(ProviderKind::Gemini);
        for data in [
            r#"{"candidates":[{"content":{"parts":[{"text":"a"}]}}]}"#,
            r#"{"candidates":[{"content":{"parts":[{"text":"b"},{"functionCall":{"name":"f"}}]}}]}"#,
            r#"{"candidates":[{"content":{"parts":[{"text":"c"}]},"finishReason":"STOP"}]}"#,
        ] {
            assert!(a.event(data).is_ok());
        }
        assert_eq!(
            a.finish(),
            json!({"candidates": [{"content": {"role": "model", "parts": [
                {"text": "ab"}, {"functionCall": {"name": "f"}}, {"text": "c"}]},
                "finishReason": "STOP"}]})
        );
        let mut a = Assembler::new(ProviderKind::OpenAi);
        assert!(matches!(a.event("not json"), Err(StreamError::NotJson(_))));
        assert!(matches!(
            a.event(r#"{"error":{"message":"m"}}"#),
            Err(StreamError::Provider(_))
        ));
    }
}
