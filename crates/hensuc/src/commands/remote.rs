//! The client of a hensu server (`hensuc serve`, or upstream's): `--server URL` / `--token`
//! (or `HENSU_SERVER` / `HENSU_TOKEN`), JSON in and out, SSE for a run's events.

use std::time::Duration;

use anyhow::Context as _;
use serde_json::Value;

/// Where the server is and who we are.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct RemoteArgs {
    /// A hensu server's base URL (e.g. http://127.0.0.1:8080); `HENSU_SERVER` otherwise.
    #[arg(long, value_name = "URL", global = true)]
    pub server: Option<String>,
    /// Bearer token (JWT) for the server; `HENSU_TOKEN` otherwise. Never printed.
    #[arg(long, value_name = "TOKEN", global = true)]
    pub token: Option<String>,
}

/// A connected client.
pub struct Remote {
    base: String,
    token: Option<String>,
    http: reqwest::Client,
    rt: tokio::runtime::Runtime,
}

/// An answer: the status and the JSON body (or the text, as a JSON string).
pub struct Answer {
    pub status: u16,
    pub body: Value,
    /// A paged list's `X-Next-Cursor` (docs/server.md, *Paging*): there is a next page.
    pub next_cursor: Option<String>,
}

impl Answer {
    /// The server's `error` text, or the body.
    pub fn error_text(&self) -> String {
        self.body
            .get("error")
            .and_then(Value::as_str)
            .map(str::to_string)
            .unwrap_or_else(|| self.body.to_string())
    }

    pub fn ok(&self) -> bool {
        (200..300).contains(&self.status)
    }
}

/// A named server: its base URL (no trailing `/`) and the bearer token, if any.
pub struct ServerTarget {
    pub base: String,
    pub token: Option<String>,
}

impl RemoteArgs {
    /// The server and token of the flags, else of `HENSU_SERVER` / `HENSU_TOKEN`; `None` when
    /// no server is named. The one reading of these flags for every client command.
    pub fn target(&self) -> anyhow::Result<Option<ServerTarget>> {
        let server = self
            .server
            .clone()
            .or_else(|| std::env::var("HENSU_SERVER").ok());
        let token = self
            .token
            .clone()
            .or_else(|| std::env::var("HENSU_TOKEN").ok());
        let Some(base) = server.as_deref().map(str::trim).filter(|s| !s.is_empty()) else {
            return Ok(None);
        };
        if !(base.starts_with("http://") || base.starts_with("https://")) {
            anyhow::bail!("--server must be an http:// or https:// URL, got `{base}`");
        }
        Ok(Some(ServerTarget {
            base: base.trim_end_matches('/').to_string(),
            token: token.filter(|t| !t.trim().is_empty()),
        }))
    }
}

impl Remote {
    /// The client for `args`; `None` when no server is named.
    pub fn from_args(args: &RemoteArgs) -> anyhow::Result<Option<Remote>> {
        let Some(ServerTarget { base, token }) = args.target()? else {
            return Ok(None);
        };
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .build()
            .context("cannot build the HTTP client")?;
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        Ok(Some(Remote {
            base,
            token,
            http,
            rt,
        }))
    }

    /// The client, or an error naming the missing `--server`.
    pub fn required(args: &RemoteArgs) -> anyhow::Result<Remote> {
        Remote::from_args(args)?
            .ok_or_else(|| anyhow::anyhow!("no server: pass --server URL or set HENSU_SERVER"))
    }

    fn request(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        let mut r = self.http.request(method, format!("{}{path}", self.base));
        if let Some(t) = &self.token {
            r = r.bearer_auth(t);
        }
        r
    }

    /// Sends a request and reads the JSON answer.
    pub fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<&Value>,
    ) -> anyhow::Result<Answer> {
        let mut req = self.request(method, path).timeout(Duration::from_secs(60));
        if let Some(b) = body {
            req = req.json(b);
        }
        self.rt.block_on(async {
            let resp = req
                .send()
                .await
                .with_context(|| format!("cannot reach the server at {}", self.base))?;
            let status = resp.status().as_u16();
            let next_cursor = resp
                .headers()
                .get("x-next-cursor")
                .and_then(|v| v.to_str().ok())
                .map(str::to_string);
            let text = resp.text().await.unwrap_or_default();
            let body = if text.is_empty() {
                Value::Null
            } else {
                serde_json::from_str(&text).unwrap_or(Value::String(text))
            };
            Ok(Answer {
                status,
                body,
                next_cursor,
            })
        })
    }

    pub fn get(&self, path: &str) -> anyhow::Result<Answer> {
        self.call(reqwest::Method::GET, path, None)
    }

    pub fn post(&self, path: &str, body: &Value) -> anyhow::Result<Answer> {
        self.call(reqwest::Method::POST, path, Some(body))
    }

    pub fn delete(&self, path: &str) -> anyhow::Result<Answer> {
        self.call(reqwest::Method::DELETE, path, None)
    }

    /// Follows an execution's events until its stream ends (pause or end), calling `on_event`
    /// with each event's JSON; reconnects with `Last-Event-ID` when the connection drops.
    pub fn follow(
        &self,
        execution_id: &str,
        from: Option<String>,
        mut on_event: impl FnMut(&Value),
    ) -> anyhow::Result<()> {
        let path = format!("/api/v1/executions/{execution_id}/events");
        let mut last: Option<String> = from;
        let mut failures = 0;
        loop {
            let mut req = self.request(reqwest::Method::GET, &path);
            if let Some(l) = &last {
                req = req.header("Last-Event-ID", l);
            }
            let outcome: anyhow::Result<bool> = self.rt.block_on(async {
                let mut resp = req.send().await?;
                if !resp.status().is_success() {
                    let status = resp.status().as_u16();
                    let text = resp.text().await.unwrap_or_default();
                    anyhow::bail!("events: HTTP {status}: {text}");
                }
                let mut buf = String::new();
                while let Some(chunk) = resp.chunk().await? {
                    buf.push_str(&String::from_utf8_lossy(&chunk));
                    while let Some(end) = buf.find("\n\n") {
                        let block: String = buf.drain(..end + 2).collect();
                        let (id, data) = parse_block(&block);
                        if let Some(i) = id {
                            last = Some(i);
                        }
                        if let Some(d) = data {
                            on_event(&d);
                        }
                    }
                }
                Ok(true)
            });
            match outcome {
                Ok(_) => return Ok(()),
                Err(e) if failures < 3 && e.to_string().contains("error decoding") => {
                    failures += 1;
                }
                Err(e) => return Err(e),
            }
        }
    }
}

fn parse_block(block: &str) -> (Option<String>, Option<Value>) {
    let mut id = None;
    let mut data = String::new();
    for line in block.lines() {
        if let Some(v) = line.strip_prefix("id:") {
            id = Some(v.trim().to_string());
        } else if let Some(v) = line.strip_prefix("data:") {
            data.push_str(v.trim_start());
        }
    }
    let value = (!data.is_empty())
        .then(|| serde_json::from_str(&data).ok())
        .flatten();
    (id, value)
}

/// Prints one event as a progress line on stderr (the run's outcome goes to stdout).
pub fn print_event(ev: &Value) {
    let kind = ev.get("type").and_then(Value::as_str).unwrap_or("?");
    let node = ev
        .get("nodeId")
        .or_else(|| ev.get("finalNodeId"))
        .and_then(Value::as_str)
        .unwrap_or("");
    match kind {
        "execution.started" => eprintln!("▶ started"),
        "execution.step" => eprintln!("  → {node}"),
        // The headlines of a local run's summary (`run_summary.rs`), word for word.
        "execution.paused" => match ev.get("correlationId").and_then(Value::as_str) {
            Some(c) => eprintln!("⏸ paused at `{node}`, waiting for review (correlation id {c})"),
            None => eprintln!("⏸ paused at `{node}`"),
        },
        "execution.completed" => {
            let exit_status = ev.get("exitStatus").and_then(Value::as_str);
            let mark = if ev.get("success").and_then(Value::as_bool) == Some(true) {
                "✓"
            } else {
                "✗"
            };
            match exit_status {
                Some(s) => eprintln!("{mark} workflow ended at `{node}`: {s}"),
                None => eprintln!("{mark} workflow ended at `{node}`"),
            }
        }
        "execution.error" => match ev.get("message").and_then(Value::as_str) {
            Some(m) => eprintln!("✗ workflow failed at `{node}`: {m}"),
            None => eprintln!("✗ workflow failed at `{node}`"),
        },
        "execution.cancelled" => eprintln!("✗ cancelled at `{node}`"),
        other => eprintln!("  {other}"),
    }
}

/// An error for a non-2xx answer.
pub fn fail(what: &str, a: &Answer) -> anyhow::Error {
    anyhow::anyhow!("{what}: HTTP {}: {}", a.status, a.error_text())
}
