//! Independent pending reviews over the API (docs/server.md, *Pending reviews*): three fork
//! branches wait for review at once, each with its own correlation id; decided in reverse
//! order (by different requests, as different reviewers would), each decision reaches its
//! own branch and the run ends once all are decided. The `execution.review_requested`
//! events announce each waiting review before its pause.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

use super::{A, B, events, get, post, push_ok, start};
use crate::harness::Server;

/// The execution's pending reviews once `done` holds for them (polled: a decision is
/// applied in the background).
async fn reviews_when(s: &Server, id: &str, done: impl Fn(&[Value]) -> bool) -> Vec<Value> {
    for _ in 0..600 {
        let (st, body) = get(s, A, &format!("/api/v1/executions/{id}/reviews")).await;
        assert_eq!(st, StatusCode::OK, "{body}");
        let reviews = body["reviews"].as_array().cloned().unwrap_or_default();
        let (_, status) = get(s, A, &format!("/api/v1/executions/{id}")).await;
        if status["status"] == "paused" && done(&reviews) {
            return reviews;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("execution {id} never reached the expected reviews");
}

fn branches(reviews: &[Value]) -> Vec<&str> {
    reviews
        .iter()
        .map(|r| r["branch"].as_str().expect("branch"))
        .collect()
}

pub async fn branch_reviews_are_decided_independently(s: Server) {
    push_ok(&s, A, "reviews3").await;
    let mut tenant_stream = super::tenant_stream::open(&s, A, None).await;
    let id = start(&s, A, "reviews3").await;
    let evs = events(&s, A, &id, None).await;
    // The tenant stream announces them the same way, just before the pause, without an id.
    let paused = |e: &crate::harness::Sse| e.kind() == "execution.paused";
    let live =
        super::tenant_stream::read_until(&mut tenant_stream, |evs| evs.iter().any(paused)).await;
    let at = live.iter().position(paused).expect("paused");
    assert!(at >= 3, "{live:?}");
    let asked = &live[at - 3..at];
    assert!(
        asked
            .iter()
            .all(|e| e.kind() == "execution.review_requested" && e.id.is_none()),
        "{live:?}"
    );
    let tenant_ids: Vec<&str> = asked
        .iter()
        .map(|e| e.data["correlationId"].as_str().expect("c"))
        .collect();
    // One announcement per waiting review, then the pause, the announcements without an id.
    let kinds: Vec<&str> = evs.iter().map(|e| e.kind()).collect();
    assert_eq!(
        kinds[kinds.len() - 4..],
        [
            "execution.review_requested",
            "execution.review_requested",
            "execution.review_requested",
            "execution.paused"
        ],
        "{kinds:?}"
    );
    assert!(
        evs[evs.len() - 4..evs.len() - 1]
            .iter()
            .all(|e| e.id.is_none())
    );
    let announced: Vec<(String, String)> = evs[evs.len() - 4..evs.len() - 1]
        .iter()
        .map(|e| {
            assert_eq!(e.data["kind"], "branch");
            assert_eq!(e.data["within"], json!(["fan"]));
            (
                e.data["branch"].as_str().expect("b").to_string(),
                e.data["correlationId"].as_str().expect("c").to_string(),
            )
        })
        .collect();
    let first = reviews_when(&s, &id, |r| r.len() == 3).await;
    assert_eq!(branches(&first), ["a", "b", "c"]);
    let ids: Vec<(String, String)> = first
        .iter()
        .map(|r| {
            assert_eq!(r["kind"], "branch");
            assert!(r["output"].is_string(), "{r}");
            (
                r["branch"].as_str().expect("b").to_string(),
                r["correlationId"].as_str().expect("c").to_string(),
            )
        })
        .collect();
    assert_eq!(announced, ids);
    let corrs: Vec<&str> = ids.iter().map(|(_, c)| c.as_str()).collect();
    assert_eq!(tenant_ids, corrs);
    // Another tenant sees no such execution.
    let (st, _) = get(&s, B, &format!("/api/v1/executions/{id}/reviews")).await;
    assert_eq!(st, StatusCode::NOT_FOUND);
    let resume = format!("/api/v1/executions/{id}/resume");
    let (st, body) = post(
        &s,
        A,
        &resume,
        json!({"decision": "approve", "correlationId": "review-nope"}),
    )
    .await;
    assert_eq!(st, StatusCode::BAD_REQUEST);
    assert!(
        body["error"].as_str().expect("e").contains(&ids[2].1),
        "the refusal lists the waiting ids: {body}"
    );
    // Reverse order: c, then b, then a. The others keep their correlation ids.
    for (n, (branch, corr)) in ids.iter().enumerate().rev() {
        let (st, body) = post(
            &s,
            A,
            &resume,
            json!({"decision": "approve", "correlationId": corr}),
        )
        .await;
        assert_eq!(st, StatusCode::ACCEPTED, "{branch}: {body}");
        if n == 0 {
            break;
        }
        let left = reviews_when(&s, &id, |r| r.len() == n).await;
        let still: Vec<(String, String)> = left
            .iter()
            .map(|r| {
                (
                    r["branch"].as_str().expect("b").to_string(),
                    r["correlationId"].as_str().expect("c").to_string(),
                )
            })
            .collect();
        assert_eq!(still, ids[..n], "after deciding {branch}");
    }
    for _ in 0..600 {
        let (_, st) = get(&s, A, &format!("/api/v1/executions/{id}")).await;
        if st["status"] == "completed" {
            let (_, result) = get(&s, A, &format!("/api/v1/executions/{id}/result")).await;
            let parts = &result["output"]["parts"];
            for b in ["a", "b", "c"] {
                assert!(parts.get(b).is_some(), "branch {b} merged: {result}");
            }
            let (_, none) = get(&s, A, &format!("/api/v1/executions/{id}/reviews")).await;
            assert_eq!(none["reviews"], json!([]));
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("execution {id} did not complete after its three reviews");
}
