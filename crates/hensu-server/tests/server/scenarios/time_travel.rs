//! `POST /api/v1/executions/{id}/fork` (docs/server.md, *Time travel*).

use reqwest::StatusCode;
use serde_json::json;

use super::{A, B, events, get, post, push_ok, start};
use crate::harness::{Server, Sse};

/// The log step of `id` at which `node` is the next to run.
async fn step_before(s: &Server, id: &str, node: &str) -> u64 {
    let log = s.store().read_log(id, 0, 1_000).await.expect("log");
    log.iter()
        .find(|e| e.meta.kind == hensu_store::LogKind::Step && e.meta.node.as_deref() == Some(node))
        .map(|e| e.meta.step)
        .unwrap_or_else(|| panic!("no step before `{node}`"))
}

pub async fn fork_continues_from_a_step(s: Server) {
    push_ok(&s, A, "linear").await;
    push_ok(&s, A, "reviewed").await;
    let id = start(&s, A, "linear").await;
    let evs = events(&s, A, &id, None).await;
    assert_eq!(evs.last().map(Sse::kind), Some("execution.completed"));
    let at = step_before(&s, &id, "polish").await;
    let listed = |v: serde_json::Value| v.as_array().map_or(0, Vec::len);
    // Refusals write nothing: another tenant's execution, a step it does not have, a
    // workflow without the node, a body without a step.
    let path = format!("/api/v1/executions/{id}/fork");
    let (st, _) = post(&s, B, &path, json!({"step": at})).await;
    assert_eq!(st, StatusCode::NOT_FOUND, "another tenant's execution");
    let (st, body) = post(&s, A, &path, json!({"step": 999})).await;
    assert_eq!(st, StatusCode::BAD_REQUEST, "{body}");
    let (st, body) = post(&s, A, &path, json!({"step": at, "workflowId": "reviewed"})).await;
    assert_eq!(st, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(body["code"], "fork_refused", "{body}");
    assert!(body.to_string().contains("E0908"), "{body}");
    let (st, _) = post(&s, A, &path, json!({"contextEdits": {}})).await;
    assert_eq!(st, StatusCode::BAD_REQUEST);
    let (st, _) = post(&s, A, "/api/v1/executions/nope/fork", json!({"step": 1})).await;
    assert_eq!(st, StatusCode::NOT_FOUND);
    assert_eq!(listed(get(&s, A, "/api/v1/executions").await.1), 1);
    // The fork: the same history up to the step, then only `polish` runs, with the edit.
    let (st, forked) = post(
        &s,
        A,
        &path,
        json!({"step": at, "contextEdits": {"topic": "go"}}),
    )
    .await;
    assert_eq!(st, StatusCode::ACCEPTED, "{forked}");
    assert_eq!(forked["parentExecutionId"], id.as_str());
    assert_eq!(forked["parentStep"], at);
    assert_eq!(forked["nodeId"], "polish");
    let new_id = forked["executionId"].as_str().expect("id").to_string();
    let evs = events(&s, A, &new_id, None).await;
    let kinds: Vec<&str> = evs.iter().map(Sse::kind).collect();
    assert_eq!(kinds.last(), Some(&"execution.completed"), "{kinds:?}");
    let fork_event = evs
        .iter()
        .find(|e| e.kind() == "execution.forked")
        .expect("an execution.forked event");
    assert_eq!(fork_event.data["parentExecutionId"], id.as_str());
    assert_eq!(fork_event.data["parentStep"], at);
    assert_eq!(fork_event.data["nodeId"], "polish");
    let record = s.store().record(&new_id).await.expect("record");
    let parent = record.parent.expect("the fork names its parent");
    assert_eq!((parent.run_id.as_str(), parent.step), (id.as_str(), at));
    let log = s.store().read_log(&new_id, at, 1_000).await.expect("log");
    let ran: Vec<&str> = log
        .iter()
        .filter_map(|e| e.meta.executed_node.as_deref())
        .collect();
    assert_eq!(ran, ["polish"], "only the nodes after the step run");
    let (_, result) = get(&s, A, &format!("/api/v1/executions/{new_id}/result")).await;
    assert_eq!(result["status"], "completed", "{result}");
    assert_eq!(result["output"]["topic"], "go");
    // The parent is untouched; the fork is the tenant's own.
    let (_, parent) = get(&s, A, &format!("/api/v1/executions/{id}/result")).await;
    assert_eq!(parent["output"]["topic"], "rust");
    let (st, _) = get(&s, B, &format!("/api/v1/executions/{new_id}")).await;
    assert_eq!(st, StatusCode::NOT_FOUND);
    assert_eq!(listed(get(&s, A, "/api/v1/executions").await.1), 2);
    // Redrive needs a failed execution of the tenant's own.
    let redrive = format!("/api/v1/executions/{new_id}/redrive");
    let (st, body) = post(&s, A, &redrive, json!({})).await;
    assert_eq!(st, StatusCode::CONFLICT, "{body}");
    let (st, _) = post(&s, B, &redrive, json!({})).await;
    assert_eq!(st, StatusCode::NOT_FOUND);
    assert_eq!(listed(get(&s, A, "/api/v1/executions").await.1), 2);
}

/// A failed execution is redriven from the step before its failure: the failed node runs
/// again (and fails again here: the server refuses local commands), nothing before it.
pub async fn redrive_forks_a_failed_execution(s: Server) {
    push_ok(&s, A, "strict").await;
    let (st, body) = post(
        &s,
        A,
        "/api/v1/executions",
        json!({"workflowId": "strict", "context": {"topic": "t", "count": 2}}),
    )
    .await;
    assert_eq!(st, StatusCode::ACCEPTED, "{body}");
    let id = body["executionId"].as_str().expect("id").to_string();
    let evs = events(&s, A, &id, None).await;
    assert_eq!(evs.last().map(Sse::kind), Some("execution.error"));
    let at = step_before(&s, &id, "deploy").await;
    let path = format!("/api/v1/executions/{id}/redrive");
    let (st, _) = post(&s, B, &path, json!({})).await;
    assert_eq!(st, StatusCode::NOT_FOUND, "another tenant's execution");
    let (st, forked) = post(&s, A, &path, json!({})).await;
    assert_eq!(st, StatusCode::ACCEPTED, "{forked}");
    assert_eq!(forked["parentExecutionId"], id.as_str());
    assert_eq!(forked["nodeId"], "deploy");
    assert!(forked["parentStep"].as_u64().expect("step") >= at);
    let new_id = forked["executionId"].as_str().expect("id").to_string();
    let evs = events(&s, A, &new_id, None).await;
    let kinds: Vec<&str> = evs.iter().map(Sse::kind).collect();
    assert!(kinds.contains(&"execution.forked"), "{kinds:?}");
    assert_eq!(kinds.last(), Some(&"execution.error"), "{kinds:?}");
    let log = s.store().read_log(&new_id, at, 1_000).await.expect("log");
    let ran: Vec<&str> = log
        .iter()
        .filter_map(|e| e.meta.executed_node.as_deref())
        .collect();
    assert!(ran.iter().all(|n| *n == "deploy"), "{ran:?}");
}

/// `GET …/{id}/diff/{other}`: a fork compared with its parent, step by step, as the document
/// `hensuc runs diff --json` prints (it validates against docs/schemas/runs-diff.schema.json);
/// both executions must be the tenant's.
pub async fn diff_compares_two_executions(s: Server) {
    push_ok(&s, A, "linear").await;
    let id = start(&s, A, "linear").await;
    let evs = events(&s, A, &id, None).await;
    assert_eq!(evs.last().map(Sse::kind), Some("execution.completed"));
    let at = step_before(&s, &id, "polish").await;
    let (st, forked) = post(
        &s,
        A,
        &format!("/api/v1/executions/{id}/fork"),
        json!({"step": at, "contextEdits": {"topic": "go"}}),
    )
    .await;
    assert_eq!(st, StatusCode::ACCEPTED, "{forked}");
    let fork = forked["executionId"].as_str().expect("id").to_string();
    let evs = events(&s, A, &fork, None).await;
    assert_eq!(evs.last().map(Sse::kind), Some("execution.completed"));

    let (st, d) = get(&s, A, &format!("/api/v1/executions/{fork}/diff/{id}")).await;
    assert_eq!(st, StatusCode::OK, "{d}");
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../docs/schemas/runs-diff.schema.json"
        ))
        .expect("schema"),
    )
    .expect("schema json");
    let validator = jsonschema::validator_for(&schema).expect("a valid schema");
    let errors: Vec<String> = validator.iter_errors(&d).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:?}\n{d:#}");
    assert_eq!(d["format_version"], 1);
    assert_eq!(d["a"]["run_id"], fork.as_str());
    assert_eq!(d["b"]["run_id"], id.as_str());
    assert_eq!(d["a"]["path"], d["b"]["path"]);
    // The fork shares the parent's first step (its prefix), then ran `polish` on the edit.
    assert_eq!(
        d["steps"][0]["differs_in"],
        serde_json::Value::Null,
        "{d:#}"
    );
    assert_eq!(d["steps"][0]["a"], d["steps"][0]["b"]);
    assert_eq!(d["same"], false);
    let context = d["context"].as_array().expect("context");
    assert!(
        context
            .iter()
            .any(|c| c["key"] == "topic" && c["a"] == "go" && c["b"] == "rust"),
        "{d:#}"
    );
    // A run compared with itself is the same.
    let (st, d) = get(&s, A, &format!("/api/v1/executions/{id}/diff/{id}")).await;
    assert_eq!(st, StatusCode::OK);
    assert_eq!(d["same"], true, "{d:#}");
    assert_eq!(d["first_difference"], serde_json::Value::Null);
    // Either side unknown or another tenant's: 404; a malformed id: 400.
    for (tenant, path) in [
        (B, format!("/api/v1/executions/{fork}/diff/{id}")),
        (A, format!("/api/v1/executions/{id}/diff/nope")),
        (A, format!("/api/v1/executions/nope/diff/{id}")),
    ] {
        let (st, body) = get(&s, tenant, &path).await;
        assert_eq!(st, StatusCode::NOT_FOUND, "{path}: {body}");
    }
    push_ok(&s, B, "linear").await;
    let theirs = start(&s, B, "linear").await;
    let (st, _) = get(&s, A, &format!("/api/v1/executions/{id}/diff/{theirs}")).await;
    assert_eq!(st, StatusCode::NOT_FOUND, "another tenant's run as B");
    let (st, _) = get(&s, B, &format!("/api/v1/executions/{theirs}/diff/{id}")).await;
    assert_eq!(st, StatusCode::NOT_FOUND, "another tenant's run as A");
    let (st, _) = get(&s, A, &format!("/api/v1/executions/{id}/diff/a%20b")).await;
    assert_eq!(st, StatusCode::BAD_REQUEST);
}
