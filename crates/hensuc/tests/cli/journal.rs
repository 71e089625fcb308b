//! The call journal (docs/security.md, *Call journal*), for real: `hensuc run` as a child
//! process against a mock OpenAI-compatible model on 127.0.0.1 and the repository's example
//! MCP server (its `GLOSSARY_CALL_LOG` counts the calls it served), killed with SIGKILL between
//! a tool's result and the model's next turn, then `hensuc resume`: the tool ran once, the
//! model's first turn was replayed, not asked again. Commands: an `unsafe` command started
//! without a recorded result fails its node with E0511 (or pauses the run, resumed by a
//! human), an `idempotent` one runs again with the same `HENSU_IDEMPOTENCY_KEY`; a webhook
//! receives the call's `Idempotency-Key`.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use wiremock::matchers::{body_string_contains, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::*;

/// The example MCP server's binary, built when it is missing or older than its source:
/// `cargo test -p hensuc` does not build another crate's examples.
pub(super) fn example_server() -> PathBuf {
    static BUILT: std::sync::Once = std::sync::Once::new();
    let target = Path::new(env!("CARGO_BIN_EXE_hensuc"))
        .parent()
        .unwrap()
        .to_path_buf();
    let exe = target.join("examples").join("glossary-server");
    let source = repo().join("crates/hensu-mcp/examples/glossary_server.rs");
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    let fresh = matches!((modified(&exe), modified(&source)), (Some(e), Some(s)) if e >= s);
    BUILT.call_once(|| {
        if fresh {
            return;
        }
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let status = std::process::Command::new(cargo)
            .args([
                "build",
                "-q",
                "-p",
                "hensu-mcp",
                "--example",
                "glossary-server",
            ])
            .status()
            .unwrap();
        assert!(status.success(), "building the example server failed");
    });
    exe
}

pub(super) const TOOL_WORKFLOW: &str = r#"workflow("define") {
    state {
        input("term", VarType.STRING)
        variable("definition", VarType.STRING)
    }
    agents {
        agent("explainer") {
            role = "Explainer"
            model = "mock-model"
            tools = listOf("lookup_glossary")
        }
    }
    graph {
        start at "explain"
        node("explain") {
            agent = "explainer"
            prompt = "Explain {term}."
            writes("definition")
            onSuccess goto "done"
        }
        end("done")
    }
}
"#;

pub(super) fn tool_project(model: &str) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::create_dir_all(dir.join("workflows")).unwrap();
    std::fs::write(dir.join("workflows/define.hwf"), TOOL_WORKFLOW).unwrap();
    std::fs::write(
        dir.join("hensu.toml"),
        format!(
            "[providers.local]\nkind = \"openai\"\nbase_url = \"{model}/v1\"\n\
             api_key_env = \"LOCAL_API_KEY\"\nmodels = [\"mock-*\"]\n\n\
             [mcp.servers.glossary]\ncommand = {:?}\nenv = [\"GLOSSARY_CALL_LOG\"]\n\
             tool_policy = {{ lookup_glossary = \"unsafe\" }}\n",
            example_server().display().to_string()
        ),
    )
    .unwrap();
    tmp
}

fn tool_call_answer() -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({
        "id": "c1", "object": "chat.completion", "model": "mock-model",
        "choices": [{"index": 0, "finish_reason": "tool_calls",
            "message": {"role": "assistant", "content": null,
                "tool_calls": [{"id": "call_1", "type": "function",
                    "function": {"name": "lookup_glossary",
                                 "arguments": "{\"term\": \"mcp\"}"}}]}}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}
    }))
}

fn final_answer() -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({
        "id": "c2", "object": "chat.completion", "model": "mock-model",
        "choices": [{"index": 0, "finish_reason": "stop",
            "message": {"role": "assistant", "content": "MCP connects agents to tools."}}],
        "usage": {"prompt_tokens": 9, "completion_tokens": 5, "total_tokens": 14}
    }))
}

/// What the tool's result says (the model's second turn carries it).
const TOOL_RESULT: &str = "Model Context Protocol";

/// Mounts the tool loop's script on `model`: a turn that carries the tool's result gets the
/// final answer (after `second_turn_delay`: a hanging turn lets a test kill the run there),
/// any other turn asks for the tool.
pub(super) async fn mount_tool_loop(model: &MockServer, second_turn_delay: Duration) {
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .and(body_string_contains(TOOL_RESULT))
        .respond_with(final_answer().set_delay(second_turn_delay))
        .with_priority(1)
        .mount(model)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(tool_call_answer())
        .mount(model)
        .await;
}

pub(super) fn newest_run(dir: &Path) -> String {
    let out = hensuc()
        .args(["runs", "-d", ".", "--json"])
        .current_dir(dir)
        .output()
        .unwrap();
    let runs: Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    runs["runs"][0]["run_id"].as_str().unwrap().to_string()
}

fn run_status(dir: &Path, id: &str) -> Value {
    let out = hensuc()
        .args(["runs", "show", id, "-d", ".", "--json"])
        .current_dir(dir)
        .output()
        .unwrap();
    serde_json::from_str(stdout(&out).trim()).unwrap()
}

fn lines(file: &Path) -> Vec<String> {
    std::fs::read_to_string(file)
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

/// Waits (up to a minute) until `ready` holds.
fn wait_until(mut ready: impl FnMut() -> bool, what: &str) {
    let start = Instant::now();
    while !ready() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "timed out: {what}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_tool_result_journaled_before_a_kill_is_replayed_not_called_again() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let model = runtime.block_on(async {
        let server = MockServer::start().await;
        // The second turn (it carries the tool's result) hangs: the kill lands there.
        mount_tool_loop(&server, Duration::from_secs(120)).await;
        server
    });
    let requests = || runtime.block_on(model.received_requests()).unwrap();
    let tmp = tool_project(&model.uri());
    let dir = tmp.path();
    let calls = dir.join("calls.log");
    let command = |args: &[&str]| {
        let mut c = hensuc();
        c.args(args)
            .current_dir(dir)
            .env("LOCAL_API_KEY", "sk-local")
            .env("GLOSSARY_CALL_LOG", &calls);
        c
    };
    let log = std::fs::File::create(dir.join("run.log")).unwrap();
    let mut child = command(&["run", "define", "-d", ".", "-c", r#"{"term": "mcp"}"#])
        .stdout(std::process::Stdio::null())
        .stderr(log)
        .spawn()
        .unwrap();
    // The model's second turn is asked only once the tool's result is journaled.
    wait_until(|| requests().len() >= 2, "the model's second turn");
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let run_log = std::fs::read_to_string(dir.join("run.log")).unwrap();
    assert_eq!(
        lines(&calls),
        ["lookup_glossary"],
        "the tool ran once: {run_log}"
    );
    let id = newest_run(dir);
    let shown = run_status(dir, &id);
    let kinds: Vec<&str> = shown["history"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds.iter().filter(|k| **k == "journal").count(),
        3,
        "the model's first answer, the tool's start and its result: {kinds:?}"
    );

    // The model now answers the second turn at once.
    runtime.block_on(async {
        model.reset().await;
        mount_tool_loop(&model, Duration::ZERO).await;
    });
    let events = dir.join("events.jsonl");
    let events_arg = events.to_str().unwrap();
    let out = command(&["resume", &id, "-d", ".", "--events", events_arg])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        lines(&calls),
        ["lookup_glossary"],
        "the tool was not called again"
    );
    // The replayed call is a `tool_call` event of the resumed run, started and finished.
    let schemas = crate::json_schemas::Schemas::load();
    let events_schema = schemas.validator("events.schema.json");
    let mut tool_events = Vec::new();
    for line in lines(&events) {
        let e: Value = serde_json::from_str(&line).unwrap();
        crate::json_schemas::assert_valid(&events_schema, "events.schema.json", "--events", &e);
        if e["event"] == "tool_call" {
            tool_events.push(e);
        }
    }
    assert_eq!(tool_events.len(), 2, "{tool_events:?}");
    assert_eq!(tool_events[1]["phase"], "finished");
    assert_eq!(tool_events[1]["replayed"], true);
    assert_eq!(tool_events[1]["tool"], "lookup_glossary");
    let asked = requests();
    assert_eq!(asked.len(), 1, "only the model's second turn was asked");
    assert!(String::from_utf8_lossy(&asked[0].body).contains(TOOL_RESULT));
    let shown = run_status(dir, &id);
    assert_eq!(shown["record"]["status"], "completed", "{shown}");
    assert_eq!(shown["path"], json!(["explain"]), "{shown}");
    // `hensuc attach` names each journaled call, never its result.
    let attached = command(&["attach", &id, "-d", "."]).output().unwrap();
    let text = stdout(&attached);
    assert!(
        text.contains("explain call 1: tool `lookup_glossary` finished"),
        "{text}"
    );
    assert!(!text.contains(TOOL_RESULT), "{text}");
    // `runs show --json` with journal rows still matches its schema.
    let validator = schemas.validator("runs-show.schema.json");
    crate::json_schemas::assert_valid(&validator, "runs-show.schema.json", "runs show", &shown);
}

const COMMAND_WORKFLOW: &str = r#"workflow("book") {
    graph {
        start at "book"
        action("book") {
            execute("book")
            onSuccess goto "done"
            onFailure goto "failed"
        }
        end("done")
        end("failed", ExitStatus.FAILURE)
    }
}
"#;

/// A project whose `book` command logs its idempotency key, then waits while `slow` exists.
fn command_project(policy: &str) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::create_dir_all(dir.join("workflows")).unwrap();
    std::fs::write(dir.join("workflows/book.hwf"), COMMAND_WORKFLOW).unwrap();
    std::fs::write(
        dir.join("commands.yaml"),
        format!(
            "commands:\n  book:\n    command: 'echo \"$HENSU_IDEMPOTENCY_KEY\" >> keys.log; \
             while [ -f slow ]; do sleep 0.05; done; echo booked'\n    timeout: 60000\n{policy}"
        ),
    )
    .unwrap();
    std::fs::write(dir.join("slow"), "").unwrap();
    tmp
}

/// Runs `book` and kills it (SIGKILL) while its command runs; returns the run id.
fn kill_during_command(dir: &Path) -> String {
    let mut child = hensuc()
        .args(["run", "book", "-d", "."])
        .current_dir(dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    wait_until(|| !lines(&dir.join("keys.log")).is_empty(), "the command");
    child.kill().unwrap();
    child.wait().unwrap();
    std::fs::remove_file(dir.join("slow")).unwrap();
    newest_run(dir)
}

fn resume(dir: &Path, id: &str) -> std::process::Output {
    hensuc()
        .args(["resume", id, "-d", "."])
        .current_dir(dir)
        .output()
        .unwrap()
}

#[test]
fn an_unsafe_command_started_without_a_result_fails_its_node_with_e0511() {
    let tmp = command_project("");
    let dir = tmp.path();
    let id = kill_during_command(dir);
    let out = resume(dir, &id);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("E0511"), "{err}");
    assert!(
        stdout(&out).contains("workflow ended at `failed`"),
        "{}",
        stdout(&out)
    );
    assert_eq!(lines(&dir.join("keys.log")).len(), 1, "not run again");
}

#[test]
fn an_unsafe_command_declared_pause_holds_the_run_until_a_human_resumes_it() {
    let tmp = command_project("    policy: unsafe\n    on_interrupted: pause\n");
    let dir = tmp.path();
    let id = kill_during_command(dir);
    let out = resume(dir, &id);
    assert_eq!(out.status.code(), Some(3), "paused: {}", stderr(&out));
    assert_eq!(run_status(dir, &id)["record"]["status"], "paused");
    assert_eq!(lines(&dir.join("keys.log")).len(), 1, "held, not run");
    // The human's go-ahead: resuming issues the call again, with the same key.
    let out = resume(dir, &id);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(run_status(dir, &id)["record"]["status"], "completed");
    let keys = lines(&dir.join("keys.log"));
    assert_eq!(keys.len(), 2, "{keys:?}");
    assert_eq!(keys[0], keys[1]);
}

#[test]
fn an_idempotent_command_runs_again_with_the_same_idempotency_key() {
    let tmp = command_project("    policy: idempotent\n");
    let dir = tmp.path();
    let id = kill_during_command(dir);
    let out = resume(dir, &id);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let keys = lines(&dir.join("keys.log"));
    assert_eq!(keys.len(), 2, "{keys:?}");
    assert_eq!(keys[0], keys[1], "one key for both runs of the call");
    assert!(keys[0].starts_with(&format!("hensu:{id}:")), "{keys:?}");
    let shown = run_status(dir, &id);
    assert_eq!(shown["record"]["status"], "completed");
}

#[test]
fn a_webhook_receives_the_calls_idempotency_key() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let hook = runtime.block_on(async {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .and(path("/hook"))
            .respond_with(ResponseTemplate::new(200).set_body_string("ok"))
            .mount(&server)
            .await;
        server
    });
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::create_dir_all(dir.join("workflows")).unwrap();
    // A run without a model is offline unless the project allows the host.
    std::fs::write(
        dir.join("hensu.toml"),
        "[network]\nallow_hosts = [\"127.0.0.1\"]\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("workflows/notify.hwf"),
        format!(
            r#"workflow("notify") {{
    graph {{
        start at "notify"
        action("notify") {{
            send("webhook", mapOf("url" to "{}/hook", "text" to "hello"))
            send("webhook", mapOf("url" to "{}/hook", "text" to "again"))
            onSuccess goto "done"
        }}
        end("done")
    }}
}}
"#,
            hook.uri(),
            hook.uri()
        ),
    )
    .unwrap();
    let out = hensuc()
        .args(["run", "notify", "-d", "."])
        .current_dir(dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let id = newest_run(dir);
    let keys: Vec<String> = runtime
        .block_on(hook.received_requests())
        .unwrap()
        .iter()
        .map(|r| {
            r.headers
                .get("idempotency-key")
                .expect("an Idempotency-Key header")
                .to_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(keys.len(), 2);
    assert!(keys[0].starts_with(&format!("hensu:{id}:")), "{keys:?}");
    assert!(
        keys[0].ends_with(":0") && keys[1].ends_with(":1"),
        "{keys:?}"
    );
}

#[test]
fn check_warns_about_tools_without_a_declared_call_policy() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::create_dir_all(dir.join("workflows")).unwrap();
    std::fs::write(dir.join("workflows/define.hwf"), TOOL_WORKFLOW).unwrap();
    let check = |toml: &str| {
        std::fs::write(dir.join("hensu.toml"), toml).unwrap();
        let out = hensuc()
            .args(["check", "-d", ".", "--format", "json"])
            .current_dir(dir)
            .output()
            .unwrap();
        stdout(&out)
    };
    let server = "[mcp.servers.glossary]\ncommand = \"glossary-server\"\n";
    let out = check(server);
    assert!(out.contains("W0332"), "{out}");
    assert!(out.contains("lookup_glossary"), "{out}");
    let human = hensuc()
        .args(["check", "-d", "."])
        .current_dir(dir)
        .output()
        .unwrap();
    insta::assert_snapshot!(stderr(&human));
    let out = check(&format!(
        "{server}tool_policy = {{ lookup_glossary = \"idempotent\" }}\n"
    ));
    assert!(!out.contains("W0332"), "{out}");
    let out = check(&format!("{server}policy = \"unsafe\"\n"));
    assert!(!out.contains("W0332"), "{out}");
}

/// The same on PostgreSQL after a takeover: a worker is killed (SIGKILL) between the tool's
/// result and the model's next turn, another worker takes the run over once the lease
/// expired, and the tool server saw the call once.
#[test]
#[ignore = "needs HENSU_TEST_DATABASE_URL (scripts/pg-test.sh)"]
fn a_taken_over_run_replays_the_tool_result_on_postgresql() {
    use hensu_store::{ClaimNote, LogKind, StateStore};
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let model = runtime.block_on(async {
        let server = MockServer::start().await;
        mount_tool_loop(&server, Duration::from_secs(120)).await;
        server
    });
    let requests = || runtime.block_on(model.received_requests()).unwrap();
    let tmp = tool_project(&model.uri());
    let dir = tmp.path();
    let calls = dir.join("calls.log");
    let (store, url) = crate::pg_schema();
    let command = |args: &[&str]| {
        let mut c = hensuc();
        c.args(args)
            .current_dir(dir)
            .env("LOCAL_API_KEY", "sk-local")
            .env("GLOSSARY_CALL_LOG", &calls)
            .env("HENSU_DATABASE_URL", &url)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        c
    };
    let worker = || {
        command(&[
            "worker",
            "--lease-ttl",
            "2s",
            "--heartbeat",
            "300ms",
            "--poll",
            "100ms",
            "-d",
            ".",
            "--store",
            &url,
        ])
        .spawn()
        .unwrap()
    };
    let queued = command(&[
        "run",
        "define",
        "--detach",
        "-d",
        ".",
        "-c",
        r#"{"term": "mcp"}"#,
    ])
    .status()
    .unwrap();
    assert!(queued.success());
    let mut first = worker();
    wait_until(|| requests().len() >= 2, "the model's second turn");
    first.kill().unwrap(); // SIGKILL
    first.wait().unwrap();
    assert_eq!(lines(&calls), ["lookup_glossary"]);
    runtime.block_on(async {
        model.reset().await;
        mount_tool_loop(&model, Duration::ZERO).await;
    });
    let mut second = worker();
    let run = || crate::wait(store.list()).unwrap().remove(0);
    wait_until(|| run().status.is_terminal(), "the taken-over run's end");
    second.kill().unwrap();
    second.wait().unwrap();
    let record = run();
    assert_eq!(
        record.status,
        hensu_store::RunStatus::Completed,
        "{record:?}"
    );
    assert_eq!(
        lines(&calls),
        ["lookup_glossary"],
        "the tool was not called again"
    );
    let asked = requests();
    assert_eq!(asked.len(), 1, "only the model's second turn was asked");
    let log = crate::wait(store.read_log(&record.run_id, 0, 1_000)).unwrap();
    let took_over = log
        .iter()
        .filter(|e| e.meta.kind == LogKind::Claimed)
        .filter_map(|e| serde_json::from_value::<ClaimNote>(e.output.clone()?).ok())
        .any(|n| n.taken_over_from.is_some());
    assert!(took_over, "a takeover was logged");
    assert!(log.iter().any(|e| e.meta.kind == LogKind::Journal));
}

/// `hensuc redrive` is the way on after E0511: the fork starts before the failed node, without
/// the calls its failed visit journaled, so the command runs again (under the fork's key).
#[test]
fn a_redrive_after_e0511_runs_the_command_again() {
    let tmp = command_project("");
    let dir = tmp.path();
    // Without an `onFailure` route the node's failure fails the run.
    let wf = COMMAND_WORKFLOW.replace("            onFailure goto \"failed\"\n", "");
    std::fs::write(dir.join("workflows/book.hwf"), wf).unwrap();
    let id = kill_during_command(dir);
    let out = resume(dir, &id);
    assert!(stderr(&out).contains("E0511"), "{}", stderr(&out));
    assert_eq!(run_status(dir, &id)["record"]["status"], "failed");
    let out = hensuc()
        .args(["redrive", &id, "-d", "."])
        .current_dir(dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let child = newest_run(dir);
    assert_ne!(child, id);
    assert_eq!(run_status(dir, &child)["record"]["status"], "completed");
    let keys = lines(&dir.join("keys.log"));
    assert_eq!(keys.len(), 2, "{keys:?}");
    assert!(keys[1].starts_with(&format!("hensu:{child}:")), "{keys:?}");
}
