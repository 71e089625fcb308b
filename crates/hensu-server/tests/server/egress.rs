//! The egress policy of server runs (docs/server.md, *Egress*), against real listeners on
//! 127.0.0.1: a tenant's workflow whose `api-caller` GETs an "internal admin" service and whose
//! `webhook` POSTs to it reaches nothing in any spelling of the loopback address, nor through a
//! redirect; `[server.egress] allow` lets it through; a stub run sends nothing at all.
//!
//! The runs are live (not simulated as a stub run's are): the project configures a model
//! provider (a mock on 127.0.0.1, which the operator configured, so the policy does not apply
//! to it) and the workflow declares an agent served by it.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::http::{StatusCode as AxumStatus, header};
use axum::response::IntoResponse;
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::harness::{Backend, Server, send};
use crate::project_config::{completion, mock};

const TENANT: &str = "tenant-a";
const SECRET: &str = "ADMIN-TOKEN-0xDEADBEEF";

/// An "internal admin" service on 127.0.0.1: records `METHOD path` of every request; answers
/// the secret, or a 302 to `redirect` when given.
struct Internal {
    port: u16,
    received: Arc<Mutex<Vec<String>>>,
    /// The `Idempotency-Key` of every request that had one.
    keys: Arc<Mutex<Vec<String>>>,
}

impl Internal {
    async fn start(redirect: Option<String>) -> Internal {
        let received: Arc<Mutex<Vec<String>>> = Arc::default();
        let keys: Arc<Mutex<Vec<String>>> = Arc::default();
        let (log, key_log) = (received.clone(), keys.clone());
        let app = Router::new().fallback(move |req: axum::extract::Request| {
            let (log, key_log) = (log.clone(), key_log.clone());
            let redirect = redirect.clone();
            async move {
                log.lock()
                    .expect("lock")
                    .push(format!("{} {}", req.method(), req.uri().path()));
                if let Some(k) = req.headers().get("idempotency-key") {
                    let k = k.to_str().unwrap_or_default().to_string();
                    key_log.lock().expect("lock").push(k);
                }
                match redirect {
                    Some(to) => (AxumStatus::FOUND, [(header::LOCATION, to)]).into_response(),
                    None => axum::Json(json!({"internal_admin_secret": SECRET})).into_response(),
                }
            }
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let port = listener.local_addr().expect("addr").port();
        tokio::spawn(async move { axum::serve(listener, app).await });
        Internal {
            port,
            received,
            keys,
        }
    }

    fn received(&self) -> Vec<String> {
        self.received.lock().expect("lock").clone()
    }
}

/// The repro's workflow: `fetch` GETs `endpoint` into `stolen` (on to `hook` either way),
/// `hook` POSTs `stolen` to `hook_url` (a failure ends at `failed`).
fn ssrf_workflow(id: &str, endpoint: &str, hook_url: &str) -> Value {
    json!({
        "formatVersion": 1,
        "id": id,
        "version": "1.0.0",
        "agents": {"writer": {
            "id": "writer", "role": "Writer", "model": "mock-model", "temperature": 0.7,
            "maxTokens": null, "tools": [], "instructions": null, "topP": null,
            "frequencyPenalty": null, "presencePenalty": null, "timeout": null,
            "maxToolCalls": null, "maintainContext": false
        }},
        "nodes": {
            "fetch": {
                "id": "fetch", "nodeType": "GENERIC", "executorType": "api-caller",
                "config": {"endpoint": endpoint, "method": "GET", "outputField": "stolen"},
                "transitionRules": [
                    {"type": "success", "targetNode": "hook"},
                    {"type": "failure", "targetNode": "hook"}
                ]
            },
            "hook": {
                "id": "hook", "nodeType": "ACTION",
                "actions": [{"type": "send", "handlerId": "webhook",
                             "payload": {"url": hook_url, "stolen": "{stolen}"}}],
                "transitionRules": [
                    {"type": "success", "targetNode": "done"},
                    {"type": "failure", "targetNode": "failed"}
                ]
            },
            "done": {"id": "done", "nodeType": "END", "status": "SUCCESS"},
            "failed": {"id": "failed", "nodeType": "END", "status": "FAILURE"}
        },
        "startNode": "fetch",
        "config": null,
        "metadata": {"name": id, "description": null, "author": null, "tags": []},
        "stateSchema": {"variables": [
            {"name": "stolen", "type": "STRING", "isInput": true, "description": null}
        ]}
    })
}

/// A live server (a model provider configured, on the mock) whose project adds `extra` to
/// `hensu.toml`.
async fn live_server(extra: &str) -> (Server, crate::project_config::Mock) {
    let provider = mock(vec![completion("unused")]).await;
    let toml = format!(
        "[providers.local]\nkind = \"openai\"\nbase_url = \"{}/v1\"\nmodels = [\"mock-*\"]\n\n{extra}",
        provider.base
    );
    (
        Server::in_project(Backend::Sqlite, Some(&toml), false).await,
        provider,
    )
}

/// The end of a run of `workflow`: its status, its result, and the text of its run log (the
/// history entry of a failed node holds its reason).
async fn run(s: &Server, workflow: Value) -> (Value, Value, String) {
    let (st, body) = send(
        s,
        reqwest::Method::POST,
        TENANT,
        "/api/v1/workflows",
        Some(workflow.clone()),
    )
    .await;
    assert_eq!(st, StatusCode::CREATED, "{body}");
    let start = json!({"workflowId": workflow["id"], "context": {"stolen": "nothing"}});
    let (st, body) = send(
        s,
        reqwest::Method::POST,
        TENANT,
        "/api/v1/executions",
        Some(start),
    )
    .await;
    assert_eq!(st, StatusCode::ACCEPTED, "{body}");
    let id = body["executionId"].as_str().expect("id").to_string();
    // A bounded wait for the run to end (not a timing assertion).
    for _ in 0..300 {
        let path = format!("/api/v1/executions/{id}");
        let (_, status) = send(s, reqwest::Method::GET, TENANT, &path, None).await;
        if status["status"] != "running" && status["status"] != "queued" {
            let path = format!("/api/v1/executions/{id}/result");
            let (_, result) = send(s, reqwest::Method::GET, TENANT, &path, None).await;
            let log = s.store().read_log(&id, 0, 1000).await.expect("log");
            let text: Vec<String> = log
                .iter()
                .filter_map(|e| e.delta.as_ref())
                .map(|d| serde_json::to_string(d).expect("delta"))
                .collect();
            return (status, result, text.join("\n"));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("execution {id} did not end");
}

/// The repro: loopback as an address, a name, a decimal number and an IPv4-mapped IPv6
/// address. Neither request reaches the listener, and the run fails naming the refusal (the
/// webhook's own message is tested in hensu-host's `egress` tests).
pub async fn loopback_in_every_spelling_is_refused_and_nothing_arrives() {
    let internal = Internal::start(None).await;
    let (s, _provider) = live_server("").await;
    let spellings = [
        (
            "literal",
            "127.0.0.1",
            "egress refused: 127.0.0.1 is a loopback address",
        ),
        ("name", "localhost", "egress refused: localhost resolves to"),
        (
            "decimal",
            "2130706433",
            "egress refused: 127.0.0.1 is a loopback address",
        ),
        (
            "mapped",
            "[::ffff:127.0.0.1]",
            "egress refused: [::ffff:7f00:1] (that is 127.0.0.1) is a loopback address",
        ),
    ];
    for (id, host, refusal) in spellings {
        let base = format!("http://{host}:{}", internal.port);
        let wf = ssrf_workflow(
            id,
            &format!("{base}/internal/admin/secret"),
            &format!("{base}/internal/admin/delete-all"),
        );
        let (status, result, log) = run(&s, wf).await;
        assert_eq!(status["exitStatus"], "FAILURE", "{host}: {status}\n{log}");
        assert_eq!(result["output"]["stolen"], "nothing", "{host}: {result}");
        // The api-caller's failure and the webhook's (the first failed action's words follow
        // "One or more actions failed") both name the refusal.
        assert_eq!(
            log.matches(refusal).count(),
            2,
            "{host}: the api-caller's and the webhook's failures name the refusal:\n{log}"
        );
        assert!(
            log.contains(r#""node_id":"hook","status":"FAILURE","error":"One or more actions failed: send:webhook: Webhook "#),
            "{host}: {log}"
        );
        assert!(
            log.contains("allow it with `[server.egress] allow` in hensu.toml"),
            "{log}"
        );
        assert!(!log.contains(SECRET), "{host}: {log}");
    }
    assert_eq!(internal.received(), Vec::<String>::new());
}

/// A redirect is checked like the first request. The allow-list names the host `localhost`
/// (allowed by name, whatever it resolves to), and that listener redirects to the IP literal
/// `127.0.0.1`, which no entry covers: the first hop arrives, the second never does.
pub async fn a_redirect_from_an_allowed_host_to_a_denied_address_is_refused() {
    let target = Internal::start(None).await;
    let redirector = Internal::start(Some(format!(
        "http://127.0.0.1:{}/internal/admin/secret",
        target.port
    )))
    .await;
    let (s, _provider) = live_server("[server.egress]\nallow = [\"localhost\"]\n").await;
    let wf = ssrf_workflow(
        "redirected",
        &format!("http://localhost:{}/start", redirector.port),
        &format!("http://127.0.0.1:{}/internal/admin/delete-all", target.port),
    );
    let (status, result, log) = run(&s, wf).await;
    assert_eq!(status["exitStatus"], "FAILURE", "{status}\n{log}");
    assert_eq!(result["output"]["stolen"], "nothing", "{result}");
    assert_eq!(redirector.received(), vec!["GET /start".to_string()]);
    assert_eq!(target.received(), Vec::<String>::new());
    assert_eq!(
        log.matches("egress refused: 127.0.0.1 is a loopback address")
            .count(),
        2,
        "the redirect hop, then the webhook:\n{log}"
    );
}

/// `[server.egress] allow = ["127.0.0.1/32"]`: both requests go through.
pub async fn an_allowed_range_lets_the_requests_through() {
    let internal = Internal::start(None).await;
    let (s, _provider) = live_server("[server.egress]\nallow = [\"127.0.0.1/32\"]\n").await;
    let base = format!("http://127.0.0.1:{}", internal.port);
    let wf = ssrf_workflow(
        "allowed",
        &format!("{base}/internal/admin/secret"),
        &format!("{base}/internal/admin/delete-all"),
    );
    let (status, result, log) = run(&s, wf).await;
    assert_eq!(status["exitStatus"], "SUCCESS", "{status}\n{log}");
    assert!(
        result["output"]["stolen"]
            .as_str()
            .is_some_and(|v| v.contains(SECRET)),
        "{result}"
    );
    assert_eq!(
        internal.received(),
        vec![
            "GET /internal/admin/secret".to_string(),
            "POST /internal/admin/delete-all".to_string()
        ]
    );
}

/// The call journal in a server run (docs/security.md, *Call journal*): the `api-caller`
/// request and the webhook carry their `Idempotency-Key`, and each journaled call is an
/// `execution.call` event of the execution's stream (started, then finished; no result).
pub async fn journaled_calls_are_events_and_carry_idempotency_keys() {
    let internal = Internal::start(None).await;
    let (s, _provider) = live_server("[server.egress]\nallow = [\"127.0.0.1/32\"]\n").await;
    let base = format!("http://127.0.0.1:{}", internal.port);
    let wf = ssrf_workflow(
        "journaled",
        &format!("{base}/internal/admin/secret"),
        &format!("{base}/internal/admin/delete-all"),
    );
    let (status, _, log) = run(&s, wf).await;
    assert_eq!(status["exitStatus"], "SUCCESS", "{status}\n{log}");
    let id = status["executionId"].as_str().expect("id").to_string();
    let keys = internal.keys.lock().expect("lock").clone();
    assert_eq!(keys.len(), 2, "{keys:?}");
    assert!(
        keys.iter().all(|k| k.starts_with(&format!("hensu:{id}:"))),
        "{keys:?}"
    );
    assert_ne!(keys[0], keys[1]);
    let events = crate::scenarios::events(&s, TENANT, &id, None).await;
    let calls: Vec<(String, String, String)> = events
        .iter()
        .filter(|e| e.kind() == "execution.call")
        .map(|e| {
            let d = &e.data;
            let text = |k: &str| d[k].as_str().unwrap_or_default().to_string();
            (text("kind"), text("phase"), text("nodeId"))
        })
        .collect();
    let expected = [
        ("api_call", "started", "fetch"),
        ("api_call", "finished", "fetch"),
        ("webhook", "started", "hook"),
        ("webhook", "finished", "hook"),
    ]
    .map(|(k, p, n)| (k.to_string(), p.to_string(), n.to_string()));
    assert_eq!(calls, expected, "{events:?}");
    for e in events.iter().filter(|e| e.kind() == "execution.call") {
        let text = e.data.to_string();
        assert!(
            !text.contains(SECRET),
            "a call event carries no result: {text}"
        );
    }
}

/// `hensuc serve --stub`: every agent is a stub, so the run is offline and sends nothing (its
/// requests are simulated), whatever the egress policy would allow.
pub async fn a_stub_server_run_sends_nothing() {
    let internal = Internal::start(None).await;
    let s = Server::in_project(
        Backend::Sqlite,
        Some("[server.egress]\nallow = [\"127.0.0.1/32\"]\n"),
        true,
    )
    .await;
    let base = format!("http://127.0.0.1:{}", internal.port);
    let wf = ssrf_workflow(
        "offline",
        &format!("{base}/internal/admin/secret"),
        &format!("{base}/internal/admin/delete-all"),
    );
    let (status, result, _) = run(&s, wf).await;
    assert_eq!(status["exitStatus"], "SUCCESS", "{status}");
    assert!(
        result["output"]["stolen"]
            .as_str()
            .is_some_and(|v| v.starts_with("simulated (offline run)")),
        "{result}"
    );
    assert_eq!(internal.received(), Vec::<String>::new());
}

/// A bad `[server.egress] allow` entry refuses the project (as `hensuc serve` does) with the
/// place and code `hensuc check` reports.
#[test]
fn a_bad_allow_entry_refuses_the_project() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        dir.path().join("hensu.toml"),
        "[server.egress]\nallow = [\"http://hooks.example.com/x\"]\n",
    )
    .expect("write");
    let err = hensu_server::ProjectConfig::from_project_dir(dir.path()).expect_err("refused");
    assert!(err.contains("hensu.toml:2:"), "{err}");
    assert!(err.contains("[E0906]"), "{err}");
    assert!(err.contains("write the host alone"), "{err}");
}
