//! The store goes away and comes back (docs/server.md, *Errors and retries*): while
//! PostgreSQL is unreachable the API answers 503 `store_unavailable` with `Retry-After`; once it
//! is back the same server answers again without a restart, a start retried with its
//! `Idempotency-Key` makes one execution, and that execution runs to its end.

use std::sync::{Arc, Mutex};

use hensu_store::{StateStore, StoreOptions};
use reqwest::StatusCode;
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

use crate::harness::Server;
use crate::scenarios::idempotency::keyed_start;
use crate::scenarios::{A, get, push_ok};

/// A TCP relay to PostgreSQL on a fixed local port that can be cut (listener and every
/// connection dropped) and restored: an outage the test controls.
struct Relay {
    port: u16,
    upstream: String,
    tasks: Arc<Mutex<Vec<JoinHandle<()>>>>,
}

impl Relay {
    async fn start(upstream: String) -> Relay {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let relay = Relay {
            port,
            upstream,
            tasks: Arc::default(),
        };
        relay.serve(listener);
        relay
    }

    fn serve(&self, listener: TcpListener) {
        let (upstream, tasks) = (self.upstream.clone(), self.tasks.clone());
        let inner = tasks.clone();
        let accept = tokio::spawn(async move {
            while let Ok((mut client, _)) = listener.accept().await {
                let upstream = upstream.clone();
                let conn = tokio::spawn(async move {
                    if let Ok(mut server) = TcpStream::connect(&upstream).await {
                        let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                    }
                });
                inner.lock().expect("tasks").push(conn);
            }
        });
        tasks.lock().expect("tasks").push(accept);
    }

    /// Drops the listener and every relayed connection: connecting is refused from now on.
    async fn cut(&self) {
        let tasks: Vec<JoinHandle<()>> = self.tasks.lock().expect("tasks").drain(..).collect();
        for t in tasks {
            t.abort();
            let _ = t.await;
        }
    }

    /// Listens on the same port again.
    async fn restore(&self) {
        let listener = TcpListener::bind(("127.0.0.1", self.port))
            .await
            .expect("rebind the relay's port");
        self.serve(listener);
    }
}

pub async fn an_unreachable_store_is_503_and_a_keyed_retry_starts_once() {
    let url = std::env::var("HENSU_TEST_DATABASE_URL")
        .expect("HENSU_TEST_DATABASE_URL (run under scripts/pg-test.sh)");
    // postgres://user@HOST:PORT/db…: the relay stands in for HOST:PORT.
    let (head, rest) = url.split_once('@').expect("user@host in the URL");
    let (hostport, tail) = rest.split_once('/').expect("/db in the URL");
    let relay = Relay::start(hostport.to_string()).await;
    let relayed = format!("{head}@127.0.0.1:{}/{tail}", relay.port);
    let schema = format!("s_{}", uuid::Uuid::new_v4().simple());
    let store: Arc<dyn StateStore> = Arc::new(
        hensu_store::PgStore::open_in_schema(&relayed, Some(&schema), StoreOptions::default())
            .await
            .expect("pg store"),
    );
    let registry = store.registry().await.expect("registry");
    let s = Server::on_store(store, registry).await;
    push_ok(&s, A, "linear").await;

    relay.cut().await;
    let body = r#"{"workflowId": "linear", "context": {"topic": "rust"}}"#;
    let resp = s
        .http
        .post(s.url("/api/v1/executions"))
        .bearer_auth(crate::harness::token(A))
        .header("content-type", "application/json")
        .header("idempotency-key", "outage-1")
        .body(body)
        .send()
        .await
        .expect("start");
    assert_eq!(resp.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(
        resp.headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok()),
        Some("1")
    );
    let err: serde_json::Value = resp.json().await.expect("json");
    assert_eq!(err["code"], "store_unavailable", "{err}");
    assert_eq!(err["status"], 503);
    assert!(
        !err.to_string().contains("127.0.0.1"),
        "no store address in the answer: {err}"
    );
    let (st, err) = get(&s, A, "/api/v1/executions").await;
    assert_eq!(
        (st, &err["code"]),
        (StatusCode::SERVICE_UNAVAILABLE, &"store_unavailable".into())
    );

    // Back: the same server answers; the retried start makes one execution.
    relay.restore().await;
    let (st, first) = keyed_start(&s, A, b"outage-1", body).await;
    assert_eq!(st, StatusCode::ACCEPTED, "{first}");
    let (st, again) = keyed_start(&s, A, b"outage-1", body).await;
    assert_eq!(st, StatusCode::OK, "{again}");
    assert_eq!(again["executionId"], first["executionId"]);
    let (_, list) = get(&s, A, "/api/v1/executions").await;
    assert_eq!(list.as_array().map(Vec::len), Some(1), "{list}");
    // And it runs to its end (bounded wait on the order of events, not a timing assertion).
    let id = first["executionId"].as_str().expect("id");
    let mut status = serde_json::Value::Null;
    for _ in 0..300 {
        status = get(&s, A, &format!("/api/v1/executions/{id}")).await.1;
        if status["status"] == "completed" {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(status["status"], "completed", "{status}");
}
