//! Batch starts (docs/server.md, *Batch starts*): one queued run per context, run by the
//! server's worker; a bad context refuses the whole batch; an `Idempotency-Key` covers every
//! item.

use reqwest::StatusCode;
use serde_json::{Value, json};

use super::{A, B, events, get, post, push_ok};
use crate::harness::{Server, token};

const BATCH: &str = "/api/v1/executions/batch";

async fn keyed_batch(s: &Server, key: &str, body: &Value) -> (StatusCode, Value) {
    let resp = s
        .http
        .post(s.url(BATCH))
        .bearer_auth(token(A))
        .header("content-type", "application/json")
        .header("idempotency-key", key)
        .body(body.to_string())
        .send()
        .await
        .expect("batch");
    let status = resp.status();
    (status, resp.json().await.expect("json"))
}

fn ids(answer: &Value) -> Vec<String> {
    answer["executions"]
        .as_array()
        .expect("executions")
        .iter()
        .map(|e| e["executionId"].as_str().expect("executionId").to_string())
        .collect()
}

async fn count(s: &Server, tenant: &str) -> usize {
    let (_, list) = get(s, tenant, "/api/v1/executions?limit=100").await;
    list.as_array().expect("list").len()
}

pub async fn batch_starts_queue_runs_for_the_workers(s: Server) {
    push_ok(&s, A, "linear").await;
    push_ok(&s, A, "strict").await;
    let topics = ["red", "green", "blue"];
    let body = json!({"workflowId": "linear",
        "contexts": topics.iter().map(|t| json!({"topic": t})).collect::<Vec<_>>()});
    let (st, answer) = post(&s, A, BATCH, body.clone()).await;
    assert_eq!(st, StatusCode::ACCEPTED, "{answer}");
    let queued = ids(&answer);
    assert_eq!(queued.len(), 3, "{answer}");
    assert!(queued[0] != queued[1] && queued[1] != queued[2], "{answer}");
    // The server's worker claims and runs each; each run has its own context, in order.
    for (id, topic) in queued.iter().zip(topics) {
        let stream = events(&s, A, id, None).await;
        assert_eq!(
            stream.last().map(|e| e.kind()),
            Some("execution.completed"),
            "{stream:?}"
        );
        let (st, result) = get(&s, A, &format!("/api/v1/executions/{id}/result")).await;
        assert_eq!(st, StatusCode::OK, "{result}");
        assert_eq!(result["output"]["topic"], topic, "{result}");
    }
    // Another tenant sees none of them.
    let (st, _) = get(&s, B, &format!("/api/v1/executions/{}", queued[0])).await;
    assert_eq!(st, StatusCode::NOT_FOUND);

    // A key covers every item: the retry queues nothing and answers the same ids.
    let (st, first) = keyed_batch(&s, "nightly-1", &body).await;
    assert_eq!(st, StatusCode::ACCEPTED, "{first}");
    let (st, again) = keyed_batch(&s, "nightly-1", &body).await;
    assert_eq!(st, StatusCode::OK, "{again}");
    assert_eq!(ids(&again), ids(&first));
    let changed = json!({"workflowId": "linear", "contexts": [{"topic": "other"}]});
    let (st, err) = keyed_batch(&s, "nightly-1", &changed).await;
    assert_eq!(st, StatusCode::UNPROCESSABLE_ENTITY, "{err}");
    assert_eq!(err["code"], "idempotency_key_reused");

    // Refusals queue nothing.
    let before = count(&s, A).await;
    let bad_input = json!({"workflowId": "strict",
        "contexts": [{"topic": "t", "count": 1}, {"topic": "t"}]});
    let (st, err) = post(&s, A, BATCH, bad_input).await;
    assert_eq!(st, StatusCode::BAD_REQUEST, "{err}");
    assert!(
        err["error"]
            .as_str()
            .expect("error")
            .starts_with("contexts[1]: "),
        "{err}"
    );
    for (body, status, code) in [
        (
            json!({"workflowId": "linear", "contexts": []}),
            StatusCode::BAD_REQUEST,
            Some("invalid_parameter"),
        ),
        (
            json!({"workflowId": "linear", "contexts": vec![json!({}); 1001]}),
            StatusCode::BAD_REQUEST,
            Some("invalid_parameter"),
        ),
        (
            json!({"workflowId": "linear", "contexts": [{}], "extra": 1}),
            StatusCode::BAD_REQUEST,
            None,
        ),
        (
            json!({"workflowId": "linear", "contexts": [1]}),
            StatusCode::BAD_REQUEST,
            None,
        ),
        (
            json!({"workflowId": "nope", "contexts": [{}]}),
            StatusCode::NOT_FOUND,
            None,
        ),
    ] {
        let (st, err) = post(&s, A, BATCH, body.clone()).await;
        assert_eq!(st, status, "{body}: {err}");
        if let Some(code) = code {
            assert_eq!(err["code"], code, "{err}");
        }
    }
    // Another tenant's workflow is unknown.
    let (st, _) = post(
        &s,
        B,
        BATCH,
        json!({"workflowId": "linear", "contexts": [{}]}),
    )
    .await;
    assert_eq!(st, StatusCode::NOT_FOUND);
    assert_eq!(count(&s, A).await, before, "a refused batch queues nothing");
}
