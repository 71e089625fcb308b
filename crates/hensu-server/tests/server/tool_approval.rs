//! Tool-call approval on the server (docs/mcp.md, *Tool approval*; docs/server.md, *Pending
//! reviews*): the project's `[mcp] require_approval` gates a tenant's tool reached through
//! the gateway; an agent (a mock OpenAI-compatible model on 127.0.0.1) asking for it pauses
//! the execution with a review of kind `tool` (the tool and its arguments); `POST …/resume`
//! approves it with edited `arguments` (the tenant's client gets exactly one call, with them)
//! or rejects it (no call, the model reads the reason).

use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::harness::{Backend, Server, fixture, send, token};
use crate::mcp_tenant::TenantClient;
use crate::project_config::{Mock, completion, mock};

const TENANT: &str = "tenant-a";

fn tool_call(text: &str) -> (u16, Value) {
    (
        200,
        json!({
            "id": "c1", "object": "chat.completion", "model": "mock-model",
            "choices": [{"index": 0, "finish_reason": "tool_calls",
                "message": {"role": "assistant", "content": null,
                    "tool_calls": [{"id": "call_1", "type": "function",
                        "function": {"name": "echo",
                                     "arguments": json!({"text": text}).to_string()}}]}}],
            "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}
        }),
    )
}

/// A server gating `echo`, the tenant's client connected, and an execution of `gated` paused
/// at the call: the server, the client, the model, the execution id and its one review.
async fn paused_at_the_gate(backend: Backend) -> (Server, TenantClient, Mock, String, Value) {
    let model = mock(vec![tool_call("hello"), completion("echoed")]).await;
    let toml = format!(
        "[providers.local]\nkind = \"openai\"\nbase_url = \"{}/v1\"\nmodels = [\"mock-*\"]\n\n\
         [mcp]\nrequire_approval = [\"ech*\"]\n",
        model.base
    );
    let s = Server::in_project(backend, Some(&toml), false).await;
    let client = TenantClient::connect(&s.base, &token(TENANT), TENANT).await;
    let (st, body) = send(
        &s,
        Method::POST,
        TENANT,
        "/api/v1/workflows",
        Some(fixture("gated")),
    )
    .await;
    assert!(st.is_success(), "{st} {body}");
    let (st, started) = send(
        &s,
        Method::POST,
        TENANT,
        "/api/v1/executions",
        Some(json!({"workflowId": "gated", "context": {"topic": "hello"}})),
    )
    .await;
    assert_eq!(st, StatusCode::ACCEPTED, "{started}");
    let id = started["executionId"]
        .as_str()
        .expect("present")
        .to_string();
    let status = wait_while_running(&s, &id).await;
    assert_eq!(status["status"], "paused", "{status}");
    assert!(client.calls().is_empty(), "not called before approval");
    let (st, reviews) = send(
        &s,
        Method::GET,
        TENANT,
        &format!("/api/v1/executions/{id}/reviews"),
        None,
    )
    .await;
    assert_eq!(st, StatusCode::OK, "{reviews}");
    let list = reviews["reviews"].as_array().expect("present").clone();
    assert_eq!(list.len(), 1, "{reviews}");
    assert_eq!(list[0]["kind"], "tool", "{reviews}");
    assert_eq!(list[0]["tool"], "echo");
    assert_eq!(list[0]["arguments"], json!({"text": "hello"}));
    assert_eq!(list[0]["nodeId"], "write");
    (s, client, model, id, list[0].clone())
}

/// Polls (bounded, not a timing assertion) until the execution is neither running nor queued.
async fn wait_while_running(s: &Server, id: &str) -> Value {
    wait_for(s, id, |st| st != "running" && st != "queued").await
}

/// Polls until the execution has ended (a resumed one may still read `paused` at first).
async fn wait_end(s: &Server, id: &str) -> Value {
    wait_for(s, id, |st| {
        matches!(st, "completed" | "failed" | "rejected" | "cancelled")
    })
    .await
}

async fn wait_for(s: &Server, id: &str, stop: impl Fn(&str) -> bool) -> Value {
    for _ in 0..300 {
        let path = format!("/api/v1/executions/{id}");
        let (_, status) = send(s, Method::GET, TENANT, &path, None).await;
        if stop(status["status"].as_str().unwrap_or_default()) {
            return status;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("execution {id} did not stop");
}

async fn resume(s: &Server, id: &str, body: Value) -> (StatusCode, Value) {
    send(
        s,
        Method::POST,
        TENANT,
        &format!("/api/v1/executions/{id}/resume"),
        Some(body),
    )
    .await
}

fn chats(model: &Mock) -> Vec<Value> {
    model
        .received
        .lock()
        .expect("present")
        .iter()
        .filter(|(p, _)| p == "/v1/chat/completions")
        .map(|(_, b)| b.clone())
        .collect()
}

pub async fn a_gated_tool_call_is_reviewed_and_approved_with_edited_arguments(backend: Backend) {
    let (s, client, model, id, review) = paused_at_the_gate(backend).await;
    let corr = review["correlationId"].as_str().expect("present");
    // Refused, changing nothing: arguments that are not an object, a backtrack, context
    // edits instead of arguments.
    for (body, says) in [
        (
            json!({"decision": "approve", "correlationId": corr, "arguments": ["x"]}),
            "arguments must be an object",
        ),
        (
            json!({"decision": "backtrack", "correlationId": corr, "targetStep": "write"}),
            "cannot be sent back",
        ),
        (
            json!({"decision": "approve", "correlationId": corr, "contextEdits": {"text": "x"}}),
            "give the edited arguments",
        ),
        (
            json!({"decision": "reject", "correlationId": corr, "arguments": {"text": "x"}}),
            "arguments go with decision approve",
        ),
    ] {
        let (st, answer) = resume(&s, &id, body).await;
        assert_eq!(st, StatusCode::BAD_REQUEST, "{answer}");
        assert!(answer.to_string().contains(says), "{says}: {answer}");
    }
    assert_eq!(wait_while_running(&s, &id).await["status"], "paused");
    let (st, answer) = resume(
        &s,
        &id,
        json!({"decision": "approve", "correlationId": corr, "arguments": {"text": "edited"}}),
    )
    .await;
    assert_eq!(st, StatusCode::ACCEPTED, "{answer}");
    let done = wait_end(&s, &id).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(
        client.calls(),
        vec![("echo".to_string(), json!({"text": "edited"}))],
        "the tool ran once, with the edit"
    );
    let asked = chats(&model);
    assert_eq!(asked.len(), 2, "the first turn was replayed: {asked:?}");
    assert!(asked[1].to_string().contains("edited"), "{}", asked[1]);
}

pub async fn a_rejected_tool_call_never_reaches_the_tenants_client(backend: Backend) {
    let (s, client, model, id, review) = paused_at_the_gate(backend).await;
    let corr = review["correlationId"].as_str().expect("present");
    let (st, answer) = resume(
        &s,
        &id,
        json!({"decision": "reject", "correlationId": corr, "reason": "not today"}),
    )
    .await;
    assert_eq!(st, StatusCode::ACCEPTED, "{answer}");
    let done = wait_end(&s, &id).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert!(client.calls().is_empty(), "zero calls");
    let asked = chats(&model);
    assert_eq!(asked.len(), 2, "{asked:?}");
    assert!(asked[1].to_string().contains("not today"), "{}", asked[1]);
}
