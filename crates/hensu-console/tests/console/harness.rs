//! A server with the console on 127.0.0.1:0 over a fresh SQLite store, HS256 tokens, and a
//! client that keeps one console session (cookie + CSRF token) per tenant.

use std::time::Duration;

use hensu_server::AuthConfig;
use hensu_store::StoreOptions;
use serde_json::{Value, json};

pub const SECRET: &str = "console-test-secret-console-test!!";

pub const LINEAR: &str = include_str!("fixtures/linear.json");
pub const REVIEWED: &str = include_str!("fixtures/reviewed.json");
/// Three fork branches, each reviewed (the server tests' fixture).
pub const REVIEWS3: &str =
    include_str!("../../../hensu-server/tests/server/fixtures/reviews3.json");
pub const SIGNALLED: &str = include_str!("fixtures/signalled.json");
pub const TYPED: &str = include_str!("fixtures/typed.json");
/// A workflow whose run fails on a server (its `deploy` node runs a local command).
pub const STRICT: &str = include_str!("fixtures/strict.json");

pub struct Server {
    pub base: String,
    pub http: reqwest::Client,
    _dir: tempfile::TempDir,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }
}

impl Server {
    /// A server with JWT auth (`jwt = true`) or in dev mode; `stubs` are `(file, text)` under
    /// `stubs/default/`.
    pub async fn start(jwt: bool, stubs: &[(&str, &str)]) -> Server {
        let dir = tempfile::tempdir().expect("tempdir");
        for (file, text) in stubs {
            let d = dir.path().join("stubs/default");
            std::fs::create_dir_all(&d).expect("stub dir");
            std::fs::write(d.join(file), text).expect("stub file");
        }
        let db = dir.path().join("state.db");
        let store =
            hensu_store::SqliteStore::open_file(&db, StoreOptions::default()).expect("store");
        let registry = hensu_store::StateStore::registry(&store)
            .await
            .expect("registry");
        let auth = AuthConfig {
            hs256_secret: jwt.then(|| SECRET.to_string()),
            ..Default::default()
        }
        .build()
        .expect("auth");
        let state = hensu_server::state_with(
            std::sync::Arc::new(store),
            registry,
            auth,
            hensu_server::ProjectConfig::from_project_dir(dir.path()).expect("project"),
            true,
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let base = format!("http://{}", listener.local_addr().expect("addr"));
        let (tx, rx) = tokio::sync::oneshot::channel();
        let console = hensu_console::router(state.clone());
        tokio::spawn(hensu_server::serve_with(
            listener,
            state,
            console,
            async move {
                let _ = rx.await;
            },
        ));
        Server {
            base,
            http: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .pool_max_idle_per_host(0)
                .build()
                .expect("client"),
            _dir: dir,
            shutdown: Some(tx),
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// Pushes a workflow JSON as `tenant` through the API.
    pub async fn push(&self, tenant: &str, workflow: &str) {
        let v: Value = serde_json::from_str(workflow).expect("fixture json");
        let r = self
            .http
            .post(self.url("/api/v1/workflows"))
            .bearer_auth(token(tenant))
            .json(&v)
            .send()
            .await
            .expect("push");
        assert!(
            r.status().is_success(),
            "push: {}",
            r.text().await.unwrap_or_default()
        );
    }

    /// Starts a run through the API; returns its id.
    pub async fn run(&self, tenant: &str, workflow: &str, context: Value) -> String {
        let r = self
            .http
            .post(self.url("/api/v1/executions"))
            .bearer_auth(token(tenant))
            .json(&json!({"workflowId": workflow, "context": context}))
            .send()
            .await
            .expect("start");
        assert_eq!(r.status(), 202);
        let v: Value = r.json().await.expect("json");
        v["executionId"].as_str().expect("id").to_string()
    }

    /// The API status of a run.
    pub async fn status(&self, tenant: &str, id: &str) -> Value {
        self.http
            .get(self.url(&format!("/api/v1/executions/{id}")))
            .bearer_auth(token(tenant))
            .send()
            .await
            .expect("status")
            .json()
            .await
            .expect("json")
    }

    /// Waits (bounded) until the run's status is `want`.
    pub async fn wait_for(&self, tenant: &str, id: &str, want: &str) -> Value {
        for _ in 0..400 {
            let s = self.status(tenant, id).await;
            if s["status"] == want {
                return s;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        panic!(
            "run {id} never became {want}: {}",
            self.status(tenant, id).await
        );
    }

    /// Signs `tenant` in to the console.
    pub async fn session(&self, tenant: &str) -> Session {
        let r = self
            .http
            .post(self.url("/console/login"))
            .form(&[("token", token(tenant))])
            .send()
            .await
            .expect("login");
        assert_eq!(r.status(), 303, "login");
        let cookie = set_cookie(&r).expect("session cookie");
        let mut s = Session {
            cookie,
            csrf: String::new(),
        };
        let page = s.get(self, "/console/executions").await;
        s.csrf = csrf_of(&page.1);
        s
    }
}

/// The `name=value` of the console's Set-Cookie.
pub fn set_cookie(r: &reqwest::Response) -> Option<String> {
    r.headers()
        .get_all(reqwest::header::SET_COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|v| v.starts_with("hensu_console="))
        .and_then(|v| v.split(';').next())
        .map(str::to_string)
}

/// The CSRF token a page carries for its scripts.
pub fn csrf_of(html: &str) -> String {
    let at = html
        .find("name=\"csrf-token\" content=\"")
        .expect("csrf meta")
        + 27;
    html[at..at + 64].to_string()
}

/// A console session: its cookie and CSRF token.
pub struct Session {
    pub cookie: String,
    pub csrf: String,
}

impl Session {
    /// GET as this session (HTML accepted): status and body.
    pub async fn get(&self, server: &Server, path: &str) -> (u16, String) {
        let r = server
            .http
            .get(server.url(path))
            .header("cookie", &self.cookie)
            .header("accept", "text/html")
            .send()
            .await
            .expect("get");
        (r.status().as_u16(), r.text().await.expect("body"))
    }

    /// POST a form as this session from the console's own origin: status, Location, body.
    pub async fn post(
        &self,
        server: &Server,
        path: &str,
        form: &[(&str, &str)],
    ) -> (u16, String, String) {
        let r = server
            .http
            .post(server.url(path))
            .header("cookie", &self.cookie)
            .header("origin", &server.base)
            .header("sec-fetch-site", "same-origin")
            .form(form)
            .send()
            .await
            .expect("post");
        let location = r
            .headers()
            .get("location")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string();
        (r.status().as_u16(), location, r.text().await.expect("body"))
    }
}

/// A token of `tenant` (subject `reviewer`).
pub fn token(tenant: &str) -> String {
    jsonwebtoken::encode(
        &jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256),
        &json!({"sub": "reviewer", "tenant_id": tenant, "exp": 4_000_000_000u64}),
        &jsonwebtoken::EncodingKey::from_secret(SECRET.as_bytes()),
    )
    .expect("token")
}
