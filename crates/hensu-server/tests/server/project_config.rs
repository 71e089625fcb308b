//! The server runs every execution under its project's `hensu.toml` as `hensuc run` does (one
//! run recipe, `hensu_host::launch`): `[providers]`, `[retry]` and `[structured_output]` against
//! a mock OpenAI-compatible server on 127.0.0.1, and `[network] allow_hosts` in a stub run.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::State;
use axum::http::StatusCode as AxumStatus;
use axum::routing::post;
use axum::{Json, Router};
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::harness::{Backend, Server, fixture, send};

const TENANT: &str = "tenant-a";

/// What the mock received: `(path, JSON body)` per request.
type Received = Arc<Mutex<Vec<(String, Value)>>>;

/// A mock on 127.0.0.1: `POST /v1/chat/completions` answers from `script` in order (the last
/// answer repeats), `POST /hook` answers 200.
pub(crate) struct Mock {
    pub(crate) base: String,
    pub(crate) received: Received,
}

#[derive(Clone)]
struct MockState {
    script: Arc<Vec<(u16, Value)>>,
    received: Received,
}

pub(crate) fn completion(content: &str) -> (u16, Value) {
    (
        200,
        json!({
            "id": "chatcmpl-1", "object": "chat.completion", "model": "mock-model",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8}
        }),
    )
}

async fn chat(State(m): State<MockState>, Json(body): Json<Value>) -> (AxumStatus, Json<Value>) {
    let n = {
        let mut r = m.received.lock().expect("lock");
        r.push(("/v1/chat/completions".into(), body));
        r.iter()
            .filter(|(p, _)| p == "/v1/chat/completions")
            .count()
    };
    let (status, answer) = m.script[(n - 1).min(m.script.len() - 1)].clone();
    (AxumStatus::from_u16(status).expect("status"), Json(answer))
}

async fn hook(State(m): State<MockState>, Json(body): Json<Value>) -> AxumStatus {
    m.received
        .lock()
        .expect("lock")
        .push(("/hook".into(), body));
    AxumStatus::OK
}

pub(crate) async fn mock(script: Vec<(u16, Value)>) -> Mock {
    let received: Received = Arc::default();
    let app = Router::new()
        .route("/v1/chat/completions", post(chat))
        .route("/hook", post(hook))
        .with_state(MockState {
            script: Arc::new(script),
            received: received.clone(),
        });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("addr"));
    tokio::spawn(async move { axum::serve(listener, app).await });
    Mock { base, received }
}

/// Starts `workflow` (pushed from its fixture) with `context` and waits for its end; the
/// final status and result.
async fn run(s: &Server, workflow: &str, context: Value) -> (Value, Value) {
    run_as(s, TENANT, workflow, context).await
}

/// [`run`] as `tenant`.
async fn run_as(s: &Server, tenant: &str, workflow: &str, context: Value) -> (Value, Value) {
    let (st, body) = send(
        s,
        reqwest::Method::POST,
        tenant,
        "/api/v1/workflows",
        Some(fixture(workflow)),
    )
    .await;
    // Created, or the same workflow pushed again.
    assert!(
        st == StatusCode::CREATED || st == StatusCode::OK,
        "{st} {body}"
    );
    let (st, body) = send(
        s,
        reqwest::Method::POST,
        tenant,
        "/api/v1/executions",
        Some(json!({"workflowId": workflow, "context": context})),
    )
    .await;
    assert_eq!(st, StatusCode::ACCEPTED, "{body}");
    let id = body["executionId"]
        .as_str()
        .expect("executionId")
        .to_string();
    // A bounded wait for the run to end (not a timing assertion).
    for _ in 0..300 {
        let (_, status) = send(
            s,
            reqwest::Method::GET,
            tenant,
            &format!("/api/v1/executions/{id}"),
            None,
        )
        .await;
        if status["status"] != "running" && status["status"] != "queued" {
            let (_, result) = send(
                s,
                reqwest::Method::GET,
                tenant,
                &format!("/api/v1/executions/{id}/result"),
                None,
            )
            .await;
            return (status, result);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("execution {id} did not end");
}

/// The model is the one `[providers.local]` names (no stub), its three 503s are retried as
/// `[retry] max_attempts = 4` allows (the default, 3, would fail the run), and two answers
/// without the JSON the node writes are corrected as `[structured_output] max_corrections = 2`
/// allows (the default, 1, would fail it).
pub async fn providers_retry_and_structured_output_come_from_hensu_toml() {
    let overloaded = (503, json!({"error": {"message": "overloaded"}}));
    let mock = mock(vec![
        overloaded.clone(),
        overloaded.clone(),
        overloaded,
        completion("Here is a summary in prose."),
        completion("Still prose, sorry."),
        completion(r#"{"summary": "mocked answer", "title": "Mock"}"#),
    ])
    .await;
    let toml = format!(
        "[providers.local]\nkind = \"openai\"\nbase_url = \"{}/v1\"\nmodels = [\"mock-*\"]\n\n\
         [retry]\nmax_attempts = 4\nbase_delay_ms = 1\nmax_delay_ms = 5\n\n\
         [structured_output]\nmax_corrections = 2\n",
        mock.base
    );
    let s = Server::in_project(Backend::Sqlite, Some(&toml), false).await;
    let (status, result) = run(&s, "configured", json!({"topic": "rust"})).await;
    assert_eq!(status["status"], "completed", "{status}\n{result}");
    assert_eq!(result["output"]["summary"], "mocked answer", "{result}");
    assert_eq!(result["output"]["title"], "Mock", "{result}");
    let received = mock.received.lock().expect("lock").clone();
    let chats: Vec<&Value> = received
        .iter()
        .filter(|(p, _)| p == "/v1/chat/completions")
        .map(|(_, b)| b)
        .collect();
    assert_eq!(
        chats.len(),
        6,
        "3 retried + 1 answer + 2 corrections: {chats:?}"
    );
    assert_eq!(chats[0]["model"], "mock-model");
    assert!(
        chats[0].to_string().contains("Summarize rust."),
        "{}",
        chats[0]
    );
}

/// With stub agents a run is offline: its webhook is simulated unless `[network] allow_hosts`
/// names the host — then it really reaches the mock (allowed by `[server.egress]` too).
pub async fn a_stub_run_reaches_only_the_allowed_hosts() {
    let mock = mock(vec![completion("unused")]).await;
    let hook = format!("{}/hook", mock.base);
    let closed = Server::in_project(Backend::Sqlite, None, true).await;
    let (status, _) = run(&closed, "hook", json!({"hook": hook})).await;
    assert_eq!(status["status"], "completed", "{status}");
    assert!(
        mock.received.lock().expect("lock").is_empty(),
        "an offline run sent a request"
    );
    let open = Server::in_project(
        Backend::Sqlite,
        // The mock is on 127.0.0.1, which a server run reaches only when the egress policy
        // allows it (docs/server.md, *Egress*).
        Some("[network]\nallow_hosts = [\"127.0.0.1\"]\n\n[server.egress]\nallow = [\"127.0.0.1/32\"]\n"),
        true,
    )
    .await;
    let (status, _) = run(&open, "hook", json!({"hook": hook})).await;
    assert_eq!(status["status"], "completed", "{status}");
    let received = mock.received.lock().expect("lock").clone();
    assert_eq!(received.len(), 1, "{received:?}");
    assert_eq!(received[0].0, "/hook");
    assert_eq!(received[0].1["text"], "hello");
}

/// A server run's model calls are counted under its tenant and model (`/metrics`): calls,
/// the tokens the provider reported, their cost at `[pricing]`, the call duration; and the
/// store's queue depth is a gauge.
pub async fn model_metrics_count_calls_tokens_and_cost_per_tenant_and_model() {
    let mock = mock(vec![completion(
        r#"{"summary": "mocked answer", "title": "Mock"}"#,
    )])
    .await;
    let toml = format!(
        "[providers.local]\nkind = \"openai\"\nbase_url = \"{}/v1\"\nmodels = [\"mock-*\"]\n\n\
         [pricing.\"mock-model\"]\ninput_per_mtok = 2.0\noutput_per_mtok = 10.0\n",
        mock.base
    );
    let s = Server::in_project(Backend::Sqlite, Some(&toml), false).await;
    // The recorder is the process's: a tenant of this test alone keeps the counts its own.
    let tenant = "metered-tenant";
    for _ in 0..2 {
        let (status, _) = run_as(&s, tenant, "configured", json!({"topic": "rust"})).await;
        assert_eq!(status["status"], "completed", "{status}");
    }
    let text = s
        .http
        .get(s.url("/metrics"))
        .send()
        .await
        .expect("metrics")
        .text()
        .await
        .expect("text");
    let value = |name: &str, labels: &[&str]| -> f64 {
        text.lines()
            .filter(|l| l.starts_with(name) && labels.iter().all(|x| l.contains(x)))
            .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
            .sum()
    };
    let who = [r#"tenant="metered-tenant""#, r#"model="mock-model""#];
    assert_eq!(
        value(
            "hensu_model_calls_total",
            &[who[0], who[1], r#"outcome="ok""#]
        ),
        2.0,
        "{text}"
    );
    assert_eq!(
        value(
            "hensu_model_tokens_total",
            &[who[0], who[1], r#"direction="input""#]
        ),
        10.0
    );
    assert_eq!(
        value(
            "hensu_model_tokens_total",
            &[who[0], who[1], r#"direction="output""#]
        ),
        6.0
    );
    // 2 × (5 × 2.0 + 3 × 10.0) / 1e6 money, counted in millionths.
    assert_eq!(value("hensu_model_cost_micros_total", &who), 80.0);
    assert_eq!(
        value("hensu_model_call_duration_seconds_count", &who),
        2.0,
        "{text}"
    );
    assert_eq!(
        value("hensu_executions_total", &[who[0], r#"status="completed""#]),
        2.0
    );
    assert!(
        text.lines().any(|l| l.starts_with("hensu_queue_depth ")),
        "{text}"
    );
}

/// `[server] review_webhook`: a run that pauses for a review is told to the URL once, as an
/// `execution.review_requested` message with its ids (and the token of
/// `HENSU_REVIEW_WEBHOOK_TOKEN` when set — not set here); a run that does not wait for a
/// review sends nothing.
pub async fn a_review_pause_is_told_to_the_review_webhook() {
    let mock = mock(vec![completion("unused")]).await;
    let toml = format!("[server]\nreview_webhook = \"{}/hook\"\n", mock.base);
    let s = Server::in_project(Backend::Sqlite, Some(&toml), true).await;
    let (status, _) = run(&s, "reviewed", json!({"topic": "rust"})).await;
    assert_eq!(status["status"], "paused", "{status}");
    let id = status["executionId"].as_str().expect("id").to_string();
    // Sent after the pause is recorded, on a task of its own: a bounded wait.
    let mut hooks = Vec::new();
    for _ in 0..100 {
        hooks = mock
            .received
            .lock()
            .expect("lock")
            .iter()
            .filter(|(p, _)| p == "/hook")
            .map(|(_, b)| b.clone())
            .collect::<Vec<Value>>();
        if !hooks.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let [hook] = hooks.as_slice() else {
        panic!("one notification: {hooks:?}")
    };
    assert_eq!(hook["event"], "execution.review_requested");
    assert_eq!(hook["executionId"], id.as_str());
    assert_eq!(hook["tenantId"], TENANT);
    assert_eq!(hook["workflowId"], "reviewed");
    assert!(
        hook["correlationId"]
            .as_str()
            .is_some_and(|c| !c.is_empty()),
        "{hook}"
    );
    assert!(hook.get("context").is_none() && hook.get("output").is_none());
    // A run that needs no review is not told.
    let (status, _) = run(&s, "linear", json!({"topic": "rust"})).await;
    assert_eq!(status["status"], "completed", "{status}");
    tokio::time::sleep(Duration::from_millis(200)).await;
    let count = mock
        .received
        .lock()
        .expect("lock")
        .iter()
        .filter(|(p, _)| p == "/hook")
        .count();
    assert_eq!(count, 1);
}
