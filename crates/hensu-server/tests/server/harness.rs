//! A server on 127.0.0.1:0 over a fresh store, HS256 tokens, and an SSE reader.

use std::sync::Arc;

use hensu_server::AuthConfig;
use hensu_store::{StateStore, StoreOptions, WorkflowRegistry};
use reqwest::StatusCode;
use serde_json::Value;

pub const SECRET: &str = "test-secret-test-secret-test-secret!";

/// How a test server differs from the default one (JWT, default limits, stub agents for
/// every model, stubs under `<tmp>/stubs` for every tenant).
#[derive(Clone)]
pub struct Options {
    pub limits: hensu_server::Limits,
    /// Dev mode: no key, every request is the dev tenant.
    pub dev: bool,
    /// `Some(sub)`: tenant T's stubs under `<tmp>/<sub>/T/` instead.
    pub per_tenant_stubs: Option<&'static str>,
    /// Stub agents for every model, as `hensuc serve --stub`.
    pub force_stub: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            limits: hensu_server::Limits::default(),
            dev: false,
            per_tenant_stubs: None,
            force_stub: true,
        }
    }
}

#[derive(Clone, Copy)]
pub enum Backend {
    Sqlite,
    Postgres,
}

pub struct Server {
    pub base: String,
    pub http: reqwest::Client,
    store: Arc<dyn StateStore>,
    registry: Arc<dyn WorkflowRegistry>,
    _dir: Arc<tempfile::TempDir>,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }
}

async fn stores(
    backend: Backend,
    dir: &std::path::Path,
) -> (Arc<dyn StateStore>, Arc<dyn WorkflowRegistry>) {
    match backend {
        Backend::Sqlite => {
            let db = dir.join("state.db");
            let store: Arc<dyn StateStore> = Arc::new(
                hensu_store::SqliteStore::open_file(&db, StoreOptions::default()).expect("store"),
            );
            let registry = store.registry().await.expect("registry");
            (store, registry)
        }
        Backend::Postgres => {
            let url = std::env::var("HENSU_TEST_DATABASE_URL")
                .expect("HENSU_TEST_DATABASE_URL (run under scripts/pg-test.sh)");
            let schema = format!("s_{}", uuid::Uuid::new_v4().simple());
            let store: Arc<dyn StateStore> = Arc::new(
                hensu_store::PgStore::open_in_schema(&url, Some(&schema), StoreOptions::default())
                    .await
                    .expect("pg store"),
            );
            let registry = store.registry().await.expect("pg registry");
            (store, registry)
        }
    }
}

impl Server {
    /// A server whose project directory has no `hensu.toml`, with stub agents for every model.
    pub async fn start(backend: Backend) -> Server {
        Server::in_project(backend, None, true).await
    }

    /// A server whose project directory holds `hensu_toml` (when given); `force_stub` as
    /// `hensuc serve --stub`.
    pub async fn in_project(
        backend: Backend,
        hensu_toml: Option<&str>,
        force_stub: bool,
    ) -> Server {
        let dir = tempfile::tempdir().expect("tempdir");
        if let Some(text) = hensu_toml {
            std::fs::write(dir.path().join("hensu.toml"), text).expect("hensu.toml");
        }
        let (store, registry) = stores(backend, dir.path()).await;
        let options = Options {
            force_stub,
            ..Options::default()
        };
        Server::over(store, registry, Arc::new(dir), options).await
    }

    /// A server on SQLite with `options`.
    pub async fn with(options: Options) -> Server {
        let dir = tempfile::tempdir().expect("tempdir");
        let (store, registry) = stores(Backend::Sqlite, dir.path()).await;
        Server::over(store, registry, Arc::new(dir), options).await
    }

    /// A server (default options) over `store` and its `registry`.
    pub async fn on_store(
        store: Arc<dyn StateStore>,
        registry: Arc<dyn WorkflowRegistry>,
    ) -> Server {
        let dir = tempfile::tempdir().expect("tempdir");
        Server::over(store, registry, Arc::new(dir), Options::default()).await
    }

    /// The server's temporary project directory.
    pub fn dir(&self) -> &std::path::Path {
        self._dir.path()
    }

    /// Another server on the same store (its own executor and event channel, as another
    /// process sharing the database would have).
    pub async fn sibling(&self) -> Server {
        Server::over(
            self.store.clone(),
            self.registry.clone(),
            self._dir.clone(),
            Options::default(),
        )
        .await
    }

    async fn over(
        store: Arc<dyn StateStore>,
        registry: Arc<dyn WorkflowRegistry>,
        dir: Arc<tempfile::TempDir>,
        options: Options,
    ) -> Server {
        let auth = AuthConfig {
            hs256_secret: (!options.dev).then(|| SECRET.into()),
            ..Default::default()
        }
        .build()
        .expect("auth");
        let stubs = match options.per_tenant_stubs {
            Some(sub) => hensu_server::StubScenarios::PerTenant(dir.path().join(sub)),
            None => hensu_server::StubScenarios::Shared(dir.path().join("stubs")),
        };
        let state = hensu_server::state_with_options(
            store.clone(),
            registry.clone(),
            auth,
            hensu_server::ProjectConfig::from_project_dir(dir.path()).expect("project"),
            stubs,
            options.force_stub,
            hensu_server::ExecutorOptions::default(),
        )
        .with_limits(options.limits);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let base = format!("http://{}", listener.local_addr().expect("addr"));
        let (tx, rx) = tokio::sync::oneshot::channel();
        tokio::spawn(hensu_server::serve(listener, state, async move {
            let _ = rx.await;
        }));
        Server {
            base,
            // No connection reuse: a refused upload may leave the server closing a connection
            // that a pooled client would otherwise pick for the next request.
            http: reqwest::Client::builder()
                .pool_max_idle_per_host(0)
                .build()
                .expect("client"),
            store,
            registry,
            _dir: dir,
            shutdown: Some(tx),
        }
    }

    pub fn store(&self) -> &Arc<dyn StateStore> {
        &self.store
    }

    pub fn registry(&self) -> &Arc<dyn WorkflowRegistry> {
        &self.registry
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }
}

/// A token of `tenant` (subject `user`).
pub fn token(tenant: &str) -> String {
    claims(serde_json::json!({"sub": "user", "tenant_id": tenant, "exp": 4_000_000_000u64}))
}

pub fn claims(c: Value) -> String {
    jsonwebtoken::encode(
        &jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256),
        &c,
        &jsonwebtoken::EncodingKey::from_secret(SECRET.as_bytes()),
    )
    .expect("token")
}

pub fn fixture(name: &str) -> Value {
    let path = format!(
        "{}/tests/server/fixtures/{name}.json",
        env!("CARGO_MANIFEST_DIR")
    );
    serde_json::from_str(&std::fs::read_to_string(path).expect("fixture")).expect("json")
}

/// One SSE message.
#[derive(Debug, Clone)]
pub struct Sse {
    pub id: Option<String>,
    pub data: Value,
}

impl Sse {
    pub fn kind(&self) -> &str {
        self.data["type"].as_str().unwrap_or("")
    }
}

/// Parses an event-stream body (comments skipped), without the `execution.token` events: the
/// stub agents' text pieces, live only and not log events (their ids are `<row>.<token>`;
/// docs/server.md, *Token events*, tested in hensuc's `serve_tokens`).
pub fn parse_sse(text: &str) -> Vec<Sse> {
    parse_sse_all(text)
        .into_iter()
        .filter(|e| e.kind() != "execution.token")
        .collect()
}

/// Parses an event-stream body (comments skipped), every event.
fn parse_sse_all(text: &str) -> Vec<Sse> {
    text.split("\n\n")
        .filter_map(|block| {
            let mut id = None;
            let mut data = String::new();
            for line in block.lines() {
                if let Some(v) = line.strip_prefix("id:") {
                    id = Some(v.trim().to_string());
                } else if let Some(v) = line.strip_prefix("data:") {
                    data.push_str(v.trim_start());
                }
            }
            if data.is_empty() {
                None
            } else {
                Some(Sse {
                    id,
                    data: serde_json::from_str(&data).expect("event data is JSON"),
                })
            }
        })
        .collect()
}

/// One request as `tenant` (a bearer token of its own); the status and the body as JSON (or
/// as a string when it is not JSON).
pub async fn send(
    s: &Server,
    method: reqwest::Method,
    tenant: &str,
    path: &str,
    body: Option<Value>,
) -> (StatusCode, Value) {
    let mut req = s
        .http
        .request(method, s.url(path))
        .bearer_auth(token(tenant));
    if let Some(b) = body {
        req = req.json(&b);
    }
    let resp = req.send().await.expect("request");
    let status = resp.status();
    let text = resp.text().await.expect("body");
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}
