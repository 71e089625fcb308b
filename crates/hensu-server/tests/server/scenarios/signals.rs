//! Durable waits and signals over the API (docs/language.md, *Timers and signals*): a timer
//! the server's takeover wakes, `POST …/signals/{name}` with typed refusals, a signal sent
//! before the execution waits for it.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

use super::{A, B, get, post, push_ok, start};
use crate::harness::Server;

/// The execution's status once `done` says so (polled; the takeover runs it in the
/// background).
async fn status_when(s: &Server, id: &str, done: impl Fn(&Value) -> bool) -> Value {
    for _ in 0..600 {
        let (_, st) = get(s, A, &format!("/api/v1/executions/{id}")).await;
        if done(&st) {
            return st;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("execution {id} never reached the expected status");
}

pub async fn waits_and_signals(s: Server) {
    push_ok(&s, A, "signalled").await;
    let id = start(&s, A, "signalled").await;
    // The timer suspends it, the takeover wakes it, and it waits for its signal.
    let st = status_when(&s, &id, |st| {
        st["status"] == "paused" && st["currentNodeId"] == "approval"
    })
    .await;
    assert_eq!(st["waitingFor"], "approved", "{st}");
    assert!(st["wakeAt"].is_string(), "the signal's timeout: {st}");
    let url = format!("/api/v1/executions/{id}/signals/approved");
    // Refusals change nothing.
    let (code, body) = post(&s, A, &url, json!({"payload": {"decision": 1}})).await;
    assert_eq!(code, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(body["code"], "invalid_signal_payload");
    let (code, body) = post(
        &s,
        A,
        &format!("/api/v1/executions/{id}/signals/nope"),
        json!({"payload": "ship"}),
    )
    .await;
    assert_eq!(code, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(body["code"], "unknown_signal");
    let (code, _) = post(&s, B, &url, json!({"payload": "ship"})).await;
    assert_eq!(code, StatusCode::NOT_FOUND, "another tenant's execution");
    // The signal wakes it: 202, and it completes with the payload in its context.
    let (code, body) = post(&s, A, &url, json!({"payload": "ship"})).await;
    assert_eq!(code, StatusCode::ACCEPTED, "{body}");
    assert_eq!(body["woke"], true);
    assert_eq!(body["seq"], 0);
    let st = status_when(&s, &id, |st| st["status"] == "completed").await;
    assert_eq!(st["currentNodeId"], "done", "{st}");
    let (_, result) = get(&s, A, &format!("/api/v1/executions/{id}/result")).await;
    assert_eq!(result["output"]["decision"], "ship", "{result}");
    // An ended execution takes no signal.
    let (code, body) = post(&s, A, &url, json!({"payload": "again"})).await;
    assert_eq!(code, StatusCode::CONFLICT, "{body}");
    assert_eq!(body["code"], "run_finished");

    // Sent before the execution waits for it: kept (200), taken when it gets there.
    let early = start(&s, A, "signalled").await;
    let (code, body) = post(
        &s,
        A,
        &format!("/api/v1/executions/{early}/signals/approved"),
        json!({"payload": "early"}),
    )
    .await;
    assert_eq!(code, StatusCode::OK, "{body}");
    assert_eq!(body["woke"], false);
    let st = status_when(&s, &early, |st| st["status"] == "completed").await;
    assert_eq!(st["currentNodeId"], "done", "{st}");
    let (_, result) = get(&s, A, &format!("/api/v1/executions/{early}/result")).await;
    assert_eq!(result["output"]["decision"], "early", "{result}");
}

/// Signal-with-start: the start's signals are checked first (a refusal starts nothing) and
/// delivered to the new execution when it waits for them.
pub async fn signal_with_start(s: Server) {
    push_ok(&s, A, "signalled").await;
    let count = |list: Value| list.as_array().map_or(0, Vec::len);
    let before = count(get(&s, A, "/api/v1/executions").await.1);
    let (code, body) = post(
        &s,
        A,
        "/api/v1/executions",
        json!({"workflowId": "signalled", "context": {"topic": "rust"},
               "signals": [{"name": "approved", "payload": 7}]}),
    )
    .await;
    assert_eq!(code, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(body["code"], "invalid_signal_payload");
    assert_eq!(
        count(get(&s, A, "/api/v1/executions").await.1),
        before,
        "nothing started"
    );
    let (code, body) = post(
        &s,
        A,
        "/api/v1/executions",
        json!({"workflowId": "signalled", "context": {"topic": "rust"},
               "signals": [{"name": "approved", "payload": "at start"}]}),
    )
    .await;
    assert_eq!(code, StatusCode::ACCEPTED, "{body}");
    let id = body["executionId"].as_str().expect("id").to_string();
    let st = status_when(&s, &id, |st| st["status"] == "completed").await;
    assert_eq!(st["currentNodeId"], "done", "{st}");
    let (_, result) = get(&s, A, &format!("/api/v1/executions/{id}/result")).await;
    assert_eq!(result["output"]["decision"], "at start", "{result}");
}

/// A signal for an `awaitSignal` of a sub-workflow child: checked against the child's
/// variables, and it wakes the execution, paused at the sub-workflow node while the child
/// waits (docs/language.md, *Timers and signals*).
pub async fn a_signal_reaches_a_waiting_child(s: Server) {
    push_ok(&s, A, "approver").await;
    push_ok(&s, A, "asker").await;
    let id = start(&s, A, "asker").await;
    let st = status_when(&s, &id, |st| st["status"] == "paused").await;
    assert_eq!(st["currentNodeId"], "call", "paused at the child: {st}");
    assert_eq!(st["waitingFor"], "granted", "{st}");
    assert!(st["wakeAt"].is_string(), "the child's timeout: {st}");
    let url = format!("/api/v1/executions/{id}/signals/granted");
    let (code, body) = post(&s, A, &url, json!({"payload": 3})).await;
    assert_eq!(code, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(body["code"], "invalid_signal_payload");
    let (code, body) = post(&s, A, &url, json!({"payload": "yes"})).await;
    assert_eq!(code, StatusCode::ACCEPTED, "{body}");
    assert_eq!(body["woke"], true, "{body}");
    let st = status_when(&s, &id, |st| st["status"] == "completed").await;
    assert_eq!(st["currentNodeId"], "done", "{st}");
    let (_, result) = get(&s, A, &format!("/api/v1/executions/{id}/result")).await;
    assert_eq!(result["output"]["decision"], "yes", "{result}");
}
