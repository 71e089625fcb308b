//! The scenarios, each against a fresh server.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::harness::{Server, Sse, fixture, parse_sse, send, token};

mod access;
mod batch;
mod failures;
pub(crate) mod idempotency;
mod paging;
mod replay;
mod reviews;
pub(crate) mod schedules;
mod signals;
pub(crate) mod tenant_stream;
mod time_travel;
pub use access::*;
pub use batch::*;
pub use failures::*;
pub use idempotency::idempotent_starts;
pub use paging::*;
pub use replay::*;
pub use reviews::*;
pub use schedules::{schedule_overlap_policies, schedules_crud, schedules_fire_ticks_and_run_now};
pub use signals::*;
pub use tenant_stream::*;
pub use time_travel::*;

pub(crate) const A: &str = "tenant-a";
pub(crate) const B: &str = "tenant-b";

pub(crate) async fn get(s: &Server, tenant: &str, path: &str) -> (StatusCode, Value) {
    send(s, reqwest::Method::GET, tenant, path, None).await
}
pub(crate) async fn post(s: &Server, tenant: &str, path: &str, body: Value) -> (StatusCode, Value) {
    send(s, reqwest::Method::POST, tenant, path, Some(body)).await
}
pub(crate) async fn delete(s: &Server, tenant: &str, path: &str) -> (StatusCode, Value) {
    send(s, reqwest::Method::DELETE, tenant, path, None).await
}

/// The execution's events until it pauses or ends (the stream closes then).
pub(crate) async fn events(s: &Server, tenant: &str, id: &str, last: Option<&str>) -> Vec<Sse> {
    let mut req = s
        .http
        .get(s.url(&format!("/api/v1/executions/{id}/events")))
        .bearer_auth(token(tenant));
    if let Some(l) = last {
        req = req.header("Last-Event-ID", l);
    }
    let resp = req.send().await.expect("events");
    assert_eq!(resp.status(), StatusCode::OK);
    assert!(
        resp.headers()["content-type"]
            .to_str()
            .expect("ct")
            .starts_with("text/event-stream")
    );
    parse_sse(&resp.text().await.expect("stream"))
}

pub(crate) async fn start(s: &Server, tenant: &str, wf: &str) -> String {
    let (st, body) = post(
        s,
        tenant,
        "/api/v1/executions",
        json!({"workflowId": wf, "context": {"topic": "rust"}}),
    )
    .await;
    assert_eq!(st, StatusCode::ACCEPTED, "{body}");
    assert_eq!(body["workflowId"], wf);
    body["executionId"]
        .as_str()
        .expect("executionId")
        .to_string()
}

pub(crate) async fn push_ok(s: &Server, tenant: &str, name: &str) {
    let (st, body) = post(s, tenant, "/api/v1/workflows", fixture(name)).await;
    assert!(
        st == StatusCode::CREATED || st == StatusCode::OK,
        "{st} {body}"
    );
}

pub async fn workflow_crud(s: Server) {
    let (st, body) = post(&s, A, "/api/v1/workflows", fixture("linear")).await;
    assert_eq!(st, StatusCode::CREATED);
    assert_eq!(
        body,
        json!({"id": "linear", "version": "1.0.0", "created": true})
    );
    let (st, body) = post(&s, A, "/api/v1/workflows", fixture("linear")).await;
    assert_eq!(st, StatusCode::OK);
    assert_eq!(body["created"], false);
    push_ok(&s, A, "reviewed").await;
    let (st, list) = get(&s, A, "/api/v1/workflows").await;
    assert_eq!(st, StatusCode::OK);
    assert_eq!(
        list,
        json!([{"id": "linear", "version": "1.0.0"}, {"id": "reviewed", "version": "1.0.0"}])
    );
    let (st, pulled) = get(&s, A, "/api/v1/workflows/linear").await;
    assert_eq!(st, StatusCode::OK);
    assert_eq!(pulled, fixture("linear"));
    assert_eq!(
        delete(&s, A, "/api/v1/workflows/linear").await.0,
        StatusCode::NO_CONTENT
    );
    assert_eq!(
        delete(&s, A, "/api/v1/workflows/linear").await.0,
        StatusCode::NOT_FOUND
    );
    let (st, body) = get(&s, A, "/api/v1/workflows/linear").await;
    assert_eq!(
        (st, body),
        (
            StatusCode::NOT_FOUND,
            json!({"error": "Resource not found", "status": 404})
        )
    );
    // A soft-deleted workflow comes back on push.
    let (st, body) = post(&s, A, "/api/v1/workflows", fixture("linear")).await;
    assert_eq!(
        (st, body["created"].clone()),
        (StatusCode::CREATED, json!(true))
    );
    let (st, body) = get(&s, A, "/api/v1/workflows/bad%3B%20DROP").await;
    assert_eq!(st, StatusCode::BAD_REQUEST);
    assert!(
        body["error"]
            .as_str()
            .expect("error")
            .contains("valid identifier"),
        "{body}"
    );
}

pub async fn push_refuses_bad_input_and_writes_nothing(s: Server) {
    // Malformed JSON.
    let resp = s
        .http
        .post(s.url("/api/v1/workflows"))
        .bearer_auth(token(A))
        .header("content-type", "application/json")
        .body("{\"id\": ")
        .send()
        .await
        .expect("send");
    assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
    let body: Value = resp.json().await.expect("json");
    assert!(
        body["error"]
            .as_str()
            .expect("e")
            .starts_with("malformed JSON"),
        "{body}"
    );
    // No body at all / null.
    let resp = s
        .http
        .post(s.url("/api/v1/workflows"))
        .bearer_auth(token(A))
        .header("content-type", "application/json")
        .body("null")
        .send()
        .await
        .expect("send");
    assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
    // Not JSON.
    let resp = s
        .http
        .post(s.url("/api/v1/workflows"))
        .bearer_auth(token(A))
        .header("content-type", "text/plain")
        .body("x")
        .send()
        .await
        .expect("send");
    assert_eq!(resp.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
    // Every id / control-character violation at once.
    let mut wf = fixture("linear");
    wf["id"] = json!("bad id");
    wf["startNode"] = json!("-x");
    wf["nodes"]["draft"]["prompt"] = json!("bell\u{7}");
    let (st, body) = post(&s, A, "/api/v1/workflows", wf).await;
    assert_eq!(st, StatusCode::BAD_REQUEST);
    let e = body["error"].as_str().expect("error");
    assert!(e.contains("workflow: id: invalid identifier"), "{e}");
    assert!(e.contains("workflow: startNode: invalid identifier"), "{e}");
    assert!(e.contains("control characters"), "{e}");
    // hensu's checks: an unknown transition target, reported with all diagnostics as JSON.
    let mut wf = fixture("linear");
    wf["nodes"]["polish"]["transitionRules"][0]["targetNode"] = json!("nowhere");
    let (st, body) = post(&s, A, "/api/v1/workflows", wf).await;
    assert_eq!(st, StatusCode::BAD_REQUEST, "{body}");
    let diags = body["diagnostics"]["diagnostics"]
        .as_array()
        .expect("diagnostics");
    assert!(!diags.is_empty(), "{body}");
    assert!(diags.iter().all(|d| d["code"].is_string()));
    assert_eq!(body["diagnostics"]["valid"], false);
    // Too large.
    // Too large: 413 from the Content-Length alone; the server may close the connection
    // before the client has finished uploading, which the client sees as a write error.
    let big = json!({"id": "x", "blob": "a".repeat(hensu_server::MAX_BODY_BYTES + 1)});
    match s
        .http
        .post(s.url("/api/v1/workflows"))
        .bearer_auth(token(A))
        .json(&big)
        .send()
        .await
    {
        Ok(resp) => assert_eq!(resp.status(), StatusCode::PAYLOAD_TOO_LARGE),
        Err(e) => assert!(e.is_request() || e.is_body(), "{e}"),
    }
    // The same refusal from the headers alone (no body sent) is the API's JSON error too.
    let answer = raw_request(
        &s,
        &format!(
            "POST /api/v1/workflows HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            token(A),
            hensu_server::MAX_BODY_BYTES + 1
        ),
    )
    .await;
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    let body: Value = serde_json::from_str(answer.split("\r\n\r\n").nth(1).unwrap_or_default())
        .unwrap_or_else(|e| panic!("413 body is not JSON ({e}): {answer}"));
    assert_eq!(body["status"], 413, "{body}");
    // Nothing was written.
    assert_eq!(get(&s, A, "/api/v1/workflows").await.1, json!([]));
}

pub async fn sub_workflows_need_children_first(s: Server) {
    let (st, body) = post(&s, A, "/api/v1/workflows", fixture("parent")).await;
    assert_eq!(st, StatusCode::BAD_REQUEST);
    assert_eq!(
        body["error"],
        "Workflow 'parent' references unknown sub-workflows: linear"
    );
    push_ok(&s, A, "linear").await;
    push_ok(&s, A, "parent").await;
    // linear -> parent -> linear would be a cycle.
    let mut cyclic = fixture("linear");
    let child = fixture("parent")["nodes"]["child"].clone();
    cyclic["nodes"]["draft"] = {
        let mut c = child;
        c["id"] = json!("draft");
        c["workflowId"] = json!("parent");
        c
    };
    let (st, body) = post(&s, A, "/api/v1/workflows", cyclic).await;
    assert_eq!(st, StatusCode::BAD_REQUEST, "{body}");
    assert!(
        body["error"].as_str().expect("e").contains("cycle"),
        "{body}"
    );
    assert_eq!(
        get(&s, A, "/api/v1/workflows/linear").await.1,
        fixture("linear")
    );
    // A parent run reaches its child.
    let id = start(&s, A, "parent").await;
    let evs = events(&s, A, &id, None).await;
    assert_eq!(
        evs.last().expect("event").kind(),
        "execution.completed",
        "{evs:?}"
    );
}

pub async fn start_stream_result(s: Server) {
    push_ok(&s, A, "linear").await;
    let id = start(&s, A, "linear").await;
    let evs = events(&s, A, &id, None).await;
    let kinds: Vec<&str> = evs.iter().map(Sse::kind).collect();
    assert_eq!(kinds.first(), Some(&"execution.started"), "{kinds:?}");
    assert_eq!(kinds.last(), Some(&"execution.completed"), "{kinds:?}");
    assert!(kinds.contains(&"execution.step"));
    let ids: Vec<u64> = evs
        .iter()
        .map(|e| e.id.as_deref().expect("id").parse().expect("num"))
        .collect();
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "{ids:?}");
    let done = evs.last().expect("last");
    assert_eq!(done.data["success"], true);
    assert_eq!(done.data["finalNodeId"], "done");
    let (st, status) = get(&s, A, &format!("/api/v1/executions/{id}")).await;
    assert_eq!(st, StatusCode::OK);
    assert_eq!(status["status"], "completed");
    assert_eq!(status["currentNodeId"], "done");
    let (st, result) = get(&s, A, &format!("/api/v1/executions/{id}/result")).await;
    assert_eq!(st, StatusCode::OK);
    assert_eq!(result["status"], "completed");
    let out = result["output"].as_object().expect("output");
    assert_eq!(out["topic"], "rust");
    assert!(
        out.contains_key("draft") && out.contains_key("polish"),
        "{result}"
    );
    assert!(out.keys().all(|k| !k.starts_with('_')));
    let (_, list) = get(&s, A, "/api/v1/executions").await;
    assert_eq!(list[0]["executionId"], id.as_str());
    // Unknown workflow: 404, nothing started.
    let (st, _) = post(&s, A, "/api/v1/executions", json!({"workflowId": "nope"})).await;
    assert_eq!(st, StatusCode::NOT_FOUND);
    for bad in [
        json!({}),
        json!({"workflowId": ""}),
        json!({"workflowId": "a b"}),
    ] {
        let (st, body) = post(&s, A, "/api/v1/executions", bad).await;
        assert_eq!(st, StatusCode::BAD_REQUEST);
        assert!(
            body["error"].as_str().expect("e").contains("workflowId"),
            "{body}"
        );
    }
    assert_eq!(
        get(&s, A, "/api/v1/executions")
            .await
            .1
            .as_array()
            .expect("list")
            .len(),
        1
    );
}

/// A server run records each finished branch of a parallel node in the run log as it ends
/// (so a takeover resumes only the unfinished ones), like `hensuc run` does.
pub async fn parallel_branches_are_recorded(s: Server) {
    push_ok(&s, A, "parallel").await;
    let id = start(&s, A, "parallel").await;
    let evs = events(&s, A, &id, None).await;
    let done = evs.last().expect("last");
    assert_eq!(done.kind(), "execution.completed", "{evs:?}");
    assert_eq!(done.data["success"], true);
    let log = s.store().read_log(&id, 0, 1_000).await.expect("log");
    let branch_rows: Vec<String> = log
        .iter()
        .filter_map(|e| e.delta.as_ref())
        .map(|d| serde_json::to_string(d).expect("delta json"))
        .filter(|d| d.contains("/nested"))
        .collect();
    // Two branches: the first finished one creates the record, the second adds to it; the
    // next boundary removes it.
    assert!(branch_rows.len() >= 2, "{branch_rows:?}");
    assert!(
        branch_rows.iter().any(|d| d.contains("facts"))
            && branch_rows.iter().any(|d| d.contains("style")),
        "{branch_rows:?}"
    );
    let (_, result) = get(&s, A, &format!("/api/v1/executions/{id}/result")).await;
    assert_eq!(result["status"], "completed", "{result}");
}

/// A dependency DAG run by the server (docs/language.md, *Dependency DAGs*), through the same
/// engine as `hensuc run`: each settled branch (the skipped one too) is a row of the run log,
/// and the run completes.
pub async fn dag_branches_are_recorded_as_they_settle(s: Server) {
    push_ok(&s, A, "dag").await;
    let id = start(&s, A, "dag").await;
    let evs = events(&s, A, &id, None).await;
    let done = evs.last().expect("last");
    assert_eq!(done.kind(), "execution.completed", "{evs:?}");
    assert_eq!(done.data["success"], true);
    let log = s.store().read_log(&id, 0, 1_000).await.expect("log");
    let branch_rows: Vec<String> = log
        .iter()
        .filter_map(|e| e.delta.as_ref())
        .map(|d| serde_json::to_string(d).expect("delta json"))
        .filter(|d| d.contains("/nested"))
        .collect();
    for branch in ["\"web\"", "\"merge\"", "\"announce\""] {
        assert!(
            branch_rows.iter().any(|d| d.contains(branch)),
            "{branch}: {branch_rows:?}"
        );
    }
    // The stub's `publish` is no Boolean true: `announce` is skipped, not run.
    assert!(
        branch_rows.iter().any(|d| d.contains("SKIPPED")),
        "{branch_rows:?}"
    );
}

/// A map over a list run by the server (docs/language.md, *Map over a list*), through the same
/// engine as `hensuc run`: each settled item is a row of the run log (its position as id), the
/// run completes, and the gathered list has one answer per item, in order.
pub async fn map_items_are_recorded_and_gathered_in_order(s: Server) {
    push_ok(&s, A, "map").await;
    let (st, body) = post(
        &s,
        A,
        "/api/v1/executions",
        json!({"workflowId": "map", "context": {"papers": ["p0", "p1", "p2"]}}),
    )
    .await;
    assert_eq!(st, StatusCode::ACCEPTED, "{body}");
    let id = body["executionId"]
        .as_str()
        .expect("executionId")
        .to_string();
    let evs = events(&s, A, &id, None).await;
    let done = evs.last().expect("last");
    assert_eq!(done.kind(), "execution.completed", "{evs:?}");
    assert_eq!(done.data["success"], true);
    // The stream shows each settled item as a step of the map node (its run-log row).
    let item_steps = evs
        .iter()
        .filter(|e| e.kind() == "execution.step" && e.data["nodeId"] == "summarize")
        .count();
    assert_eq!(
        item_steps, 4,
        "the boundary before the node and one per item: {evs:?}"
    );
    let log = s.store().read_log(&id, 0, 1_000).await.expect("log");
    let item_rows: Vec<String> = log
        .iter()
        .filter_map(|e| e.delta.as_ref())
        .map(|d| serde_json::to_string(d).expect("delta json"))
        .filter(|d| d.contains("/nested"))
        .collect();
    for item in ["\"id\":\"0\"", "\"id\":\"1\"", "\"id\":\"2\""] {
        assert!(
            item_rows.iter().any(|d| d.contains(item)),
            "{item}: {item_rows:?}"
        );
    }
    let (st, result) = get(&s, A, &format!("/api/v1/executions/{id}/result")).await;
    assert_eq!(st, StatusCode::OK, "{result}");
    let summaries = result["output"]["summaries"]
        .as_array()
        .unwrap_or_else(|| panic!("{result}"));
    assert_eq!(summaries.len(), 3, "{result}");
}

pub async fn sse_replays_after_last_event_id(s: Server) {
    push_ok(&s, A, "linear").await;
    let id = start(&s, A, "linear").await;
    let all = events(&s, A, &id, None).await;
    assert!(all.len() >= 3, "{all:?}");
    let cut = all[1].id.clone().expect("id");
    let rest = events(&s, A, &id, Some(&cut)).await;
    let expect: Vec<Option<String>> = all[2..].iter().map(|e| e.id.clone()).collect();
    assert_eq!(
        rest.iter().map(|e| e.id.clone()).collect::<Vec<_>>(),
        expect
    );
    assert_eq!(rest.last().expect("last").kind(), "execution.completed");
    let resp = s
        .http
        .get(s.url(&format!("/api/v1/executions/{id}/events")))
        .bearer_auth(token(A))
        .header("Last-Event-ID", "garbage")
        .send()
        .await
        .expect("send");
    assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
}

pub async fn review_pause_and_resume(s: Server) {
    push_ok(&s, A, "reviewed").await;
    let id = start(&s, A, "reviewed").await;
    let evs = events(&s, A, &id, None).await;
    let paused = evs.last().expect("event");
    assert_eq!(paused.kind(), "execution.paused", "{evs:?}");
    let corr = paused.data["correlationId"]
        .as_str()
        .expect("correlation")
        .to_string();
    assert_eq!(paused.data["nodeId"], "draft");
    // Announced just before the pause, without an id of its own (docs/server.md, *Pending reviews*).
    let asked = &evs[evs.len() - 2];
    assert_eq!(asked.kind(), "execution.review_requested", "{evs:?}");
    assert_eq!(asked.id, None, "an announcement carries no id of its own");
    assert_eq!(asked.data["correlationId"], corr.as_str());
    assert_eq!(asked.data["kind"], "node");
    let (_, status) = get(&s, A, &format!("/api/v1/executions/{id}")).await;
    assert_eq!(status["status"], "paused");
    assert_eq!(status["correlationId"], corr.as_str());
    let (_, list) = get(&s, A, "/api/v1/executions/paused").await;
    assert_eq!(list[0]["executionId"], id.as_str());
    assert_eq!(list[0]["correlationId"], corr.as_str());
    let resume = format!("/api/v1/executions/{id}/resume");
    // A plain resume of a review pause is refused and changes nothing.
    let (st, body) = post(&s, A, &resume, json!({})).await;
    assert_eq!(st, StatusCode::BAD_REQUEST);
    assert!(
        body["error"]
            .as_str()
            .expect("e")
            .contains("awaiting a review decision"),
        "{body}"
    );
    let (st, body) = post(
        &s,
        A,
        &resume,
        json!({"decision": "approve", "correlationId": "wrong"}),
    )
    .await;
    assert_eq!(st, StatusCode::BAD_REQUEST);
    assert!(
        body["error"]
            .as_str()
            .expect("e")
            .contains("Correlation id mismatch"),
        "{body}"
    );
    assert_eq!(
        get(&s, A, &format!("/api/v1/executions/{id}")).await.1["status"],
        "paused"
    );
    // Approve: 202 at once, the run ends in the background.
    let (st, body) = post(
        &s,
        A,
        &resume,
        json!({"decision": "approve", "correlationId": corr}),
    )
    .await;
    assert_eq!(st, StatusCode::ACCEPTED, "{body}");
    assert_eq!(body["status"], "resumed");
    let last = paused.id.clone();
    let after = events(&s, A, &id, last.as_deref()).await;
    let done = after.last().expect("event");
    assert_eq!(done.kind(), "execution.completed", "{after:?}");
    assert_eq!(done.data["finalNodeId"], "done");
    // A second approve after completion.
    let (st, body) = post(
        &s,
        A,
        &resume,
        json!({"decision": "approve", "correlationId": corr}),
    )
    .await;
    assert_eq!(st, StatusCode::BAD_REQUEST);
    assert!(
        body["error"]
            .as_str()
            .expect("e")
            .contains("not awaiting review"),
        "{body}"
    );
    // Reject routes through onRejection.
    let id2 = start(&s, A, "reviewed").await;
    let evs = events(&s, A, &id2, None).await;
    let corr2 = evs.last().expect("paused").data["correlationId"]
        .as_str()
        .expect("c")
        .to_string();
    let (st, _) = post(
        &s,
        A,
        &format!("/api/v1/executions/{id2}/resume"),
        json!({"decision": "reject", "correlationId": corr2, "reason": "no"}),
    )
    .await;
    assert_eq!(st, StatusCode::ACCEPTED);
    let evs = events(&s, A, &id2, evs.last().and_then(|e| e.id.as_deref())).await;
    let end = evs.last().expect("end");
    assert_eq!(end.data["finalNodeId"], "rejected", "{evs:?}");
    assert_eq!(end.data["success"], false);
}

pub async fn resume_body_rules(s: Server) {
    let p = "/api/v1/executions/unknown-id/resume";
    let (st, body) = post(&s, A, p, json!({"approved": true, "modifications": {}})).await;
    assert_eq!(st, StatusCode::BAD_REQUEST);
    let e = body["error"].as_str().expect("e");
    assert!(e.contains("approved") && e.contains("modifications"), "{e}");
    let (st, body) = post(&s, A, p, json!({"approved": null})).await;
    assert_eq!(st, StatusCode::BAD_REQUEST);
    assert!(body["error"].as_str().expect("e").contains("approved"));
    let (st, body) = post(&s, A, p, json!({"decision": "approve"})).await;
    assert_eq!(st, StatusCode::BAD_REQUEST);
    assert!(body["error"].as_str().expect("e").contains("correlationId"));
    let (st, body) = post(&s, A, p, json!({"decision": "maybe", "correlationId": "c"})).await;
    assert_eq!(st, StatusCode::BAD_REQUEST);
    assert!(
        body["error"]
            .as_str()
            .expect("e")
            .contains("Invalid decision")
    );
    let (st, body) = post(
        &s,
        A,
        p,
        json!({"decision": "backtrack", "correlationId": "c"}),
    )
    .await;
    assert_eq!(st, StatusCode::BAD_REQUEST);
    assert!(body["error"].as_str().expect("e").contains("targetStep"));
    // The path check comes first.
    let (st, body) = post(
        &s,
        A,
        "/api/v1/executions/%3Cscript%3E/resume",
        json!({"approved": 1}),
    )
    .await;
    assert_eq!(st, StatusCode::BAD_REQUEST);
    assert!(
        body["error"]
            .as_str()
            .expect("e")
            .contains("valid identifier")
    );
    // A valid body on an unknown execution.
    assert_eq!(post(&s, A, p, json!({})).await.0, StatusCode::NOT_FOUND);
    let resp = s
        .http
        .post(s.url(p))
        .bearer_auth(token(A))
        .body("{oops")
        .send()
        .await
        .expect("send");
    assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
}

pub async fn cancel_paused_execution(s: Server) {
    push_ok(&s, A, "reviewed").await;
    let id = start(&s, A, "reviewed").await;
    let evs = events(&s, A, &id, None).await;
    assert_eq!(evs.last().expect("e").kind(), "execution.paused");
    let (st, body) = post(&s, A, &format!("/api/v1/executions/{id}/cancel"), json!({})).await;
    assert_eq!(st, StatusCode::OK, "{body}");
    assert_eq!(body["status"], "cancelled");
    assert_eq!(
        get(&s, A, &format!("/api/v1/executions/{id}")).await.1["status"],
        "cancelled"
    );
    let (st, _) = post(&s, A, &format!("/api/v1/executions/{id}/cancel"), json!({})).await;
    assert_eq!(st, StatusCode::CONFLICT);
    let evs = events(&s, A, &id, evs.last().and_then(|e| e.id.as_deref())).await;
    assert_eq!(
        evs.last().expect("e").kind(),
        "execution.cancelled",
        "{evs:?}"
    );
    let (st, _) = post(&s, A, &format!("/api/v1/executions/{id}/resume"), json!({})).await;
    assert_eq!(st, StatusCode::CONFLICT);
}

pub async fn tenant_stream_emits(s: Server) {
    push_ok(&s, A, "linear").await;
    push_ok(&s, B, "linear").await;
    let resp = s
        .http
        .get(s.url("/api/v1/executions/events"))
        .bearer_auth(token(A))
        .send()
        .await
        .expect("send");
    assert_eq!(resp.status(), StatusCode::OK);
    // The subscription exists once the headers are back; B's run must not show up.
    let b_run = start(&s, B, "linear").await;
    let _ = events(&s, B, &b_run, None).await;
    let id = start(&s, A, "linear").await;
    let mut body = resp;
    let mut text = String::new();
    while !text.contains("execution.completed") {
        let chunk = body.chunk().await.expect("chunk").expect("stream open");
        text.push_str(&String::from_utf8_lossy(&chunk));
    }
    let evs = parse_sse(&text);
    assert!(
        evs.iter().all(|e| e.data["executionId"] == id.as_str()),
        "{evs:?}"
    );
    // Ids are the global sequence: numbers, increasing.
    let ids: Vec<u64> = evs
        .iter()
        .map(|e| e.id.as_deref().and_then(|i| i.parse().ok()).expect("a seq"))
        .collect();
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "{ids:?}");
    assert_eq!(evs.last().expect("e").kind(), "execution.completed");
}

/// The tenant stream of one server shows a run executing on another server that shares the
/// store (no local wake-up: the stream finds it in the shared run log).
pub async fn tenant_stream_follows_other_servers(s: Server) {
    push_ok(&s, A, "linear").await;
    let other = s.sibling().await;
    let resp = s
        .http
        .get(s.url("/api/v1/executions/events"))
        .bearer_auth(token(A))
        .send()
        .await
        .expect("send");
    assert_eq!(resp.status(), StatusCode::OK);
    let id = start(&other, A, "linear").await;
    let mut body = resp;
    let mut text = String::new();
    while !text.contains("execution.completed") {
        let chunk = body.chunk().await.expect("chunk").expect("stream open");
        text.push_str(&String::from_utf8_lossy(&chunk));
    }
    let evs = parse_sse(&text);
    let kinds: Vec<&str> = evs.iter().map(Sse::kind).collect();
    assert_eq!(kinds.first(), Some(&"execution.started"), "{kinds:?}");
    assert_eq!(kinds.last(), Some(&"execution.completed"), "{kinds:?}");
    assert!(
        evs.iter().all(|e| e.data["executionId"] == id.as_str()),
        "{evs:?}"
    );
}

/// Sends `request` as raw bytes and reads the whole answer (the request asks to close).
pub(crate) async fn raw_request(s: &Server, request: &str) -> String {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let addr = s.base.trim_start_matches("http://");
    let mut socket = tokio::net::TcpStream::connect(addr).await.expect("connect");
    socket.write_all(request.as_bytes()).await.expect("write");
    let mut answer = Vec::new();
    let _ = socket.read_to_end(&mut answer).await;
    String::from_utf8_lossy(&answer).into_owned()
}
