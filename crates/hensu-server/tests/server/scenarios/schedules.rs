//! `/api/v1/schedules` (docs/schedules.md): the definition's rules and codes, tenant scoping,
//! firings of a seconds-level cron started through the run recipe of `POST
//! /api/v1/executions`, run now, pause and resume, and the overlap policies.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

use super::{A, B, delete, get, post, push_ok};
use crate::harness::{Server, send};

pub(crate) async fn put(s: &Server, tenant: &str, path: &str, body: Value) -> (StatusCode, Value) {
    send(s, reqwest::Method::PUT, tenant, path, Some(body)).await
}

/// The schedule's firings once `done` holds for them (checked every 100 ms, for at most 30 s).
pub(crate) async fn firings_until(
    s: &Server,
    tenant: &str,
    id: &str,
    done: impl Fn(&[Value]) -> bool,
) -> Vec<Value> {
    for _ in 0..300 {
        let (st, body) = get(s, tenant, &format!("/api/v1/schedules/{id}")).await;
        assert_eq!(st, StatusCode::OK, "{body}");
        let firings = body["firings"].as_array().cloned().unwrap_or_default();
        if done(&firings) {
            return firings;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the firings of {id} never got there");
}

pub(crate) fn count(firings: &[Value], state: &str) -> usize {
    firings.iter().filter(|f| f["state"] == state).count()
}

pub async fn schedules_crud(s: Server) {
    push_ok(&s, A, "linear").await;
    let def = json!({"id": "nightly", "workflowId": "linear", "cron": "0 2 * * *",
                     "timeZone": "Europe/Berlin", "context": {"topic": "rust"}});
    let (st, body) = post(&s, A, "/api/v1/schedules", def.clone()).await;
    assert_eq!(st, StatusCode::CREATED, "{body}");
    assert_eq!(body["id"], "nightly");
    assert_eq!(
        (body["overlap"].as_str(), body["missed"].as_str()),
        (Some("skip"), Some("run_once"))
    );
    assert_eq!(body["source"], "api");
    assert!(
        body["nextFireAt"]
            .as_str()
            .is_some_and(|t| t.ends_with(":00:00.000Z")),
        "{body}"
    );
    let (st, body) = post(&s, A, "/api/v1/schedules", def.clone()).await;
    assert_eq!(
        (st, body["code"].as_str()),
        (StatusCode::CONFLICT, Some("schedule_exists"))
    );
    // The same id in another tenant is another schedule; B has no workflow `linear`.
    let (st, body) = post(&s, B, "/api/v1/schedules", def.clone()).await;
    assert_eq!(
        (st, body["code"].as_str()),
        (StatusCode::NOT_FOUND, Some("unknown_workflow"))
    );
    for (bad, code) in [
        (
            json!({"id": "x", "workflowId": "linear", "cron": "0 25 * * *"}),
            "invalid_cron",
        ),
        (
            json!({"id": "x", "workflowId": "linear", "cron": "0 1 * * *", "timeZone": "Mars/Base"}),
            "invalid_time_zone",
        ),
    ] {
        let (st, body) = post(&s, A, "/api/v1/schedules", bad).await;
        assert_eq!(
            (st, body["code"].as_str()),
            (StatusCode::BAD_REQUEST, Some(code)),
            "{body}"
        );
    }
    let (st, _) = post(
        &s,
        A,
        "/api/v1/schedules",
        json!({"id": "x", "workflowId": "linear", "cron": "* * * * *", "corn": 1}),
    )
    .await;
    assert_eq!(st, StatusCode::BAD_REQUEST, "unknown fields are refused");
    let (st, list) = get(&s, A, "/api/v1/schedules").await;
    assert_eq!(st, StatusCode::OK);
    assert_eq!(list.as_array().map(Vec::len), Some(1));
    let (_, list) = get(&s, B, "/api/v1/schedules").await;
    assert_eq!(list, json!([]));
    let (st, _) = get(&s, B, "/api/v1/schedules/nightly").await;
    assert_eq!(
        st,
        StatusCode::NOT_FOUND,
        "another tenant's schedule is unknown"
    );
    // Update: the whole definition.
    let (st, body) = put(&s, A, "/api/v1/schedules/nightly",
        json!({"workflowId": "linear", "cron": "30 3 * * *", "overlap": "queue", "missed": "run_all"})).await;
    assert_eq!(st, StatusCode::OK, "{body}");
    assert_eq!(
        (
            body["cron"].as_str(),
            body["timeZone"].as_str(),
            body["overlap"].as_str()
        ),
        (Some("30 3 * * *"), Some("UTC"), Some("queue"))
    );
    let (st, body) = put(
        &s,
        A,
        "/api/v1/schedules/nightly",
        json!({"workflowId": "linear", "cron": "bad"}),
    )
    .await;
    assert_eq!(
        (st, body["code"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_cron"))
    );
    // Pause and resume.
    let (st, body) = post(&s, A, "/api/v1/schedules/nightly/pause", json!({})).await;
    assert_eq!((st, body["paused"].as_bool()), (StatusCode::OK, Some(true)));
    assert!(
        body.get("nextFireAt").is_none(),
        "a paused schedule does not fire: {body}"
    );
    let (st, body) = post(&s, A, "/api/v1/schedules/nightly/resume", json!({})).await;
    assert_eq!(
        (st, body["paused"].as_bool()),
        (StatusCode::OK, Some(false))
    );
    assert!(body["nextFireAt"].is_string());
    let (st, body) = delete(&s, B, "/api/v1/schedules/nightly").await;
    assert_eq!(
        (st, body["code"].as_str()),
        (StatusCode::NOT_FOUND, Some("unknown_schedule"))
    );
    let (st, _) = delete(&s, A, "/api/v1/schedules/nightly").await;
    assert_eq!(st, StatusCode::NO_CONTENT);
    let (st, _) = get(&s, A, "/api/v1/schedules/nightly").await;
    assert_eq!(st, StatusCode::NOT_FOUND);
}

pub async fn schedules_fire_ticks_and_run_now(s: Server) {
    push_ok(&s, A, "linear").await;
    let (st, body) = post(&s, A, "/api/v1/schedules",
        json!({"id": "often", "workflowId": "linear", "cron": "* * * * * *", "context": {"topic": "cron"}})).await;
    assert_eq!(st, StatusCode::CREATED, "{body}");
    let firings = firings_until(&s, A, "often", |f| count(f, "started") >= 3).await;
    // Each started firing is an execution of the tenant, with the schedule's context.
    for f in firings.iter().filter(|f| f["state"] == "started") {
        let run = f["executionId"].as_str().expect("executionId");
        let (st, status) = get(&s, A, &format!("/api/v1/executions/{run}")).await;
        assert_eq!(st, StatusCode::OK, "{status}");
        assert_eq!(status["workflowId"], "linear");
    }
    let run = firings
        .iter()
        .find(|f| f["state"] == "started")
        .expect("a started firing")["executionId"]
        .as_str()
        .expect("id")
        .to_string();
    for _ in 0..100 {
        let (_, r) = get(&s, A, &format!("/api/v1/executions/{run}/result")).await;
        if r["status"] == "completed" {
            assert_eq!(r["output"]["topic"], "cron");
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Ticks are distinct: one firing per tick.
    let mut ticks: Vec<&str> = firings.iter().filter_map(|f| f["tick"].as_str()).collect();
    let n = ticks.len();
    ticks.dedup();
    assert_eq!(ticks.len(), n);
    // Paused: no tick fires; run now still does.
    post(&s, A, "/api/v1/schedules/often/pause", json!({})).await;
    let (_, before) = get(&s, A, "/api/v1/schedules/often").await;
    let (st, fired) = post(&s, A, "/api/v1/schedules/often/run", json!({})).await;
    assert_eq!(st, StatusCode::ACCEPTED, "{fired}");
    assert!(
        fired["state"] == "started" || fired["state"] == "skipped",
        "{fired}"
    );
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    let (_, after) = get(&s, A, "/api/v1/schedules/often").await;
    let newest = |b: &Value| b["firings"][0]["tick"].as_str().map(str::to_string);
    assert_ne!(
        newest(&before),
        newest(&after),
        "the run now is the newest firing"
    );
    assert_eq!(
        after["firings"][0]["tick"], fired["tick"],
        "and no tick fired while paused"
    );
    let (st, _) = post(&s, B, "/api/v1/schedules/often/run", json!({})).await;
    assert_eq!(st, StatusCode::NOT_FOUND);
}

pub async fn schedule_overlap_policies(s: Server) {
    // `reviewed` pauses for a review: its run has not ended when the next tick comes.
    push_ok(&s, A, "reviewed").await;
    let def = |id: &str, overlap: &str| {
        json!({"id": id, "workflowId": "reviewed", "cron": "* * * * * *",
                                               "overlap": overlap, "context": {"topic": "x"}})
    };
    for (id, overlap) in [
        ("skip", "skip"),
        ("queue", "queue"),
        ("cancel", "cancel_previous"),
    ] {
        let (st, body) = post(&s, A, "/api/v1/schedules", def(id, overlap)).await;
        assert_eq!(st, StatusCode::CREATED, "{body}");
    }
    let skipped = firings_until(&s, A, "skip", |f| count(f, "skipped") >= 2).await;
    assert_eq!(
        count(&skipped, "started"),
        1,
        "one run at a time: {skipped:?}"
    );
    assert!(skipped.iter().any(|f| {
        f["detail"]
            .as_str()
            .is_some_and(|d| d.starts_with("overlap"))
    }));
    let queued = firings_until(&s, A, "queue", |f| count(f, "queued") >= 2).await;
    assert_eq!(count(&queued, "started"), 1, "{queued:?}");
    let cancelled = firings_until(&s, A, "cancel", |f| count(f, "started") >= 2).await;
    let oldest = cancelled
        .iter()
        .rev()
        .find(|f| f["state"] == "started")
        .expect("started");
    let run = oldest["executionId"].as_str().expect("id");
    for _ in 0..100 {
        let (_, st) = get(&s, A, &format!("/api/v1/executions/{run}")).await;
        if st["status"] == "cancelled" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let (_, st) = get(&s, A, &format!("/api/v1/executions/{run}")).await;
    assert_eq!(st["status"], "cancelled", "the previous run was cancelled");
    // The queued firing starts once the running one ends (rejected by its reviewer).
    let first = queued
        .iter()
        .find(|f| f["state"] == "started")
        .expect("started")["executionId"]
        .as_str()
        .expect("id")
        .to_string();
    let (_, status) = get(&s, A, &format!("/api/v1/executions/{first}")).await;
    let correlation = status["correlationId"]
        .as_str()
        .expect("waits for a review")
        .to_string();
    post(&s, A, "/api/v1/schedules/queue/pause", json!({})).await;
    let (st, body) = post(
        &s,
        A,
        &format!("/api/v1/executions/{first}/resume"),
        json!({"correlationId": correlation, "decision": "reject", "reason": "next"}),
    )
    .await;
    assert_eq!(st, StatusCode::ACCEPTED, "{body}");
    let after = firings_until(&s, A, "queue", |f| count(f, "started") >= 2).await;
    assert!(
        count(&after, "queued") >= 1,
        "the rest still wait: {after:?}"
    );
}
