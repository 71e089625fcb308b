//! Failure reasons travel: a start the workflow's inputs refuse is a 400 with the text
//! `hensuc run` fails with, and a run that fails carries its reason to the status, the
//! result and the `execution.error` event.

use reqwest::StatusCode;
use serde_json::{Value, json};

use super::{A, events, get, post, push_ok};
use crate::harness::Server;

fn start_body(context: Value) -> Value {
    json!({"workflowId": "strict", "context": context})
}

pub async fn bad_inputs_are_refused_at_start(s: Server) {
    push_ok(&s, A, "strict").await;
    let (st, body) = post(&s, A, "/api/v1/executions", start_body(json!({}))).await;
    assert_eq!(st, StatusCode::BAD_REQUEST, "{body}");
    // The engine's own message (as `hensuc run` prints it), and how to give them.
    assert_eq!(
        body["error"],
        "missing required inputs: topic, count (give them in the start's \"context\": \
         {\"topic\": \"…\", \"count\": \"…\"})"
    );
    let mistyped = start_body(json!({"topic": 5, "count": 1}));
    let (st, body) = post(&s, A, "/api/v1/executions", mistyped).await;
    assert_eq!(st, StatusCode::BAD_REQUEST, "{body}");
    let error = body["error"].as_str().expect("error");
    assert!(
        error.starts_with("invalid inputs: `topic` is a number (5), expected "),
        "{error}"
    );
    // Nothing was stored.
    let (_, list) = get(&s, A, "/api/v1/executions").await;
    assert_eq!(list.as_array().map(Vec::len), Some(0), "{list}");
}

pub async fn a_failed_run_carries_its_reason(s: Server) {
    push_ok(&s, A, "strict").await;
    let inputs = start_body(json!({"topic": "t", "count": 2}));
    let (st, body) = post(&s, A, "/api/v1/executions", inputs).await;
    assert_eq!(st, StatusCode::ACCEPTED, "{body}");
    let id = body["executionId"].as_str().expect("id").to_string();
    let evs = events(&s, A, &id, None).await;
    let last = evs.last().expect("events");
    assert_eq!(last.kind(), "execution.error", "{evs:?}");
    let message = last.data["message"].as_str().expect("message").to_string();
    // The run's error, with its cause: the server-mode refusal of the local command.
    assert!(
        message.starts_with("No valid transition from deploy"),
        "{message}"
    );
    assert!(
        message.contains(
            "(One or more actions failed: execute:deploy: Server mode does not support local \
             command execution. Use MCP tool calls instead.)"
        ),
        "{message}"
    );
    assert_eq!(last.data["nodeId"], "deploy");
    let (_, status) = get(&s, A, &format!("/api/v1/executions/{id}")).await;
    assert_eq!(status["status"], "failed", "{status}");
    assert_eq!(status["error"], message.as_str(), "{status}");
    let (_, result) = get(&s, A, &format!("/api/v1/executions/{id}/result")).await;
    assert_eq!(result["error"], message.as_str(), "{result}");
}
