//! `POST /api/v1/executions/{id}/replay` (docs/server.md, *Replay*): an execution replayed
//! from its recorded outputs is identical to its recording — a linear one, one with parallel
//! branches, one paused at a review and rejected by a resume —, against another workflow it
//! diverges at its first step, another tenant's execution is 404, and nothing is written.

use reqwest::StatusCode;
use serde_json::json;

use super::{A, B, events, get, post, push_ok, start};
use crate::harness::{Server, Sse};

pub async fn replay_compares_with_the_recording(s: Server) {
    push_ok(&s, A, "linear").await;
    push_ok(&s, A, "parallel").await;
    push_ok(&s, A, "reviewed").await;
    let id = start(&s, A, "linear").await;
    let evs = events(&s, A, &id, None).await;
    assert_eq!(evs.last().map(Sse::kind), Some("execution.completed"));
    let path = format!("/api/v1/executions/{id}/replay");
    let (st, report) = post(&s, A, &path, json!({})).await;
    assert_eq!(st, StatusCode::OK, "{report}");
    assert_eq!(report["identical"], true, "{report}");
    assert_eq!(report["executionId"], id.as_str());
    assert_eq!(report["steps"], 2);
    assert_eq!(report["recordedAnswers"], 2);
    assert_eq!(report["recordedStatus"], "completed");
    assert_eq!(report["replayedStatus"], "completed");
    assert!(report["divergence"].is_null(), "{report}");
    // Up to a step: the replay stops there and agrees; a step the execution lacks is 400.
    let until = report["toStep"].as_u64().expect("step") - 1;
    let (st, part) = post(&s, A, &path, json!({"until": until})).await;
    assert_eq!(st, StatusCode::OK, "{part}");
    assert_eq!(part["identical"], true, "{part}");
    let (st, _) = post(&s, A, &path, json!({"until": 999})).await;
    assert_eq!(st, StatusCode::BAD_REQUEST);
    // Another tenant's execution, an unknown one, bad bodies.
    let (st, _) = post(&s, B, &path, json!({})).await;
    assert_eq!(st, StatusCode::NOT_FOUND, "another tenant's execution");
    let (st, _) = post(&s, A, "/api/v1/executions/nope/replay", json!({})).await;
    assert_eq!(st, StatusCode::NOT_FOUND);
    let (st, _) = post(&s, A, &path, json!({"until": "x"})).await;
    assert_eq!(st, StatusCode::BAD_REQUEST);
    let (st, _) = post(&s, A, &path, json!({"workflowId": "missing"})).await;
    assert_eq!(st, StatusCode::NOT_FOUND);
    // Against another workflow of the tenant: the first step already differs.
    let (st, other) = post(&s, A, &path, json!({"workflowId": "reviewed"})).await;
    assert_eq!(st, StatusCode::OK, "{other}");
    assert_eq!(other["identical"], false, "{other}");
    assert_eq!(other["workflowId"], "reviewed");
    let d = &other["divergence"];
    assert!(
        d["code"] == "E0916" || d["code"] == "E0917",
        "a coded divergence: {other}"
    );
    assert!(
        d["message"].as_str().is_some_and(|m| !m.is_empty()),
        "{other}"
    );

    // Parallel branches are answered from their recorded outcomes.
    let par = start(&s, A, "parallel").await;
    let evs = events(&s, A, &par, None).await;
    assert_eq!(evs.last().map(Sse::kind), Some("execution.completed"));
    let (st, report) = post(
        &s,
        A,
        &format!("/api/v1/executions/{par}/replay"),
        json!({}),
    )
    .await;
    assert_eq!(st, StatusCode::OK, "{report}");
    assert_eq!(report["identical"], true, "{report}");
    assert_eq!(report["recordedAnswers"], 2, "{report}");

    // A review paused, then rejected by a resume: the replay decides it as recorded.
    let rev = start(&s, A, "reviewed").await;
    let evs = events(&s, A, &rev, None).await;
    let paused = evs.last().expect("event");
    assert_eq!(paused.kind(), "execution.paused");
    let rev_path = format!("/api/v1/executions/{rev}/replay");
    let (st, report) = post(&s, A, &rev_path, json!({})).await;
    assert_eq!(st, StatusCode::OK, "{report}");
    assert_eq!(
        report["identical"], true,
        "a paused execution replays to its pause: {report}"
    );
    assert_eq!(report["replayedStatus"], "paused");
    let corr = paused.data["correlationId"]
        .as_str()
        .expect("corr")
        .to_string();
    let (st, body) = post(
        &s,
        A,
        &format!("/api/v1/executions/{rev}/resume"),
        json!({"decision": "reject", "correlationId": corr, "reason": "no"}),
    )
    .await;
    assert_eq!(st, StatusCode::ACCEPTED, "{body}");
    let after = events(&s, A, &rev, paused.id.as_deref()).await;
    assert!(after.last().is_some());
    let (st, report) = post(&s, A, &rev_path, json!({})).await;
    assert_eq!(st, StatusCode::OK, "{report}");
    assert_eq!(report["identical"], true, "{report}");

    // Nothing was written: the tenant still has its three executions, their logs unchanged.
    let (_, list) = get(&s, A, "/api/v1/executions").await;
    assert_eq!(list.as_array().map_or(0, Vec::len), 3, "{list}");
    let log = s.store().read_log(&id, 0, 1_000).await.expect("log");
    let record = s.store().record(&id).await.expect("record");
    assert_eq!(log.last().map(|e| e.meta.step), Some(record.step));
}
