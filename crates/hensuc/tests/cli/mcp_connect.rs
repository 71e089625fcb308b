//! `hensuc mcp connect` end to end (docs/mcp.md, *Server mode: `hensuc mcp connect`*): a real
//! `hensuc serve` with JWT authentication and a mock OpenAI-compatible model on 127.0.0.1; the
//! tenant's project offers the repository's example MCP server through the command; an
//! execution of the tenant calls its tool through the gateway and the bridge (the example
//! server's `GLOSSARY_CALL_LOG` counts the call) and completes with the model's answer. Another
//! tenant's id is refused with the server's answer; SIGTERM stops the bridge cleanly.

use std::io::{BufRead as _, BufReader};
use std::path::Path;
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};
use wiremock::MockServer;

use super::journal::{TOOL_WORKFLOW, example_server, mount_tool_loop};
use crate::serve::{ServeProcess, spawn_serve};
use crate::{hensuc, stderr};

/// The server's project: the mock model as its provider, and `extra` (more of hensu.toml).
pub(super) fn server_project(model: &str, extra: &str) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("define.hwf"), TOOL_WORKFLOW).unwrap();
    std::fs::write(
        tmp.path().join("hensu.toml"),
        format!(
            "[providers.local]\nkind = \"openai\"\nbase_url = \"{model}/v1\"\n\
             api_key_env = \"LOCAL_API_KEY\"\nmodels = [\"mock-*\"]\n{extra}"
        ),
    )
    .unwrap();
    tmp
}

/// The tenant's project: the example MCP server, as a local run would start it.
pub(super) fn tenant_project() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("hensu.toml"),
        format!(
            "[mcp.servers.glossary]\ncommand = {:?}\nenv = [\"GLOSSARY_CALL_LOG\"]\n",
            example_server().display().to_string()
        ),
    )
    .unwrap();
    tmp
}

/// `hensuc mcp connect` for `tenant_dir`, its stderr lines arriving on the receiver.
pub(super) fn connect(
    tenant_dir: &Path,
    url: &str,
    token: &str,
    extra: &[&str],
) -> (Child, mpsc::Receiver<String>) {
    let mut child = hensuc()
        .args(["mcp", "connect", "-d"])
        .arg(tenant_dir)
        .args(["--server", url, "--token", token])
        .args(extra)
        .env("GLOSSARY_CALL_LOG", tenant_dir.join("calls.log"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("hensuc mcp connect");
    let (tx, rx) = mpsc::channel();
    let err = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(err).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    (child, rx)
}

/// The next line containing `what` (every line read is kept in `seen`).
pub(super) fn line_with(rx: &mpsc::Receiver<String>, what: &str, seen: &mut Vec<String>) -> String {
    loop {
        match rx.recv_timeout(Duration::from_secs(60)) {
            Ok(line) => {
                seen.push(line.clone());
                if line.contains(what) {
                    return line;
                }
            }
            Err(_) => panic!("no line with `{what}`; the output:\n{}", seen.join("\n")),
        }
    }
}

pub(super) async fn api(
    method: reqwest::Method,
    url: &str,
    tenant: &str,
    body: Option<Value>,
) -> Value {
    let mut req = reqwest::Client::new()
        .request(method, url)
        .bearer_auth(crate::tenant_token(tenant));
    if let Some(b) = body {
        req = req.json(&b);
    }
    req.send().await.unwrap().json().await.unwrap()
}

/// `hensuc serve` (JWT authentication, no stubs) of [`server_project`] with `define` pushed
/// as acme's: the server and its project directory.
pub(super) fn serve_define(model: &str, extra: &str) -> (ServeProcess, tempfile::TempDir) {
    let server_dir = server_project(model, extra);
    let server = spawn_serve(
        hensuc()
            .args(["serve", "--listen", "127.0.0.1:0", "-d"])
            .arg(server_dir.path())
            .env("HENSU_JWT_SECRET", crate::JWT_SECRET)
            .env("LOCAL_API_KEY", "sk-local"),
    );
    let push = hensuc()
        .arg("push")
        .arg(server_dir.path().join("define.hwf"))
        .args([
            "--server",
            &server.url,
            "--token",
            &crate::tenant_token("acme"),
        ])
        .output()
        .unwrap();
    assert!(push.status.success(), "{}", stderr(&push));
    (server, server_dir)
}

/// Starts acme's execution of `define` for `term`; its id.
pub(super) async fn start_define(url: &str, term: &str) -> String {
    let started = api(
        reqwest::Method::POST,
        &format!("{url}/api/v1/executions"),
        "acme",
        Some(json!({"workflowId": "define", "context": {"term": term}})),
    )
    .await;
    started["executionId"].as_str().expect("id").to_string()
}

/// acme's execution `id` once its status is none of `passing` (or after a minute).
pub(super) async fn status_beyond(url: &str, id: &str, passing: &[&str]) -> Value {
    let mut status = Value::Null;
    for _ in 0..600 {
        status = api(
            reqwest::Method::GET,
            &format!("{url}/api/v1/executions/{id}"),
            "acme",
            None,
        )
        .await;
        if !passing.iter().any(|p| status["status"] == *p) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    status
}

/// The `output` of acme's execution `id` (`GET …/result`).
pub(super) async fn output_of(url: &str, id: &str) -> Value {
    api(
        reqwest::Method::GET,
        &format!("{url}/api/v1/executions/{id}/result"),
        "acme",
        None,
    )
    .await["output"]
        .clone()
}

#[tokio::test]
async fn a_servers_run_calls_the_tenants_tool_through_mcp_connect() {
    let model = MockServer::start().await;
    mount_tool_loop(&model, Duration::ZERO).await;
    let (server, _server_dir) = serve_define(&model.uri(), "");
    let tenant_dir = tenant_project();
    let url = server.url.clone();

    // Another tenant's id with acme's token: the gateway's 403, and the command stops.
    let (mut refused, rx) = connect(
        tenant_dir.path(),
        &url,
        &crate::tenant_token("acme"),
        &["--tenant", "globex"],
    );
    let mut seen = Vec::new();
    let line = line_with(&rx, "error:", &mut seen);
    assert!(line.contains("403"), "{line}");
    assert_eq!(refused.wait().unwrap().code(), Some(2));
    assert!(
        !seen
            .iter()
            .any(|l| l.contains(&crate::tenant_token("acme"))),
        "the token is never printed"
    );

    let (mut bridge, rx) = connect(tenant_dir.path(), &url, &crate::tenant_token("acme"), &[]);
    let mut seen = Vec::new();
    let listed = line_with(&rx, "MCP servers started", &mut seen);
    assert!(
        listed.contains("tools lookup_glossary, word_count"),
        "{listed}"
    );
    let connected = line_with(&rx, "connected to", &mut seen);
    assert!(connected.contains("tenant `acme`"), "{connected}");

    let id = start_define(&url, "mcp").await;
    let status = status_beyond(&url, &id, &["queued", "running"]).await;
    assert_eq!(status["status"], "completed", "{status}");
    let output = output_of(&url, &id).await;
    assert_eq!(
        output["definition"], "MCP connects agents to tools.",
        "{output}"
    );
    // The call reached the tenant's server once, and the model's second turn carried its
    // result (the glossary's entry for the model's `{"term": "mcp"}`).
    let calls = std::fs::read_to_string(tenant_dir.path().join("calls.log")).unwrap_or_default();
    assert_eq!(calls.lines().collect::<Vec<_>>(), ["lookup_glossary"]);
    let turns = model.received_requests().await.unwrap();
    assert!(
        turns
            .iter()
            .any(|r| String::from_utf8_lossy(&r.body).contains("Model Context Protocol")),
        "the tool's result reached the model"
    );
    line_with(&rx, "lookup_glossary: answered", &mut seen);

    // SIGTERM: the bridge closes its servers and exits 0.
    let term = std::process::Command::new("kill")
        .args(["-TERM", &bridge.id().to_string()])
        .status()
        .unwrap();
    assert!(term.success());
    line_with(&rx, "stopped", &mut seen);
    assert_eq!(bridge.wait().unwrap().code(), Some(0));
    drop(server);
}

#[test]
fn mcp_connect_needs_servers_to_offer_and_a_server_to_reach() {
    let empty = tempfile::tempdir().unwrap();
    let o = hensuc()
        .args(["mcp", "connect", "-d"])
        .arg(empty.path())
        .args(["--server", "http://127.0.0.1:9"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("declares no MCP server"),
        "{}",
        stderr(&o)
    );
    let tenant = tenant_project();
    let o = hensuc()
        .args(["mcp", "connect", "-d"])
        .arg(tenant.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("no server"), "{}", stderr(&o));
}
