//! Streamed answers (docs/providers.md, *Streaming*): with a token listener attached, each
//! protocol's streaming API is used, the text arrives in pieces, and the answer assembled from
//! the stream is the one the plain API gives (text, usage, finish reason, tool calls).

use hensu_runtime::tokens::{Token, TokenScope, TokenSink, in_call};

use crate::support::*;

#[derive(Default)]
struct Pieces(Mutex<Vec<String>>);

impl TokenSink for Pieces {
    fn on_token(&self, t: &Token<'_>) {
        self.0.lock().expect("lock").push(t.text.to_string());
    }
}

/// An SSE body of `events` (`(event name, data)`).
fn sse(events: &[(&str, Value)]) -> Reply {
    sse_then(events, "")
}

/// An SSE body of `events`, then `tail` (raw).
fn sse_then(events: &[(&str, Value)], tail: &str) -> Reply {
    let mut body = String::new();
    for (name, data) in events {
        if !name.is_empty() {
            body.push_str(&format!("event: {name}\n"));
        }
        body.push_str(&format!("data: {data}\n\n"));
    }
    body.push_str(tail);
    Reply::raw(200, &body).header("content-type", "text/event-stream")
}

/// The same call plain and streamed: both answers, the pieces, the streamed request.
async fn both(
    provider: &str,
    model: &str,
    plain: Reply,
    streamed: Reply,
) -> (AgentResponse, AgentResponse, Vec<String>, Recorded) {
    let server = MockServer::start(vec![plain, streamed]).await;
    let h = harness(provider, &server.url(), "", None);
    let agent = h.agent(agent_config(model));
    let a = call(agent.as_ref(), "Write").await.expect("plain answer");
    let pieces = Arc::new(Pieces::default());
    let scope = TokenScope::new(pieces.clone(), "draft", None);
    let b = in_call(Some(scope), call(agent.as_ref(), "Write"))
        .await
        .expect("streamed answer");
    let reqs = server.requests();
    assert!(
        reqs[0].json().get("stream").is_none(),
        "the plain call does not stream"
    );
    let got = pieces.0.lock().expect("lock").clone();
    (a, b, got, reqs[1].clone())
}

fn same(a: &AgentResponse, b: &AgentResponse) {
    assert_eq!(a.text, b.text);
    assert_eq!(a.usage, b.usage);
    assert_eq!(
        a.metadata.get("finish_reason"),
        b.metadata.get("finish_reason")
    );
    assert_eq!(a.metadata.get("tool_calls"), b.metadata.get("tool_calls"));
}

#[tokio::test]
async fn openai_streams_the_text_and_assembles_the_same_answer() {
    let chunk = |delta: Value, finish: Value| {
        json!({"id": "c1", "object": "chat.completion.chunk",
               "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    };
    let streamed = sse_then(
        &[
            (
                "",
                chunk(json!({"role": "assistant", "content": ""}), Value::Null),
            ),
            ("", chunk(json!({"content": "Hello "}), Value::Null)),
            ("", chunk(json!({"content": "from "}), Value::Null)),
            ("", chunk(json!({"content": "GPT"}), Value::Null)),
            ("", chunk(json!({}), json!("stop"))),
            (
                "",
                json!({"choices": [], "usage": {"prompt_tokens": 20, "completion_tokens": 4}}),
            ),
        ],
        "data: [DONE]\n\n",
    );
    let (a, b, pieces, req) =
        both("openai", "gpt-4o", openai_text("Hello from GPT"), streamed).await;
    same(&a, &b);
    assert_eq!(pieces, ["Hello ", "from ", "GPT"]);
    let body = req.json();
    assert_eq!(body["stream"], true);
    assert_eq!(body["stream_options"], json!({"include_usage": true}));
    assert_eq!(req.path, "/v1/chat/completions");
}

#[tokio::test]
async fn openai_streamed_tool_calls_are_assembled() {
    let chunk = |delta: Value| json!({"choices": [{"index": 0, "delta": delta}]});
    let streamed = sse(&[
        (
            "",
            chunk(json!({"role": "assistant", "content": null, "tool_calls": [
                {"index": 0, "id": "call_9", "type": "function",
                 "function": {"name": "lookup", "arguments": ""}}]})),
        ),
        (
            "",
            chunk(json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"q\":"}}]})),
        ),
        (
            "",
            chunk(json!({"tool_calls": [{"index": 0, "function": {"arguments": "\"rust\"}"}}]})),
        ),
        (
            "",
            json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}],
                   "usage": {"prompt_tokens": 3, "completion_tokens": 2}}),
        ),
    ]);
    // Outside the tool loop a tool request answers `Tool: <name>`, the same both ways.
    let (a, b, pieces, _) = both(
        "openai",
        "gpt-4o",
        openai_tool("call_9", "lookup", "{\"q\":\"rust\"}"),
        streamed,
    )
    .await;
    same(&a, &b);
    assert_eq!(b.text, "Tool: lookup");
    assert!(pieces.is_empty());
}

#[tokio::test]
async fn anthropic_streams_the_text_and_assembles_the_same_answer() {
    let streamed = sse(&[
        (
            "message_start",
            json!({"type": "message_start", "message": {"id": "msg_1", "type": "message",
                "role": "assistant", "content": [], "stop_reason": null,
                "usage": {"input_tokens": 11, "output_tokens": 1}}}),
        ),
        (
            "content_block_start",
            json!({"type": "content_block_start", "index": 0,
                   "content_block": {"type": "text", "text": ""}}),
        ),
        ("ping", json!({"type": "ping"})),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0,
                   "delta": {"type": "text_delta", "text": "Hello from"}}),
        ),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0,
                   "delta": {"type": "text_delta", "text": " Claude"}}),
        ),
        (
            "content_block_stop",
            json!({"type": "content_block_stop", "index": 0}),
        ),
        (
            "message_delta",
            json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"},
                   "usage": {"output_tokens": 7}}),
        ),
        ("message_stop", json!({"type": "message_stop"})),
    ]);
    let (a, b, pieces, req) = both(
        "anthropic",
        "claude-sonnet-4-6",
        anthropic_text("Hello from Claude"),
        streamed,
    )
    .await;
    same(&a, &b);
    assert_eq!(pieces, ["Hello from", " Claude"]);
    assert_eq!(req.json()["stream"], true);
    assert_eq!(req.path, "/v1/messages");
}

#[tokio::test]
async fn anthropic_streamed_tool_use_is_assembled_and_errors_are_retried() {
    let streamed = sse(&[
        (
            "message_start",
            json!({"type": "message_start", "message": {"usage": {"input_tokens": 5, "output_tokens": 0}}}),
        ),
        (
            "content_block_start",
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        ),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Let me check."}}),
        ),
        (
            "content_block_start",
            json!({"type": "content_block_start", "index": 1,
                   "content_block": {"type": "tool_use", "id": "tu_1", "name": "lookup", "input": {}}}),
        ),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 1,
                   "delta": {"type": "input_json_delta", "partial_json": "{\"q\": \"ru"}}),
        ),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 1,
                   "delta": {"type": "input_json_delta", "partial_json": "st\"}"}}),
        ),
        (
            "message_delta",
            json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 3}}),
        ),
    ]);
    let (a, b, pieces, _) = both(
        "anthropic",
        "claude-sonnet-4-6",
        anthropic_tool("tu_1", "lookup", json!({"q": "rust"})),
        streamed,
    )
    .await;
    same(&a, &b);
    assert_eq!(pieces, ["Let me check."]);

    // An error event in the middle of a stream is an overloaded server: retried.
    let overloaded = sse(&[(
        "error",
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
    )]);
    let ok = sse(&[
        (
            "content_block_start",
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": "fine"}}),
        ),
        (
            "message_delta",
            json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}}),
        ),
    ]);
    let server = MockServer::start(vec![overloaded, ok]).await;
    let h = harness("anthropic", &server.url(), "", None);
    let agent = h.agent(agent_config("claude-sonnet-4-6"));
    let scope = TokenScope::new(Arc::new(Pieces::default()), "draft", None);
    let r = in_call(Some(scope), call(agent.as_ref(), "hi"))
        .await
        .expect("retried");
    assert_eq!(r.text, "fine");
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn gemini_streams_through_stream_generate_content() {
    let streamed = sse(&[
        (
            "",
            json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "Hel"}]}}],
                   "usageMetadata": {"promptTokenCount": 9}}),
        ),
        (
            "",
            json!({"candidates": [{"content": {"role": "model",
                   "parts": [{"text": "thinking", "thought": true}, {"text": "lo from "}]}}]}),
        ),
        (
            "",
            json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "Gemini"}]},
                   "finishReason": "STOP"}],
                   "usageMetadata": {"promptTokenCount": 9, "candidatesTokenCount": 6}}),
        ),
    ]);
    let (a, b, pieces, req) = both(
        "gemini",
        "gemini-2.5-flash",
        gemini_text("Hello from Gemini"),
        streamed,
    )
    .await;
    same(&a, &b);
    assert_eq!(pieces, ["Hel", "lo from ", "Gemini"]);
    assert_eq!(
        req.path,
        "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
    );

    // A blocked prompt streams no candidate: refused, as the plain answer is.
    let blocked = sse(&[("", json!({"promptFeedback": {"blockReason": "SAFETY"}}))]);
    let server = MockServer::start(vec![blocked]).await;
    let h = harness("gemini", &server.url(), "", None);
    let agent = h.agent(agent_config("gemini-2.5-flash"));
    let scope = TokenScope::new(Arc::new(Pieces::default()), "draft", None);
    let e = in_call(Some(scope), call(agent.as_ref(), "hi"))
        .await
        .expect_err("blocked");
    assert!(
        e.message.contains("prompt blocked (SAFETY)"),
        "{}",
        e.message
    );
}

#[tokio::test]
async fn a_server_that_ignores_stream_is_read_as_a_plain_answer() {
    let server = MockServer::start(vec![openai_text("Not streamed")]).await;
    let h = harness("openai", &server.url(), "", None);
    let agent = h.agent(agent_config("gpt-4o"));
    let pieces = Arc::new(Pieces::default());
    let scope = TokenScope::new(pieces.clone(), "draft", None);
    let r = in_call(Some(scope), call(agent.as_ref(), "hi"))
        .await
        .expect("answer");
    assert_eq!(r.text, "Not streamed");
    assert_eq!(r.usage.map(|u| u.output_tokens), Some(4));
    assert_eq!(server.requests()[0].json()["stream"], true);
    assert!(pieces.0.lock().expect("lock").is_empty());
}
