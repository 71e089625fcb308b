//! Schedules against a server's project (docs/schedules.md): the budget check of `[budget]
//! per_day` with `[pricing]`, and the missed-run policies after the servers were down for 10 s
//! (a second server on the same store takes the schedules up); the server's periodic purge
//! under `[retention]` (docs/retention.md).

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::json;

use crate::harness::{Backend, Server};
use crate::scenarios::schedules::{count, firings_until};
use crate::scenarios::{A, get, post, push_ok};

const PRICED: &str = r#"
[budget]
per_day = 20.0

[pricing."gpt-4o"]
input_per_mtok = 2.5
output_per_mtok = 10
"#;

/// `priced` costs at most 0.04 a run (two calls of 4,000 input and 1,000 output tokens), so
/// 20.00 a day allows 500 runs: every minute (1,440) is refused, every five minutes (288) is
/// not.
pub async fn a_schedule_over_the_budget_is_refused(backend: Backend) {
    let s = Server::in_project(backend, Some(PRICED), true).await;
    push_ok(&s, A, "priced").await;
    let (st, body) = post(
        &s,
        A,
        "/api/v1/schedules",
        json!({"id": "greedy", "workflowId": "priced", "cron": "* * * * *"}),
    )
    .await;
    assert_eq!(st, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(body["code"], "over_budget");
    let d = &body["diagnostics"]["diagnostics"][0];
    assert_eq!(d["code"], "E0515", "{body}");
    assert!(
        d["message"].as_str().is_some_and(|m| m.contains("57.60")),
        "{d}"
    );
    let (st, _) = get(&s, A, "/api/v1/schedules/greedy").await;
    assert_eq!(st, StatusCode::NOT_FOUND, "nothing was stored");
    let (st, body) = post(
        &s,
        A,
        "/api/v1/schedules",
        json!({"id": "modest", "workflowId": "priced", "cron": "*/5 * * * *"}),
    )
    .await;
    assert_eq!(st, StatusCode::CREATED, "{body}");
    // A firing checks again, with the workflow the tenant has then: pushed again with ten
    // times the tokens, the schedule would overspend; its firing is refused.
    let mut pricier = crate::harness::fixture("priced");
    pricier["agents"]["writer"]["maxTokens"] = json!(10_000);
    let (st, body) = post(&s, A, "/api/v1/workflows", pricier).await;
    assert_eq!(st, StatusCode::OK, "{body}");
    let (st, fired) = post(&s, A, "/api/v1/schedules/modest/run", json!({})).await;
    assert_eq!(st, StatusCode::ACCEPTED, "{fired}");
    assert_eq!(fired["state"], "failed", "{fired}");
    assert!(
        fired["detail"]
            .as_str()
            .is_some_and(|d| d.starts_with("E0515")),
        "{fired}"
    );
    assert!(fired.get("executionId").is_none());
    // An update is checked as a creation.
    let (st, body) = crate::scenarios::schedules::put(
        &s,
        A,
        "/api/v1/schedules/modest",
        json!({"workflowId": "priced", "cron": "*/2 * * * *"}),
    )
    .await;
    assert_eq!(
        (st, body["code"].as_str()),
        (StatusCode::UNPROCESSABLE_ENTITY, Some("over_budget"))
    );
}

/// Three schedules every 2 s, one per missed-run policy; the server stops; 10 s later another
/// takes them up. The ticks in between: `skip` runs none of them but an on-time latest one,
/// `run_once` one, `run_all` each.
pub async fn missed_ticks_after_a_downtime_follow_the_policy(backend: Backend) {
    let first = Server::start(backend).await;
    push_ok(&first, A, "linear").await;
    for (id, missed) in [("skip", "skip"), ("once", "run_once"), ("all", "run_all")] {
        let (st, body) = post(
            &first,
            A,
            "/api/v1/schedules",
            json!({
            "id": id, "workflowId": "linear", "cron": "*/2 * * * * *", "missed": missed,
            "overlap": "queue", "graceSeconds": 1, "context": {"topic": "t"}}),
        )
        .await;
        assert_eq!(st, StatusCode::CREATED, "{body}");
    }
    for id in ["skip", "once", "all"] {
        firings_until(&first, A, id, |f| count(f, "started") >= 1).await;
    }
    let (store, registry) = (first.store().clone(), first.registry().clone());
    drop(first);
    // Let the stopped server's last pass finish, then take the tick it fired last.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let last = |id: &'static str| {
        let store = store.clone();
        async move { store.schedules().firings(A, id, 1).await.expect("firings")[0].tick }
    };
    let stopped = [last("skip").await, last("once").await, last("all").await];
    tokio::time::sleep(Duration::from_secs(10)).await;
    let restarted = hensu_store::now_ms();
    let second = Server::on_store(store.clone(), registry).await;
    let tick_of = |f: &serde_json::Value| {
        f["tick"]
            .as_str()
            .and_then(hensu_store::parse_rfc3339)
            .expect("tick")
    };
    // Ticks up to here are the catch-up's or before: the second server's first pass claimed
    // them at once (a tick past it is a regular one).
    let settled_past = restarted + 4_000;
    for (i, id) in ["skip", "once", "all"].into_iter().enumerate() {
        let firings = firings_until(&second, A, id, |f| {
            f.iter().any(|f| tick_of(f) > settled_past)
                && f.iter()
                    .filter(|f| tick_of(f) > stopped[i] && tick_of(f) <= settled_past)
                    .all(|f| f["state"] != "queued" && f["state"] != "claimed")
        })
        .await;
        // The ticks after the stop, oldest first; the catch-up's are its first ones.
        let mut after: Vec<serde_json::Value> = firings
            .iter()
            .filter(|f| tick_of(f) > stopped[i])
            .cloned()
            .collect();
        after.sort_by_key(|f| tick_of(f));
        let marked = |f: &serde_json::Value| {
            f["detail"]
                .as_str()
                .is_some_and(|d| d.starts_with("missed"))
        };
        let skipped = after.iter().take_while(|f| marked(f)).count();
        match id {
            // 10 s of a 2 s cron: at least four missed ticks recorded skipped; a latest one
            // within the 1 s grace may have run.
            "skip" => assert!(skipped >= 4, "{after:?}"),
            // All but the latest skipped, the latest run.
            "once" => {
                assert!(skipped >= 4, "{after:?}");
                assert_eq!(after[skipped]["state"], "started", "{after:?}");
            }
            // Each run (one after the other: overlap = queue).
            _ => {
                let during: Vec<_> = after.iter().filter(|f| tick_of(f) <= restarted).collect();
                assert!(during.len() >= 4, "{after:?}");
                assert_eq!(skipped, 0, "{after:?}");
                assert!(during.iter().all(|f| f["state"] == "started"), "{after:?}");
            }
        }
    }
}

/// A server purges its store under `[retention]` beside its work: an execution that ended
/// goes once it is older than `max_age_days` (here half a second).
pub async fn a_server_purges_expired_runs(backend: Backend) {
    let toml = "[retention]\nmax_age_days = 0.0000058\ninterval_minutes = 0.005\n";
    let s = Server::in_project(backend, Some(toml), true).await;
    push_ok(&s, A, "linear").await;
    let run = crate::scenarios::start(&s, A, "linear").await;
    for _ in 0..200 {
        let (st, _) = get(&s, A, &format!("/api/v1/executions/{run}")).await;
        if st == StatusCode::NOT_FOUND {
            assert_eq!(s.registry().run_tenant(&run).await.expect("tenant"), None);
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("execution {run} was never purged");
}
