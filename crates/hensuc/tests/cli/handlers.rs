//! Declared action handlers (docs/mcp.md, *Declared action handlers*): `send("slack", …)` is
//! E0210 until `[handlers.slack]` declares it (or the project is served, forwarding unknown
//! handlers to the tenant's MCP tools); a declared webhook is POSTed with its headers from the
//! environment, its response body is the action's result, and the header's value reaches no
//! output.

use wiremock::matchers::{body_json, header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::*;

const WORKFLOW: &str = r#"fun notify() = workflow("notify") {
    state {
        input("topic", VarType.STRING)
        variable("ts", VarType.STRING)
    }
    graph {
        start at "post"
        action("post") {
            send("slack", mapOf("text" to "Published {topic}"))
            writes("ts")
            onSuccess goto "done"
            onFailure goto "failed"
        }
        end("done")
        end("failed", ExitStatus.FAILURE)
    }
}
"#;

fn project(dir: &Path, toml: &str) {
    std::fs::create_dir_all(dir.join("workflows")).unwrap();
    std::fs::write(dir.join("workflows/notify.hwf"), WORKFLOW).unwrap();
    std::fs::write(dir.join("hensu.toml"), toml).unwrap();
}

#[test]
fn an_undeclared_handler_is_e0210_unless_declared_or_served() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let d = dir.to_str().unwrap();
    project(dir, "");
    let out = run_hensuc(&["check", "-d", d]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("E0210"), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("[handlers.slack]"),
        "{}",
        stderr(&out)
    );

    project(
        dir,
        "[handlers.slack]\nurl = \"https://hooks.example.com/x\"\nheaders = { Authorization = \"SLACK_AUTH\" }\n",
    );
    let out = run_hensuc(&["check", "--deny-warnings", "-d", d]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));

    // Served by `hensuc serve`: an unknown handler goes to the tenant's MCP tools.
    project(dir, "[server]\nlisten = \"127.0.0.1:9000\"\n");
    let out = run_hensuc(&["check", "--deny-warnings", "-d", d]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

#[test]
fn a_declared_webhook_posts_with_headers_from_the_environment() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(async {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .and(path("/hook"))
            .and(header("Authorization", "Bearer s3cr3t-value"))
            .and(body_json(serde_json::json!({"text": "Published Rust"})))
            .respond_with(
                ResponseTemplate::new(200).set_body_string(r#"{"ok": true, "ts": "17.5"}"#),
            )
            .expect(1)
            .mount(&server)
            .await;
        server
    });
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let d = dir.to_str().unwrap();
    project(
        dir,
        &format!(
            "[handlers.slack]\nurl = \"{}/hook\"\nheaders = {{ Authorization = \"SLACK_AUTH\" }}\n\n[network]\nallow_hosts = [\"127.0.0.1\"]\n",
            server.uri()
        ),
    );
    let events = dir.join("events.jsonl");
    let out = hensuc()
        .env("SLACK_AUTH", "Bearer s3cr3t-value")
        .args(["run", "notify", "-d", d, "--stub", "--no-store"])
        .args(["-c", r#"{"topic": "Rust"}"#, "--events"])
        .arg(&events)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let shown = format!(
        "{}{}{}",
        stdout(&out),
        stderr(&out),
        std::fs::read_to_string(&events).unwrap()
    );
    assert!(shown.contains("ts = 17.5"), "{shown}");
    assert!(!shown.contains("s3cr3t"), "{shown}");
    runtime.block_on(server.verify());

    // Without the variable the action fails, naming the variable, not a value.
    let out = hensuc()
        .args(["run", "notify", "-d", d, "--stub", "--no-store"])
        .args(["-c", r#"{"topic": "Rust"}"#])
        .output()
        .unwrap();
    assert!(stderr(&out).contains("`SLACK_AUTH`"), "{}", stderr(&out));
}

/// The worked example's `send("slack", …)` compiles once the project declares the handler.
#[test]
fn the_worked_example_compiles_with_a_declared_slack_handler() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::create_dir_all(dir.join("workflows")).unwrap();
    std::fs::copy(
        repo()
            .join("crates/hensu-sema/tests/fixtures/sema/lower/ok/worked-example-mini-review.hwf"),
        dir.join("workflows/mini-review.hwf"),
    )
    .unwrap();
    let d = dir.to_str().unwrap();
    let out = run_hensuc(&["check", "-d", d]);
    assert!(stderr(&out).contains("E0210"), "{}", stderr(&out));
    std::fs::write(
        dir.join("hensu.toml"),
        "[handlers.slack]\nmcp = { tool = \"slack_post\" }\n",
    )
    .unwrap();
    let out = run_hensuc(&["check", "-d", d]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!stderr(&out).contains("E0210"), "{}", stderr(&out));
}

/// `hensuc test` registers the declared handlers too, simulated like a stub run's webhook
/// (no request leaves the machine), and the simulated answer is the action's result.
#[test]
fn hensuc_test_runs_declared_handlers_offline() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let d = dir.to_str().unwrap();
    project(
        dir,
        "[handlers.slack]\nurl = \"https://hooks.example.com/x\"\n",
    );
    std::fs::create_dir_all(dir.join("tests")).unwrap();
    std::fs::write(
        dir.join("tests/notify.test.toml"),
        "workflow = \"notify\"\n[context]\ntopic = \"Rust\"\n[expect]\nend = \"done\"\n[expect.outputs]\nts = { contains = \"simulated (offline run)\" }\n",
    )
    .unwrap();
    // `--update` writes the trace snapshot; the expectations are checked all the same.
    let out = run_hensuc(&["test", "-d", d, "--update"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    assert!(
        stdout(&out).ends_with("1 passed, 0 failed\n"),
        "{}",
        stdout(&out)
    );
}

/// A declared forward to an MCP tool: the payload is the tool's arguments and the tool's
/// result JSON is the action's result, extracted into `writes` (here the tool is a stub
/// script of the scenario, `stubs/default/tools/web_search.json`).
#[test]
fn a_declared_mcp_forward_feeds_writes_with_the_tool_result() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let d = dir.to_str().unwrap();
    std::fs::create_dir_all(dir.join("workflows")).unwrap();
    std::fs::create_dir_all(dir.join("stubs/default/tools")).unwrap();
    std::fs::write(
        dir.join("stubs/default/tools/web_search.json"),
        r#"{"hits": ["a.example", "b.example"]}"#,
    )
    .unwrap();
    std::fs::write(
        dir.join("hensu.toml"),
        "[handlers.search]\nmcp = { tool = \"web_search\" }\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("workflows/find.hwf"),
        r#"fun find() = workflow("find") {
    state {
        input("q", VarType.STRING)
        variable("hits", VarType.LIST_STRING)
    }
    graph {
        start at "search"
        action("search") {
            send("search", mapOf("query" to "{q}"))
            writes("hits")
            onSuccess goto "done"
            onFailure goto "failed"
        }
        end("done")
        end("failed", ExitStatus.FAILURE)
    }
}
"#,
    )
    .unwrap();
    let check = run_hensuc(&["check", "--deny-warnings", "-d", d]);
    assert_eq!(check.status.code(), Some(0), "{}", stderr(&check));
    let out = run_hensuc(&[
        "run",
        "find",
        "-d",
        d,
        "--stub",
        "--no-store",
        "-c",
        r#"{"q": "rust"}"#,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let shown = stderr(&out) + &stdout(&out);
    assert!(shown.contains("workflow ended at `done`"), "{shown}");
    assert!(shown.contains("a.example"), "{shown}");
}
