//! The paged execution list (docs/server.md, *Paging*): query parameters, the next page in
//! `X-Next-Cursor` and `Link`, and 400s for bad parameters.

use reqwest::StatusCode;
use serde_json::Value;

use super::{A, B, push_ok, start};
use crate::harness::{Server, token};

/// The list at `path_and_query` as `tenant`: status, body, `X-Next-Cursor`, `Link`.
async fn list(
    s: &Server,
    tenant: &str,
    path_and_query: &str,
) -> (StatusCode, Value, Option<String>, Option<String>) {
    let resp = s
        .http
        .get(s.url(path_and_query))
        .bearer_auth(token(tenant))
        .send()
        .await
        .expect("list");
    let header = |name: &str| {
        resp.headers()
            .get(name)
            .map(|v| v.to_str().expect("ascii").to_string())
    };
    let (cursor, link) = (header("x-next-cursor"), header("link"));
    let status = resp.status();
    let body: Value = resp.json().await.expect("json");
    (status, body, cursor, link)
}

fn ids(body: &Value) -> Vec<String> {
    body.as_array()
        .expect("array")
        .iter()
        .map(|e| e["executionId"].as_str().expect("id").to_string())
        .collect()
}

/// Every id reached by following `Link: <…>; rel="next"` from `first`.
async fn follow(s: &Server, tenant: &str, first: &str) -> (Vec<String>, usize) {
    let (mut all, mut pages, mut next) = (Vec::new(), 0, Some(first.to_string()));
    while let Some(path) = next.take() {
        let (st, body, cursor, link) = list(s, tenant, &path).await;
        assert_eq!(st, StatusCode::OK, "{body}");
        pages += 1;
        all.extend(ids(&body));
        assert_eq!(cursor.is_some(), link.is_some());
        if let (Some(cursor), Some(link)) = (cursor, link) {
            let target = link
                .strip_prefix('<')
                .and_then(|l| l.strip_suffix(">; rel=\"next\""))
                .expect("Link: <…>; rel=\"next\"");
            assert!(target.contains(&format!("cursor={cursor}")), "{target}");
            next = Some(target.to_string());
        }
        assert!(pages < 20, "the pages do not end");
    }
    (all, pages)
}

pub async fn executions_are_paged(s: Server) {
    push_ok(&s, A, "linear").await;
    push_ok(&s, B, "linear").await;
    let mut started = Vec::new();
    for _ in 0..5 {
        started.push(start(&s, A, "linear").await);
    }
    let theirs = start(&s, B, "linear").await;

    // Unpaged (the default limit of 50): every execution, newest first, no next page.
    let (st, body, cursor, link) = list(&s, A, "/api/v1/executions").await;
    assert_eq!(st, StatusCode::OK);
    let everything = ids(&body);
    assert_eq!(everything.len(), 5);
    assert_eq!((cursor, link), (None, None));
    let mut sorted = everything.clone();
    sorted.sort();
    started.sort();
    assert_eq!(sorted, started);

    // Pages of two, followed through the Link header: the same list, once each.
    let (paged, pages) = follow(&s, A, "/api/v1/executions?limit=2").await;
    assert_eq!((paged, pages), (everything.clone(), 3));
    // The filters travel in the next link.
    let (paged, pages) = follow(
        &s,
        A,
        "/api/v1/executions?limit=2&workflow=linear&since=2000-01-01T00:00:00%2B00:00",
    )
    .await;
    assert_eq!((paged, pages), (everything.clone(), 3));
    let all_statuses = "queued,running,paused,completed,failed,rejected,cancelled";
    let (paged, _) = follow(&s, A, &format!("/api/v1/executions?status={all_statuses}")).await;
    assert_eq!(paged, everything);
    for empty in [
        "/api/v1/executions?status=rejected",
        "/api/v1/executions?workflow=other",
        "/api/v1/executions?until=2000-01-01T00:00:00Z",
        "/api/v1/executions?since=2999-01-01T00:00:00Z",
    ] {
        let (st, body, _, _) = list(&s, A, empty).await;
        assert_eq!(
            (st, body),
            (StatusCode::OK, Value::Array(Vec::new())),
            "{empty}"
        );
    }
    // Another tenant pages only its own.
    let (paged, _) = follow(&s, B, "/api/v1/executions?limit=1").await;
    assert_eq!(paged, [theirs]);

    // Bad parameters: a JSON 400 with a code, nothing listed.
    for (query, code) in [
        ("status=bogus", "invalid_parameter"),
        ("status=running,", "invalid_parameter"),
        ("limit=0", "invalid_parameter"),
        ("limit=ten", "invalid_parameter"),
        ("limit=-1", "invalid_parameter"),
        ("since=yesterday", "invalid_parameter"),
        ("until=2026-13-01T00:00:00Z", "invalid_parameter"),
        ("workflow=a%20b", "invalid_parameter"),
        ("cursor=zz", "invalid_cursor"),
        ("cursor=313a", "invalid_cursor"),
    ] {
        let (st, body, _, _) = list(&s, A, &format!("/api/v1/executions?{query}")).await;
        assert_eq!(st, StatusCode::BAD_REQUEST, "{query}: {body}");
        assert_eq!(body["code"], code, "{query}: {body}");
        assert_eq!(body["status"], 400);
    }
    // A limit over the maximum is clamped, not refused.
    let (st, body, _, _) = list(&s, A, "/api/v1/executions?limit=100000").await;
    assert_eq!((st, ids(&body).len()), (StatusCode::OK, 5));
}
