//! Canned answers in each provider's protocol.

use super::*;

pub fn anthropic_text(text: &str) -> Reply {
    Reply::json(
        200,
        json!({
            "id": "msg_1", "type": "message", "role": "assistant",
            "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn",
            "usage": {"input_tokens": 11, "output_tokens": 7}
        }),
    )
}

pub fn anthropic_tool(id: &str, name: &str, input: Value) -> Reply {
    Reply::json(
        200,
        json!({
            "id": "msg_t", "type": "message", "role": "assistant",
            "content": [
                {"type": "text", "text": "Let me check."},
                {"type": "tool_use", "id": id, "name": name, "input": input}
            ],
            "stop_reason": "tool_use",
            "usage": {"input_tokens": 5, "output_tokens": 3}
        }),
    )
}

pub fn openai_text(text: &str) -> Reply {
    Reply::json(
        200,
        json!({
            "id": "chatcmpl-1", "object": "chat.completion",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 20, "completion_tokens": 4, "total_tokens": 24}
        }),
    )
}

pub fn openai_tool(id: &str, name: &str, args: &str) -> Reply {
    Reply::json(
        200,
        json!({
            "choices": [{"index": 0, "message": {"role": "assistant", "content": null,
                "tool_calls": [{"id": id, "type": "function", "function": {"name": name, "arguments": args}}]},
                "finish_reason": "tool_calls"}],
            "usage": {"prompt_tokens": 3, "completion_tokens": 2}
        }),
    )
}

pub fn gemini_text(text: &str) -> Reply {
    Reply::json(
        200,
        json!({
            "candidates": [{"content": {"role": "model", "parts": [{"text": text}]}, "finishReason": "STOP"}],
            "usageMetadata": {"promptTokenCount": 9, "candidatesTokenCount": 6, "totalTokenCount": 15}
        }),
    )
}

pub fn gemini_tool(name: &str, args: Value) -> Reply {
    Reply::json(
        200,
        json!({
            "candidates": [{"content": {"role": "model", "parts": [
                {"functionCall": {"name": name, "args": args}, "thoughtSignature": "sig-abc"}
            ]}, "finishReason": "STOP"}],
            "usageMetadata": {"promptTokenCount": 4, "candidatesTokenCount": 2}
        }),
    )
}
