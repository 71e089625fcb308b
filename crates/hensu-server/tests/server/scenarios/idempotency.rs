//! Idempotent starts (docs/server.md, *Idempotent starts*): one execution per (tenant,
//! `Idempotency-Key`), a reused key refused, a bad key refused.

use reqwest::StatusCode;
use serde_json::{Value, json};

use super::{A, B, get, push_ok};
use crate::harness::{Server, token};

/// `POST /api/v1/executions` as `tenant` with `key` (raw header bytes) and `body`.
pub(crate) async fn keyed_start(
    s: &Server,
    tenant: &str,
    key: &[u8],
    body: &str,
) -> (StatusCode, Value) {
    let resp = s
        .http
        .post(s.url("/api/v1/executions"))
        .bearer_auth(token(tenant))
        .header("content-type", "application/json")
        .header(
            "idempotency-key",
            reqwest::header::HeaderValue::from_bytes(key).expect("header bytes"),
        )
        .body(body.to_string())
        .send()
        .await
        .expect("start");
    let status = resp.status();
    (status, resp.json().await.expect("json"))
}

pub async fn idempotent_starts(s: Server) {
    push_ok(&s, A, "linear").await;
    push_ok(&s, B, "linear").await;
    let body = r#"{"workflowId": "linear", "context": {"topic": "rust", "n": 1}}"#;
    let (st, first) = keyed_start(&s, A, b"order-1", body).await;
    assert_eq!(st, StatusCode::ACCEPTED, "{first}");
    let id = first["executionId"].as_str().expect("id").to_string();
    // A retry (keys in another order: the same request): 200, the same execution.
    let reordered = r#"{"context": {"n": 1, "topic": "rust"}, "workflowId": "linear"}"#;
    for again in [body, reordered] {
        let (st, answer) = keyed_start(&s, A, b"order-1", again).await;
        assert_eq!(st, StatusCode::OK, "{answer}");
        assert_eq!(answer["executionId"], id.as_str());
        assert_eq!(answer["workflowId"], "linear");
    }
    // Another request under the key: 422, nothing started.
    let other = r#"{"workflowId": "linear", "context": {"topic": "go"}}"#;
    let (st, err) = keyed_start(&s, A, b"order-1", other).await;
    assert_eq!(st, StatusCode::UNPROCESSABLE_ENTITY, "{err}");
    assert_eq!(err["code"], "idempotency_key_reused");
    assert!(err["error"].as_str().expect("error").contains(&id), "{err}");
    // Keys are per tenant; a new key is a new execution.
    let (st, theirs) = keyed_start(&s, B, b"order-1", body).await;
    assert_eq!(st, StatusCode::ACCEPTED, "{theirs}");
    assert_ne!(theirs["executionId"], id.as_str());
    let (st, second) = keyed_start(&s, A, b"order-2", body).await;
    assert_eq!(st, StatusCode::ACCEPTED, "{second}");
    // Bad keys: 400, nothing started.
    let long = vec![b'k'; 256];
    let max = vec![b'k'; 255];
    for bad in [&b"a b"[..], b"", &long, "é".as_bytes(), b"tab\tkey"] {
        let (st, err) = keyed_start(&s, A, bad, body).await;
        assert_eq!(st, StatusCode::BAD_REQUEST, "{bad:?}: {err}");
        assert_eq!(err["code"], "invalid_idempotency_key", "{err}");
    }
    let (st, _) = keyed_start(&s, A, &max, body).await;
    assert_eq!(st, StatusCode::ACCEPTED, "255 characters are allowed");
    let (_, list) = get(&s, A, "/api/v1/executions").await;
    assert_eq!(list.as_array().map(Vec::len), Some(3), "{list}");
    // Without a key every start is a new execution, as before.
    let plain = json!({"workflowId": "linear", "context": {"topic": "rust", "n": 1}});
    let (st, _) = super::post(&s, A, "/api/v1/executions", plain).await;
    assert_eq!(st, StatusCode::ACCEPTED);
}
